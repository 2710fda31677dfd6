/**
 * Named schemes (`Authentication:Schemes:<Name>`, docs/providers.md "Several identity providers"):
 * the name rules and the schema a section binds to, which is its protocol's contract section with
 * the defaults that follow from the name (scheme, display name, endpoint paths). Plain data; the
 * binder (config/bind.ts) and the rules (config/rules.ts) use it.
 */
import {
  JwtBearerSchemeSchema, OpenIdConnectSchemeSchema, RESERVED_SCHEME_NAMES, Saml2SchemeSchema, SCHEME_TYPES,
  type SchemaNode, type SchemeType
} from './schema.js'

/** Letters, digits, `-` and `_`, starting with a letter; at most 64 characters (it appears in paths and env-var names). */
const SCHEME_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/

/** Why `name` cannot name a scheme (a sentence naming `key`), or undefined when it can. */
export function schemeNameProblem (name: string, key: string): string | undefined {
  if (!SCHEME_NAME.test(name)) return `${key} is not a usable scheme name: letters, digits, - and _, starting with a letter, at most 64 characters.`
  const reserved = RESERVED_SCHEME_NAMES.find((candidate) => candidate.toLowerCase() === name.toLowerCase())
  if (reserved !== undefined) return `${key} uses the reserved scheme name ${reserved} (reserved: ${RESERVED_SCHEME_NAMES.join(', ')}); choose another name.`
  return undefined
}

/** The protocol a written Type names (case-insensitive), or undefined. */
export function schemeTypeOf (value: unknown): SchemeType | undefined {
  const text = typeof value === 'string' ? value.trim().toLowerCase() : ''
  return SCHEME_TYPES.find((type) => type.toLowerCase() === text)
}

/** The endpoint paths a named scheme has unless its path keys say otherwise. */
export function defaultPathsOf (type: SchemeType, name: string): Record<string, string> {
  const lower = name.toLowerCase()
  // A bearer scheme owns no path: it authenticates API calls on the app's own routes.
  if (type === 'JwtBearer') return {}
  return type === 'OpenIdConnect'
    ? { CallbackPath: `/signin-${lower}`, SignedOutCallbackPath: `/signout-callback-${lower}`, BackChannelLogoutPath: `/backchannel-logout-${lower}` }
    : { ModulePath: `/Saml2/${name}/Acs`, MetadataPath: `/Saml2/${name}/Metadata`, LogoutPath: `/Saml2/${name}/Logout` }
}

const schemaCache = new Map<string, SchemaNode>()

/**
 * The schema `Schemes:<name>` binds to: the protocol's section with Type, Scheme and DisplayName
 * defaulting to the name, Enabled to true (declaring a scheme means using it), and the paths of
 * {@link defaultPathsOf}.
 */
export function schemeSchemaFor (type: SchemeType, name: string): SchemaNode {
  const cacheKey = `${type}\u0000${name}`
  const known = schemaCache.get(cacheKey)
  if (known !== undefined) return known
  const base = type === 'OpenIdConnect' ? OpenIdConnectSchemeSchema : type === 'JwtBearer' ? JwtBearerSchemeSchema : Saml2SchemeSchema
  const schema = JSON.parse(JSON.stringify(base)) as SchemaNode & { properties: Record<string, SchemaNode> }
  const defaults: Record<string, unknown> = { Scheme: name, DisplayName: name, Enabled: true, ...defaultPathsOf(type, name) }
  for (const [key, value] of Object.entries(defaults)) schema.properties[key] = { ...schema.properties[key], default: value }
  schema.properties.Scheme = { ...schema.properties.Scheme, description: 'The scheme name; equals <Name>.' }
  schemaCache.set(cacheKey, schema)
  return schema
}
