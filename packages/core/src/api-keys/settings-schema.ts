/**
 * The settings schema of the ApiKey scheme type (issue 42, item 1): a named scheme of Type ApiKey
 * (`Authentication:Schemes:<Name>`), no contract section and no path of its own (the key pages
 * are built-in pages under `/Account/ApiKeys`). Built with the helpers of config/schema-parts.ts,
 * as the JwtBearer type's schema is; its rules are settings-rules.ts, its registration
 * provider-type.ts. Plain data.
 */
import { Type, type Static } from '@sinclair/typebox'
import { applicationNaming } from '../application-name.js'
import type { ProviderInstanceBase } from '../config/provider-type.js'
import { schemeTypeKey, strings } from '../config/schema-parts.js'

/** Who may own a key: a user (the signed-in person), or a tenant (a customer organisation). */
export const API_KEY_OWNER_KINDS = ['User', 'Tenant'] as const
export type ApiKeyOwnerKind = typeof API_KEY_OWNER_KINDS[number]

/**
 * Authentication:Schemes:<Name> of Type ApiKey (issue 42): keys the app issues to its users and
 * customers for their scripts, accepted where bearer tokens are. docs/guides/api-keys.md.
 */
export const ApiKeySchemeSchema = Type.Object({
  Type: schemeTypeKey('ApiKey', 'Extension. The scheme\'s type: ApiKey, keys this app issues for API calls (no sign-in). Required.'),
  Enabled: Type.Boolean({ default: true, description: 'Extension. Accepts and issues keys of this scheme when true. Default true (declaring a scheme means using it). A disabled scheme\'s keys are refused, not deleted.' }),
  Scheme: Type.String({ default: '', description: 'The scheme name; equals <Name>. Each key records it; audit lines name it.' }),
  DisplayName: Type.String({ default: '', description: 'Extension. The name the key pages show for this scheme. Empty: the scheme name.' }),
  Prefix: Type.String({ default: '', description: 'Extension. The visible start of every key of this scheme, which secret scanners match: a lower-case letter, lower-case letters and digits, and a final underscore, 3-24 characters (for example acme_). Empty: the application name in lower case with an underscore (an app named Orders: orders_). No enabled ApiKey scheme\'s prefix may start another\'s. Changing it refuses every key issued under the old one.' }),
  Scopes: Type.Record(Type.String(), Type.String(), { default: {}, description: 'Extension. The scopes a key may be granted, each with the description the key page shows: { "orders.read": "Read your orders" }. A key grants a non-empty subset; a user-owned key only scopes its owner holds. Names: 1-64 characters of letters, digits and . _ : / -. Required: at least one.' }),
  DefaultLifetimeDays: Type.Integer({ default: 90, minimum: 1, maximum: 3650, description: 'Extension. A new key\'s lifetime when its creator names none, in days (1-3650, at most MaxLifetimeDays). Every key expires.' }),
  MaxLifetimeDays: Type.Integer({ default: 365, minimum: 1, maximum: 3650, description: 'Extension. The longest lifetime a key may be given, in days (1-3650). Keys never live for ever: rotate them by creating a new one before the old expires.' }),
  MaxKeysPerOwner: Type.Integer({ default: 25, minimum: 1, maximum: 1000, description: 'Extension. Most unrevoked, unexpired keys one owner (a user, or a tenant) may hold at once, 1-1000; one more is refused (409) until one is revoked.' }),
  Owners: strings(['User'], 'Extension. Who may own a key: User (the signed-in user, for their own calls) and/or Tenant (the signed-in user\'s tenant, for a customer\'s integrations; needs TenantAdministratorPolicy). A tenant-owned key outlives the employee who created it and records who did.'),
  TenantAdministratorPolicy: Type.String({ default: '', description: 'Extension. With Owners including Tenant: the named authorization policy a user must meet to create, list and revoke their tenant\'s keys (an administrator of that tenant). Required then.' }),
  AllowXApiKeyHeader: Type.Boolean({ default: false, description: 'Extension. Also accepts a key in the X-API-Key header, for clients that cannot send Authorization: Bearer. Default false: Authorization: Bearer only. A key is never accepted in the query string (it would reach logs, proxies and browser history).' }),
  CreationMaxAgeSeconds: Type.Integer({ default: 300, minimum: 0, maximum: 3600, description: 'Extension. Creating a key needs a federated sign-in at most this many seconds old (a step-up policy, authentication.maxAgeSeconds: an older session is sent back to its identity provider first), 0-3600 (0: a new sign-in every time). Default 300. docs/security.md, "Step-up".' })
}, { additionalProperties: false, default: {} })

/** Authentication:Schemes:<Name> of Type ApiKey. */
export type ApiKeySchemeConfiguration = Static<typeof ApiKeySchemeSchema>

/** An ApiKey scheme's settings (no Type), its Scheme and Prefix filled in. */
export type ApiKeySettings = Omit<ApiKeySchemeConfiguration, 'Type'>

/** An ApiKey scheme as configured. */
export type ApiKeyInstance = ProviderInstanceBase & { readonly protocol: 'ApiKey', readonly settings: ApiKeySettings }

/**
 * The default prefix of an application's keys: its name in lower case, letters and digits only,
 * at most 23 characters, and an underscore (`ProjectTemplate` -> `projecttemplate_`).
 */
export function defaultApiKeyPrefix (applicationName: string): string {
  return `${applicationNaming(applicationName).kebabName.replace(/[^a-z0-9]/g, '').slice(0, 23)}_`
}
