/**
 * Every provider the configuration declares, as one list: the contract sections
 * (`Authentication:Providers:<Name>`, their historical names and paths) and the named schemes
 * (`Authentication:Schemes:<Name>`), each built by its type's registration (provider-types.ts).
 * Each entry names its protocol, its settings and the colon path of its section, so startup
 * rules, the registration of handlers, the configuration summary and readiness all read the same
 * list. Plain data.
 */
import { keyOfInstance, type ProviderInstanceBase } from '../config/provider-type.js'
import { ROOT_KEY } from '../config/schema.js'
import type { ApplicationConfiguration, SchemeConfiguration } from './application-schema.js'
import { PROVIDER_NAMES, PROVIDER_TYPES, providerTypeOf, type ProviderInstance, type ProviderProtocol } from './provider-types.js'

export { keyOfInstance }
export { signsIn } from './provider-types.js'
export type { ProviderInstance, ProviderInstanceBase, ProviderProtocol }
export type { Saml2InstanceSettings } from '../saml2/settings-schema.js'
export type { JwtBearerSettingsOfInstance } from '../bearer/settings-schema.js'
export { SAML2_LOGOUT_PATH, SAML2_METADATA_PATH } from '../saml2/settings-schema.js'
export { isVendorName } from '../oauth/settings-schema.js'

function contractInstances (config: ApplicationConfiguration, rootKey: string): ProviderInstance[] {
  const providers = config.Authentication.Providers
  const base = (name: string): ProviderInstanceBase => ({ scheme: name, keyPrefix: `${rootKey}:Authentication:Providers:${name}`, contract: true })
  return Object.values(PROVIDER_TYPES).flatMap((type): ProviderInstance[] => (type.contractInstances as (sections: typeof providers, at: typeof base) => ProviderInstance[])(providers, base))
}

/**
 * The instance of the named scheme `name` (`<Root>:Authentication:Schemes:<Name>` under `rootKey`),
 * its protocol the one its Type names.
 */
export function namedSchemeInstance (name: string, section: SchemeConfiguration, rootKey: string): ProviderInstance {
  const base: ProviderInstanceBase = { scheme: name, keyPrefix: `${rootKey}:Authentication:Schemes:${name}`, contract: false }
  const named = providerTypeOf(section.Type).namedScheme as { instance: (name: string, section: SchemeConfiguration, base: ProviderInstanceBase) => ProviderInstance }
  return named.instance(name, section, base)
}

function namedInstances (config: ApplicationConfiguration, rootKey: string): ProviderInstance[] {
  return Object.entries(config.Authentication.Schemes).map(([name, section]) => namedSchemeInstance(name, section, rootKey))
}

/** Every declared provider, enabled or not: the contract sections in their order, then the named schemes. @public @experimental */
export function providerInstancesOf (config: ApplicationConfiguration): ProviderInstance[] {
  return providerInstancesUnder(config, ROOT_KEY)
}

/** {@link providerInstancesOf}, each `keyPrefix` under the application's `rootKey`. */
export function providerInstancesUnder (config: ApplicationConfiguration, rootKey: string): ProviderInstance[] {
  return [...contractInstances(config, rootKey), ...namedInstances(config, rootKey)]
}

/** The providers whose Enabled is true (whatever Authentication:Enabled says). @public @experimental */
export function enabledProviderInstances (config: ApplicationConfiguration): ProviderInstance[] {
  return enabledProviderInstancesUnder(config, ROOT_KEY)
}

/** {@link enabledProviderInstances}, each `keyPrefix` under the application's `rootKey`. */
export function enabledProviderInstancesUnder (config: ApplicationConfiguration, rootKey: string): ProviderInstance[] {
  return providerInstancesUnder(config, rootKey).filter((instance) => instance.settings.Enabled)
}

/**
 * The colon path of the section that configures `scheme` under `rootKey`: a contract provider's
 * `Authentication:Providers:<Name>`, else the named scheme's `Authentication:Schemes:<Name>`.
 */
export function sectionKeyOf (scheme: string, rootKey: string): string {
  return `${rootKey}:Authentication:${(PROVIDER_NAMES as readonly string[]).includes(scheme) ? 'Providers' : 'Schemes'}:${scheme}`
}
