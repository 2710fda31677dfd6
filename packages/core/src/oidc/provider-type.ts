/**
 * The OpenID Connect provider type's registration (config/provider-type.ts): its schema
 * (settings-schema.ts), its rule (settings-rules.ts), its instances and the paths they serve.
 * Listed once in providers/provider-types.ts; opened by plugins/providers/openid-connect.ts.
 */
import { keyOfInstance, type ProviderType } from '../config/provider-type.js'
import { openIdConnectSettingsRule } from './settings-rules.js'
import { OpenIdConnectSchema, OpenIdConnectSchemeSchema, openIdConnectSchemePaths, type OpenIdConnectInstance } from './settings-schema.js'

export const openIdConnectType: ProviderType<OpenIdConnectInstance, { OpenIdConnect: typeof OpenIdConnectSchema }, typeof OpenIdConnectSchemeSchema> = {
  protocol: 'OpenIdConnect',
  sections: { OpenIdConnect: OpenIdConnectSchema },
  contractInstances: (providers, base) => [{ ...base('OpenIdConnect'), protocol: 'OpenIdConnect', settings: providers.OpenIdConnect }],
  namedScheme: {
    schema: OpenIdConnectSchemeSchema,
    defaultPaths: openIdConnectSchemePaths,
    instance: (name, section, base) => {
      const { Type: _type, ...settings } = section
      return { ...base, protocol: 'OpenIdConnect', settings: { ...settings, Scheme: name } }
    }
  },
  rule: openIdConnectSettingsRule,
  signsIn: true,
  endpointPaths: (instance) => {
    const at = (key: string, path: string): { key: string, path: string } => ({ key: keyOfInstance(instance, key), path })
    const oidc = instance.settings
    return [
      at('CallbackPath', oidc.CallbackPath),
      ...(oidc.SignOutAtProvider ? [at('SignedOutCallbackPath', oidc.SignedOutCallbackPath)] : []),
      ...(oidc.BackChannelLogout ? [at('BackChannelLogoutPath', oidc.BackChannelLogoutPath)] : [])
    ]
  }
}
