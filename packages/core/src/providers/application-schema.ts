/**
 * The application schema, composed: the core's sections (config/schema.ts) with the sections of
 * every provider type (provider-types.ts `PROVIDER_TYPES`, each type's schema in its own folder).
 * The configuration's TypeScript types, the JSON Schema (`appsettings.schema.json`), binding and
 * the configuration reference all come from it. config/ knows none of the provider types; this
 * is the one place they meet it.
 */
import { Type, type Static, type TObject } from '@sinclair/typebox'
import {
  applicationSchemaUnder, applicationSchemaWith, authenticationSchemaWith, AuthorizationSchema, jsonSchemaOf, namedSchemesSchema, ROOT_KEY
} from '../config/schema.js'
import { rootKeyOf } from '../application-name.js'
import { isSecretKeyOf, type ConfigurationSchemas, type LoadedConfigurationOf } from '../config/load.js'
import type { Rule, RuleContext } from '../config/rules.js'
import { NamedSchemes, type NamedSchemeEntry } from '../config/schemes.js'
import { AUTHENTICATION_SECTIONS, defaultPathsOf, PROVIDER_NAMES, PROVIDER_SECTIONS, RESERVED_SCHEME_NAMES, SCHEME_SCHEMAS, SCHEME_TYPES, providerTypeOf, type SchemeType } from './provider-types.js'

/** @public */
export const AuthenticationSchema = authenticationSchemaWith({
  providerNames: PROVIDER_NAMES,
  providers: PROVIDER_SECTIONS,
  schemes: namedSchemesSchema(SCHEME_SCHEMAS, 'Extension. Named providers beside the contract sections: Schemes:<Name> with Type (OpenIdConnect, Saml2, JwtBearer or ApiKey) and that type\'s keys; <Name> is the scheme (/External/Challenge?provider=<Name> for the sign-in types; JwtBearer and ApiKey schemes authenticate API calls only). Paths default from the name. docs/providers/several-providers.md.'),
  sections: AUTHENTICATION_SECTIONS
})

/** @public */
export const ApplicationSchema = applicationSchemaWith(AuthenticationSchema)

export const ConfigurationSchema = Type.Object({
  [ROOT_KEY]: ApplicationSchema
}, { additionalProperties: true, default: {} })

const applicationSchemas = new Map<string, typeof ApplicationSchema>([[ROOT_KEY, ApplicationSchema]])

/**
 * {@link ApplicationSchema} for the application `rootKey`: the same keys and types; the one
 * default derived from the name, `State:Redis:KeyPrefix` (`<Name>:`), follows it.
 */
export function applicationSchemaFor (rootKey: string): typeof ApplicationSchema {
  const known = applicationSchemas.get(rootKey)
  if (known !== undefined) return known
  const schema = applicationSchemaUnder(ApplicationSchema, rootKey)
  applicationSchemas.set(rootKey, schema)
  return schema
}

/** The validated application configuration (`ProjectTemplate:*`). @public */
export type ApplicationConfiguration = Static<typeof ApplicationSchema>
/** @public */
export type AuthenticationConfiguration = Static<typeof AuthenticationSchema>
/** One Authentication:Schemes:<Name> section, as bound (its path defaults filled in from the name). @public */
export type SchemeConfiguration = ApplicationConfiguration['Authentication']['Schemes'][string]

/**
 * The configuration as loaded (configuration.ts `loadConfiguration`). `LoadedConfigurationOf`
 * takes a configuration of the core only: the compiler checks the composition against config/.
 *
 * @public
 */
export type LoadedConfiguration = LoadedConfigurationOf<ApplicationConfiguration>
/** A cross-key rule that reads the provider sections. */
export type ApplicationRule = Rule<ApplicationConfiguration>
export type ApplicationRuleContext = RuleContext<ApplicationConfiguration>

/** The Types of Authentication:Schemes: each type with a named scheme, from its registration. */
export const NAMED_SCHEMES = new NamedSchemes<SchemeType>(
  Object.fromEntries(SCHEME_TYPES.map((type): [SchemeType, NamedSchemeEntry] => [type, { schema: providerTypeOf(type).namedScheme?.schema as TObject, defaultPaths: (name) => defaultPathsOf(type, name) }])) as Record<SchemeType, NamedSchemeEntry>,
  RESERVED_SCHEME_NAMES,
  // Messages about a missing or unknown Type name the sign-in types.
  SCHEME_TYPES.filter((type) => providerTypeOf(type).signsIn)
)

/** What the loader binds to: the composed schema and the named schemes' Types. */
export const CONFIGURATION_SCHEMAS: ConfigurationSchemas = { schemaFor: applicationSchemaFor, namedSchemes: NAMED_SCHEMES }

/** True for a flat (lower-cased) key that holds a secret (under `rootKey`, default `ProjectTemplate`). */
export const isSecretKey = (key: string, rootKey: string): boolean => isSecretKeyOf(CONFIGURATION_SCHEMAS, key, rootKey)

/**
 * JSON Schema for editors (`appsettings.schema.json`): the same schema, root made strict, under
 * the application's root key (none: the default application's, {@link rootKeyOf}).
 *
 * @public
 */
export function toJsonSchema (applicationName?: string): Record<string, unknown> {
  const rootKey = rootKeyOf(applicationName)
  return jsonSchemaOf(applicationSchemaFor(rootKey), rootKey)
}

export { AuthorizationSchema }
