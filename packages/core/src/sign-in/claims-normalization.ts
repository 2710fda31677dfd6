/**
 * Claims normalization (auth-contract.md, "Claims"): maps provider claims into the application
 * claim types once, at sign-in; the ticket stores the result, so role and permission policies see
 * the same claims whichever provider signed the user in. The default table is in
 * {@link DEFAULT_CLAIM_MAPPINGS} and docs/configuration.md; each provider's
 * `ClaimMappings` overrides it (provider claim name -> application claim type).
 * `scope` / `scp` are not in the default table (issue 40, item 2): a scope is what a client may
 * do on a user's behalf, often consented by the user, not a permission the app gave the user. A
 * bearer principal carries its token's scopes as `application:scope` claims
 * (bearer/bearer-principal.ts); only an explicit `ClaimMappings` entry (`"scp": "permission"`)
 * makes them permissions.
 */
import { ApplicationClaimTypes, type Claim } from '../session/principal.js'

/** A ClaimMappings target: every application claim type but `application:scope`, which only a verified access token asserts. */
type ApplicationClaimType = Exclude<typeof ApplicationClaimTypes[keyof typeof ApplicationClaimTypes], typeof ApplicationClaimTypes.Scope>

const NAME_IDENTIFIER_URI = 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/nameidentifier'

/** Provider claim name (matched case-insensitively) -> application claim type. */
export const DEFAULT_CLAIM_MAPPINGS: Readonly<Record<string, ApplicationClaimType>> = {
  sub: ApplicationClaimTypes.Subject,
  nameid: ApplicationClaimTypes.Subject,
  NameID: ApplicationClaimTypes.Subject,
  [NAME_IDENTIFIER_URI]: ApplicationClaimTypes.Subject,
  name: ApplicationClaimTypes.Name,
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name': ApplicationClaimTypes.Name,
  'http://schemas.microsoft.com/identity/claims/displayname': ApplicationClaimTypes.Name,
  displayname: ApplicationClaimTypes.Name,
  email: ApplicationClaimTypes.Email,
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress': ApplicationClaimTypes.Email,
  mail: ApplicationClaimTypes.Email,
  role: ApplicationClaimTypes.Role,
  roles: ApplicationClaimTypes.Role,
  'http://schemas.microsoft.com/ws/2008/06/identity/claims/role': ApplicationClaimTypes.Role,
  group: ApplicationClaimTypes.Group,
  groups: ApplicationClaimTypes.Group,
  memberof: ApplicationClaimTypes.Group,
  'http://schemas.xmlsoap.org/claims/group': ApplicationClaimTypes.Group,
  // Entra ID (SAML and WS-Fed): group object ids; ADFS sends the same URI for group names.
  'http://schemas.microsoft.com/ws/2008/06/identity/claims/groups': ApplicationClaimTypes.Group,
  permission: ApplicationClaimTypes.Permission,
  permissions: ApplicationClaimTypes.Permission
}

/** Claims whose value is a space-separated list (OAuth scope strings), when a ClaimMappings entry maps them. */
const SPACE_SEPARATED = new Set(['scope', 'scp'])

/** Every application claim type: a provider claim of one of these types is never kept. */
const APPLICATION_TYPES = new Set<string>(Object.values(ApplicationClaimTypes))
/** The application claim types a mapping may target. */
const TARGET_TYPES = new Set<string>(Object.values(ApplicationClaimTypes).filter((type) => type !== ApplicationClaimTypes.Scope))
const SHORT_NAMES: Readonly<Record<string, ApplicationClaimType>> = {
  subject: ApplicationClaimTypes.Subject,
  name: ApplicationClaimTypes.Name,
  email: ApplicationClaimTypes.Email,
  role: ApplicationClaimTypes.Role,
  group: ApplicationClaimTypes.Group,
  permission: ApplicationClaimTypes.Permission
}

/** `role` or `application:role` -> `application:role`; anything else (`application:scope` too) is not a target. */
export function applicationClaimType (target: string): ApplicationClaimType | undefined {
  const trimmed = target.trim()
  if (TARGET_TYPES.has(trimmed)) return trimmed as ApplicationClaimType
  return SHORT_NAMES[trimmed.toLowerCase()]
}

export interface NormalizationOptions {
  /** `ClaimsTransformation:Enabled`. */
  readonly enabled: boolean
  /** `ClaimsTransformation:RemoveOriginalClaims`. */
  readonly removeOriginalClaims: boolean
  /** Provider-specific defaults (for example a vendor's `id` -> subject), below the overrides. */
  readonly providerDefaults?: Readonly<Record<string, string>>
  /** The provider's `ClaimMappings` configuration. */
  readonly overrides?: Readonly<Record<string, string>>
}

function mappingTable (options: NormalizationOptions): Map<string, ApplicationClaimType | undefined> {
  const table = new Map<string, ApplicationClaimType | undefined>()
  for (const [source, target] of Object.entries(DEFAULT_CLAIM_MAPPINGS)) table.set(source.toLowerCase(), target)
  for (const layer of [options.providerDefaults, options.overrides]) {
    for (const [source, target] of Object.entries(layer ?? {})) {
      // An empty or unknown target removes the mapping for that claim.
      table.set(source.toLowerCase(), applicationClaimType(target))
    }
  }
  return table
}

/**
 * Normalized claims: mapped application claims (deduplicated) followed by the original claims,
 * unless RemoveOriginalClaims. Provider claims that already use an application claim type are
 * never kept as originals: only normalization may assert them.
 */
export function normalizeClaims (claims: readonly Claim[], options: NormalizationOptions): Claim[] {
  const originals = claims.filter((claim) => !APPLICATION_TYPES.has(claim.type))
  if (!options.enabled) return originals
  const table = mappingTable(options)
  const mapped: Claim[] = []
  const seen = new Set<string>()
  for (const claim of originals) {
    const target = table.get(claim.type.toLowerCase())
    if (target === undefined) continue
    const values = SPACE_SEPARATED.has(claim.type.toLowerCase()) ? claim.value.split(/\s+/) : [claim.value]
    for (const value of values) {
      if (value === '') continue
      const key = `${target}\u0000${value}`
      if (seen.has(key)) continue
      seen.add(key)
      mapped.push({ type: target, value, issuer: claim.issuer })
    }
  }
  return options.removeOriginalClaims ? mapped : [...mapped, ...originals]
}
