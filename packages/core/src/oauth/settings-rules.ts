/**
 * The startup rules of an OAuth 2.0 vendor slot's settings (auth-contract.md, "Providers:VendorA,
 * Providers:VendorB, Providers:VendorC"), for one enabled slot. Each problem names the full colon
 * path and never a configured value.
 */
import { checkEndpointUrl, isMissing, requiredKeys } from '../config/rules.js'
import { keyOfInstance, type SettingsRule } from '../config/provider-type.js'
import type { VendorInstance } from './settings-schema.js'

export const vendorSettingsRule: SettingsRule<VendorInstance> = (instance, environmentName) => {
  const vendor = instance.settings
  const problems = requiredKeys(instance, {
    ClientId: vendor.ClientId,
    ClientSecret: vendor.ClientSecret,
    AuthorizationEndpoint: vendor.AuthorizationEndpoint,
    TokenEndpoint: vendor.TokenEndpoint,
    UserInformationEndpoint: vendor.UserInformationEndpoint
  })
  for (const key of ['AuthorizationEndpoint', 'TokenEndpoint', 'UserInformationEndpoint', 'EmailsEndpoint'] as const) {
    if (!isMissing(vendor[key])) problems.push(...checkEndpointUrl(vendor[key], keyOfInstance(instance, key), environmentName))
  }
  return problems
}
