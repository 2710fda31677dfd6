/**
 * The SAML2 provider type's registration (config/provider-type.ts): its schema
 * (settings-schema.ts), its rule (settings-rules.ts), its instances and the paths they serve.
 * Listed once in providers/provider-types.ts; opened by plugins/providers/saml2.ts.
 */
import { keyOfInstance, type ProviderType } from '../config/provider-type.js'
import { saml2SettingsRule } from './settings-rules.js'
import { SAML2_LOGOUT_PATH, SAML2_METADATA_PATH, Saml2Schema, Saml2SchemeSchema, saml2SchemePaths, type Saml2Instance } from './settings-schema.js'

export const saml2Type: ProviderType<Saml2Instance, { Saml2: typeof Saml2Schema }, typeof Saml2SchemeSchema> = {
  protocol: 'Saml2',
  sections: { Saml2: Saml2Schema },
  contractInstances: (providers, base) => [{ ...base('Saml2'), protocol: 'Saml2', settings: { ...providers.Saml2, MetadataPath: SAML2_METADATA_PATH, LogoutPath: SAML2_LOGOUT_PATH } }],
  namedScheme: {
    schema: Saml2SchemeSchema,
    defaultPaths: saml2SchemePaths,
    instance: (name, section, base) => {
      const { Type: _type, ...settings } = section
      return { ...base, protocol: 'Saml2', settings: { ...settings, Scheme: name } }
    }
  },
  rule: saml2SettingsRule,
  signsIn: true,
  // The contract Saml2's metadata and logout paths are reserved instead (providers/configuration-rules.ts RESERVED_PATHS).
  endpointPaths: (instance) => {
    const at = (key: string, path: string): { key: string, path: string } => ({ key: keyOfInstance(instance, key), path })
    return instance.contract
      ? [at('ModulePath', instance.settings.ModulePath)]
      : [at('ModulePath', instance.settings.ModulePath), at('MetadataPath', instance.settings.MetadataPath), at('LogoutPath', instance.settings.LogoutPath)]
  }
}
