/**
 * One registration, many tenants (Entra ID multi-tenant; issue 36, item 1). A multi-tenant
 * authority (`https://login.microsoftonline.com/organizations/v2.0`, or `common`) publishes an
 * issuer *template* in its discovery document (`https://login.microsoftonline.com/{tenantid}/v2.0`),
 * so the ID token's `iss` never equals the discovered issuer: a strict check refuses every sign-in
 * and turning it off lets every tenant in. Here, with the template:
 * - the ID token's `tid` must be one of `AllowedTenants` (a missing `tid` or one not listed is the
 *   failure class `tenant`);
 * - its `iss` must equal the template with that `tid` substituted (else `issuer`), which
 *   openid-client checks with every other ID token rule (oidc/callback.ts);
 * - the user's identity stays (scheme, issuer, subject), the issuer being the tenant's own;
 * - an allowed tenant may name the app's tenant (`<tenant id>=<application tenant>`), which becomes
 *   the `application:tenant` claim, the only one (the IdP's own is dropped); for a provider from
 *   the provider source only its definition's `tenant` does (providers/runtime-definitions.ts);
 * - a tenant id is a GUID in its one canonical form, lower case (issue 40, item 21): an entry in
 *   another form (upper case, spaces, a domain name) is a startup error naming its index, and a
 *   `tid` in another form is refused, because its spelling goes into the user's issuer and two
 *   spellings would make two identities of one person.
 * Nothing here depends on Microsoft's host name: any provider whose discovery issuer holds the
 * placeholder is treated so. `AllowedTenants` is required for such a provider: without it the
 * discovered metadata is refused (the provider stays unavailable) and the log names the key.
 */
import { CoreError, type LogCode } from '../errors.js'

/** The placeholder a multi-tenant discovery document writes in its issuer. */
export const TENANT_ID_PLACEHOLDER = '{tenantid}'

/** A tenant id in its canonical form: a GUID in lower case, nothing around it (Entra ID's `tid`). */
const CANONICAL_TENANT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** Whether `tenantId` is a tenant id in its canonical form. */
export function isCanonicalTenantId (tenantId: unknown): boolean {
  return typeof tenantId === 'string' && CANONICAL_TENANT_ID.test(tenantId)
}

/** Whether `tenantId` is a tenant id in another spelling (upper case, spaces around it): refused, not read. */
export function isNonCanonicalTenantId (tenantId: unknown): boolean {
  return typeof tenantId === 'string' && !isCanonicalTenantId(tenantId) && isCanonicalTenantId(tenantId.trim().toLowerCase())
}

/** Whether the discovered issuer is a multi-tenant template. */
export function isIssuerTemplate (issuer: string): boolean {
  return issuer.includes(TENANT_ID_PLACEHOLDER)
}

/** The tenant's own issuer: the template with `tenantId` in place of the placeholder. */
export function tenantIssuerOf (template: string, tenantId: string): string {
  return template.replace(TENANT_ID_PLACEHOLDER, tenantId)
}

/**
 * Whether `authority` is the template with one path segment in place of the placeholder
 * (`.../organizations/v2.0` for `.../{tenantid}/v2.0`): the discovery document describes the
 * authority it was fetched from (the mix-up check a template cannot get by equality).
 */
export function authorityFitsTemplate (authority: string, template: string): boolean {
  const at = template.indexOf(TENANT_ID_PLACEHOLDER)
  if (at === -1 || template.indexOf(TENANT_ID_PLACEHOLDER, at + 1) !== -1) return false
  const prefix = template.slice(0, at)
  const suffix = template.slice(at + TENANT_ID_PLACEHOLDER.length).replace(/\/+$/, '')
  const trimmed = authority.replace(/\/+$/, '')
  if (!trimmed.startsWith(prefix) || !trimmed.endsWith(suffix) || trimmed.length < prefix.length + suffix.length + 1) return false
  const segment = trimmed.slice(prefix.length, trimmed.length - suffix.length)
  return /^[A-Za-z0-9._-]+$/.test(segment)
}

/** `AllowedTenants`, read: tenant id (canonical) -> the app's tenant it maps to, if any. */
export type AllowedTenants = ReadonlyMap<string, string | undefined>

/** An `AllowedTenants` entry refused: its index and what is wrong (never its value). */
export interface AllowedTenantProblem {
  readonly index: number
  readonly message: string
}

