/**
 * The building blocks every section's schema is written with (config/schema.ts for the core's
 * own sections, each provider type's `settings-schema.ts` in its own folder for its sections): the
 * keywords the binder and the reference generator read, and the small helpers for secrets, lists,
 * choices, claim mappings and the keys every provider section shares. Plain TypeBox; nothing
 * here knows a protocol.
 */
import { Type, type TLiteral, type TUnion, type TUnsafe } from '@sinclair/typebox'
import type { Secret } from './secret.js'

/** Marks a string key whose value is a secret: bound as {@link Secret}, never printed. */
export const SECRET_KEYWORD = 'x-secret'

export function secret (description: string): TUnsafe<Secret> {
  return Type.Unsafe<Secret>({ type: 'string', default: '', [SECRET_KEYWORD]: true, description })
}

/** One of a fixed set of strings (a union of literals in the JSON Schema). */
export function choice<const T extends string> (values: readonly T[], defaultValue: NoInfer<T>, description: string): TUnion<Array<TLiteral<T>>> {
  return Type.Union(values.map((value) => Type.Literal(value)), { default: defaultValue, description })
}

export function secretArray (description: string): TUnsafe<Secret[]> {
  return Type.Unsafe<Secret[]>({ type: 'array', items: { type: 'string', [SECRET_KEYWORD]: true }, default: [], description })
}

/** Marks a claim-mapping key: bound from either form into one provider claim -> application claim type map. */
export const CLAIM_MAPPINGS_KEYWORD = 'x-claim-mappings'

/** Marks Authentication:Schemes: a map of named schemes, each bound by the protocol its Type names (config/bind.ts). */
export const SCHEMES_KEYWORD = 'x-schemes'

/** Marks a map of named sections (`DownstreamApis:<Name>`), each bound by the schema in its `additionalProperties`. */
export const NAMED_SECTIONS_KEYWORD = 'x-named-sections'

/** The JSON Schema of one key or section, as the binder and the reference generator walk it. */
export interface SchemaNode {
  type?: string
  default?: unknown
  description?: string
  properties?: Record<string, SchemaNode>
  patternProperties?: Record<string, SchemaNode>
  items?: SchemaNode
  anyOf?: Array<{ const?: string }>
  minimum?: number
  maximum?: number
  [SECRET_KEYWORD]?: boolean
  [CLAIM_MAPPINGS_KEYWORD]?: boolean
  [SCHEMES_KEYWORD]?: boolean
  [NAMED_SECTIONS_KEYWORD]?: boolean
  additionalProperties?: SchemaNode | boolean
}

/**
 * A provider's ClaimMappings in either form: the JSON object `{ "<provider claim>": "<application
 * claim type>" }`, or an array of `{ From, To }` objects, which every configuration source can
 * express (environment variables and key-per-file names cannot contain the `:` and `/` of claim
 * URIs: `..._ClaimMappings__0__From=http://...`). Bound to the object form; an array entry wins
 * over an object entry with the same name. An empty To removes a mapping.
 */
export function claimMappings (description: string): TUnsafe<Record<string, string>> {
  return Type.Unsafe<Record<string, string>>({
    [CLAIM_MAPPINGS_KEYWORD]: true,
    anyOf: [
      { type: 'object', additionalProperties: { type: 'string' } },
      {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            From: { type: 'string', description: 'Provider claim name, attribute URI or (OpenID Connect and vendors) nested claim path such as realm_access.roles or /data/id.' },
            To: { type: 'string', description: 'Application claim type (subject, name, email, role, group, permission or application:*); empty removes the mapping.' }
          },
          required: ['From'],
          additionalProperties: false
        }
      }
    ],
    default: {},
    description
  })
}

/**
 * Providers:<name>:AcceptGroupOverage (docs/providers/openid-connect.md, "Group overage"): DANGEROUS for an app whose
 * authorization reads groups; an overage sign-in then has no group claims at all.
 */
export function acceptGroupOverage () {
  return Type.Boolean({ default: false, description: 'Extension. DANGEROUS when the application authorizes by group: accepts a sign-in whose token or assertion says the groups were left out (Entra ID group overage: hasgroups, _claim_names.groups, or the SAML attribute http://schemas.microsoft.com/claims/groups.link); the user then has no group claims. Default false: such a sign-in is refused (failure group_overage) and logged as external.sign_in.group_overage. Set true only for an application that does not use groups.' })
}

export const strings = (defaults: string[], description: string) =>
  Type.Array(Type.String(), { default: defaults, description })

/** The keys every provider section starts with (Enabled, Scheme, DisplayName, Domains). */
export function providerCommon (name: string, displayName: string) {
  return {
    Enabled: Type.Boolean({ default: false, description: `Registers the ${name} provider when true. Default false.` }),
    Scheme: Type.String({ default: name, description: `Authentication scheme name. Equals the provider name (${name}).` }),
    DisplayName: Type.String({ default: displayName, description: 'Label shown on the login page.' }),
    Domains: strings([], 'Extension. E-mail domains this provider serves (example.com): GET /External/Challenge?email=<address> starts the sign-in here when the address\'s domain is one of them (case-insensitive), and the login page offers an e-mail field when any provider lists one. Empty: not chosen by e-mail. A domain belongs to one provider.')
  }
}

/**
 * The Type key of a named scheme's section (Authentication:Schemes:<Name>:Type): the literal
 * `type`, its default, and the description the type's folder gives it.
 */
export function schemeTypeKey<const T extends string> (type: T, description: string): TLiteral<T> {
  return Type.Literal(type, { default: type, description })
}
