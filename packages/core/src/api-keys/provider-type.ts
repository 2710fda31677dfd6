/**
 * The ApiKey scheme type's registration (config/provider-type.ts), in the shape every provider
 * type has: named schemes only (settings-schema.ts), its rule (settings-rules.ts); it signs no one
 * in and serves no path of its own (the key pages are built-in pages).
 *
 * **Not listed in providers/provider-types.ts yet.** Listing it makes configuration accept
 * `Type: ApiKey` and asks for its opening in plugins/providers/open-provider.ts; until the request
 * path authenticates keys (the request-credential seam of issue 43), an accepted scheme would
 * silently do nothing. Three things the provider-type shape does not say, which the integrator
 * adds when listing it (docs/guides/api-keys.md, "What is wired"):
 * - an ApiKey scheme is never a provider-source definition (keys are issued by this app; a
 *   runtime definition of Type ApiKey must be refused by providers/runtime-definitions.ts);
 * - its opening needs the app's API key store and state pub/sub, not an issuer;
 * - the rule across schemes ({@link apiKeyPrefixProblems}) belongs in
 *   providers/configuration-rules.ts beside the JwtBearer routing rule.
 */
import type { ProviderType } from '../config/provider-type.js'
import { apiKeySettingsRule } from './settings-rules.js'
import { ApiKeySchemeSchema, defaultApiKeyPrefix, type ApiKeyInstance } from './settings-schema.js'

export { apiKeyPrefixProblems } from './settings-rules.js'

/** The application name of an instance: the first segment of its colon path (`ProjectTemplate:Authentication:...`). */
const applicationNameOf = (keyPrefix: string): string => keyPrefix.split(':')[0] ?? ''

export const apiKeyType: ProviderType<ApiKeyInstance, Record<never, never>, typeof ApiKeySchemeSchema> = {
  protocol: 'ApiKey',
  sections: {},
  contractInstances: () => [],
  namedScheme: {
    schema: ApiKeySchemeSchema,
    // An ApiKey scheme owns no path: keys authenticate API calls on the app's own routes.
    defaultPaths: () => ({}),
    instance: (name, section, base) => {
      const { Type: _type, ...settings } = section
      const prefix = settings.Prefix === '' ? defaultApiKeyPrefix(applicationNameOf(base.keyPrefix)) : settings.Prefix
      return { ...base, protocol: 'ApiKey', settings: { ...settings, Scheme: name, Prefix: prefix, DisplayName: settings.DisplayName === '' ? name : settings.DisplayName } }
    }
  },
  rule: apiKeySettingsRule,
  signsIn: false,
  endpointPaths: () => []
}