/** What is wrong with one entry, or undefined. */
function allowedTenantEntryProblem (tenantId: string, applicationTenant: string | undefined): string | undefined {
  if (!isCanonicalTenantId(tenantId)) {
    if (isNonCanonicalTenantId(tenantId)) return 'must be a tenant id in lower case without spaces (a GUID as Entra ID writes it in tid), optionally followed by =<application tenant>.'
    if (/^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/.test(tenantId.trim())) return 'looks like a domain name: give the tenant id (a GUID: Entra ID, Overview, Tenant ID), optionally followed by =<application tenant>.'
    return 'must be a tenant id (a lower-case GUID), optionally followed by =<application tenant>.'
  }
  if (applicationTenant !== undefined && (applicationTenant === '' || applicationTenant.trim() !== applicationTenant)) return 'must have an application tenant after = without spaces around it.'
  return undefined
}

/**
 * Reads `AllowedTenants` entries (`<tenant id>` or `<tenant id>=<application tenant>`, the tenant id
 * a lower-case GUID). Returns the map, or every entry refused with its index and reason (never its
 * value).
 */
export function readAllowedTenants (entries: readonly string[]): { readonly tenants: AllowedTenants } | { readonly problems: readonly AllowedTenantProblem[] } {
  const tenants = new Map<string, string | undefined>()
  const problems: AllowedTenantProblem[] = []
  for (const [index, entry] of entries.entries()) {
    const separator = entry.indexOf('=')
    const tenantId = separator === -1 ? entry : entry.slice(0, separator)
    const applicationTenant = separator === -1 ? undefined : entry.slice(separator + 1)
    const problem = allowedTenantEntryProblem(tenantId, applicationTenant)
    if (problem !== undefined) problems.push({ index, message: problem })
    else if (tenants.has(tenantId)) problems.push({ index, message: 'repeats a tenant id listed before.' })
    else tenants.set(tenantId, applicationTenant)
  }
  return problems.length > 0 ? { problems } : { tenants }
}

/** Authority path segments that serve several tenants (Entra ID's `common`, `organizations`, `consumers`). */
export const MULTI_TENANT_AUTHORITY_SEGMENTS: readonly string[] = ['common', 'organizations', 'consumers']

/** Whether the Authority's path names a multi-tenant endpoint: startup then requires AllowedTenants. */
export function isMultiTenantAuthority (authority: string): boolean {
  try {
    return new URL(authority).pathname.split('/').some((segment) => MULTI_TENANT_AUTHORITY_SEGMENTS.includes(segment.toLowerCase()))
  } catch {
    return false
  }
}

/** The tenant of an ID token that passed the allow-list: its `tid` and the app's tenant it maps to. */
export interface AllowedTenant {
  readonly tenantId: string
  readonly applicationTenant?: string
}

/**
 * The allowed tenant of the (not yet verified) `tid`, or undefined when it is missing, not listed
 * or not in its canonical form (compared exactly: the spelling goes into the tenant's issuer).
 */
export function allowedTenantOf (tid: unknown, tenants: AllowedTenants): AllowedTenant | undefined {
  if (typeof tid !== 'string' || !isCanonicalTenantId(tid) || !tenants.has(tid)) return undefined
  const applicationTenant = tenants.get(tid)
  return applicationTenant === undefined ? { tenantId: tid } : { tenantId: tid, applicationTenant }
}

/**
 * A discovery document with an issuer template while `AllowedTenants` is empty, or a template that
 * does not fit the Authority: the metadata is refused (the provider stays unavailable) and the log
 * line names `setting`.
 */
export class TenantConfigurationError extends CoreError {
  readonly code: Extract<LogCode, 'ALLOWED_TENANTS_REQUIRED' | 'ISSUER_TEMPLATE_MISMATCH'>
  readonly setting: string

  constructor (code: TenantConfigurationError['code'], setting: string) {
    super(code === 'ALLOWED_TENANTS_REQUIRED'
      ? `the provider's discovery issuer is a ${TENANT_ID_PLACEHOLDER} template (a multi-tenant authority): ${setting} must list the tenants allowed to sign in`
      : `the provider's discovery issuer template does not fit ${setting}`)
    this.name = 'TenantConfigurationError'
    this.code = code
    this.setting = setting
  }
}
