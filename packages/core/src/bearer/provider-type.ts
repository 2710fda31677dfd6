/**
 * The JwtBearer provider type's registration (config/provider-type.ts): named schemes and the
 * shared `Authentication:Bearer` section (settings-schema.ts), its rule (settings-rules.ts); it
 * signs no one in and serves no path of its own. Listed once in providers/provider-types.ts; opened by plugins/providers/jwt-bearer.ts.
 */
import type { ProviderType } from '../config/provider-type.js'
import { jwtBearerSettingsRule } from './settings-rules.js'
import { BearerSectionSchema, JwtBearerSchemeSchema, type JwtBearerInstance } from './settings-schema.js'

export const jwtBearerType: ProviderType<JwtBearerInstance, Record<never, never>, typeof JwtBearerSchemeSchema, { Bearer: typeof BearerSectionSchema }> = {
  protocol: 'JwtBearer',
  sections: {},
  authenticationSections: { Bearer: BearerSectionSchema },
  contractInstances: () => [],
  namedScheme: {
    schema: JwtBearerSchemeSchema,
    // A bearer scheme owns no path: it authenticates API calls on the app's own routes.
    defaultPaths: () => ({}),
    instance: (name, section, base) => {
      const { Type: _type, ...settings } = section
      return { ...base, protocol: 'JwtBearer', settings: { ...settings, Scheme: name } }
    }
  },
  rule: jwtBearerSettingsRule,
  signsIn: false,
  endpointPaths: () => []
}
