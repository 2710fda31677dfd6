/**
 * Entra ID group overage (docs/providers/openid-connect.md, "Group overage"): above 200 groups in a JWT (150 in a SAML
 * assertion) Entra ID leaves the `groups` claim out and sends an indicator instead, pointing at
 * Microsoft Graph. A sign-in that went on without groups would make every group-based deny rule
 * fail open, so the indicator is detected here and the sign-in refused unless the provider's
 * `AcceptGroupOverage` says the application does not use groups (sign-in/pipeline.ts, step 1).
 *
 * Every form a provider (or a proxy re-serializing its claims) may use counts (issue 26, item 7):
 * `hasgroups` as `true`, `"true"` in any case, `1` or `"1"` (alone or as the only array item);
 * `_claim_names` as an object or as a JSON string, naming `groups` in any case; and the SAML
 * attributes `http://schemas.microsoft.com/claims/groups.link` (present, even with no or an empty
 * value) and a `hasgroups` attribute with a true value. Microsoft's "Group overage claim" pages
 * (ID tokens, access tokens and SAML tokens) list these indicators.
 */
import type { Claim } from '../session/principal.js'

/**
 * Which indicator was found: `hasgroups` (`"hasgroups": true`, implicit-flow ID tokens),
 * `claim_names` (`_claim_names.groups`, a distributed claim in a JWT), `groups_link` (the SAML
 * attribute `http://schemas.microsoft.com/claims/groups.link`).
 */
export type GroupOverageIndicator = 'hasgroups' | 'claim_names' | 'groups_link'

/** The SAML attribute Entra ID sends instead of the groups above 150. */
export const GROUPS_LINK_ATTRIBUTE = 'http://schemas.microsoft.com/claims/groups.link'

/** The JWT claim Entra ID sends (implicit flow) instead of the groups above 6 in a URL fragment. */
const HAS_GROUPS = 'hasgroups'
/** A `_claim_names` string longer than this is not parsed (and not an indicator). */
const MAX_CLAIM_NAMES_TEXT = 16_384

/** `true`, `"true"` (any case, surrounding blanks), `1`, `"1"`, or an array holding one of them. */
function saysTrue (value: unknown): boolean {
  if (Array.isArray(value)) return value.some((item) => !Array.isArray(item) && saysTrue(item))
  if (value === true || value === 1) return true
  if (typeof value !== 'string') return false
  const text = value.trim().toLowerCase()
  return text === 'true' || text === '1'
}

/** `_claim_names` names the groups: an object with a `groups` key in any case, or the same as JSON text. */
function namesGroups (value: unknown): boolean {
  let names = value
  if (typeof names === 'string') {
    if (names.length > MAX_CLAIM_NAMES_TEXT) return false
    try {
      names = JSON.parse(names) as unknown
    } catch {
      return false
    }
  }
  if (names === null || typeof names !== 'object' || Array.isArray(names)) return false
  return Object.keys(names).some((key) => key.trim().toLowerCase() === 'groups')
}

/** The value of a top-level claim whose name matches `name` in any case (a vendor may capitalize it). */
function claimOf (claims: Readonly<Record<string, unknown>>, name: string): unknown[] {
  return Object.keys(claims).filter((key) => key.toLowerCase() === name).map((key) => claims[key])
}

/** The indicator in a JSON claim set (ID token, userinfo, vendor user information), or undefined. */
export function groupOverageInJson (claims: Readonly<Record<string, unknown>>): GroupOverageIndicator | undefined {
  if (claimOf(claims, HAS_GROUPS).some(saysTrue)) return 'hasgroups'
  if (claimOf(claims, '_claim_names').some(namesGroups)) return 'claim_names'
  return undefined
}

/** The last segment of a claim type URI (`http://…/claims/hasgroups` → `hasgroups`), lower-cased. */
function shortNameOf (type: string): string {
  return type.slice(type.lastIndexOf('/') + 1).trim().toLowerCase()
}

/**
 * The indicator among provider claims (SAML attributes by name, case-insensitive), or undefined.
 * `attributeNames`: every attribute name the assertion carried, with or without a value (an empty
 * `groups.link` attribute makes no claim but still says the groups were left out).
 */
export function groupOverageInClaims (claims: readonly Claim[], attributeNames: readonly string[] = []): GroupOverageIndicator | undefined {
  const link = GROUPS_LINK_ATTRIBUTE.toLowerCase()
  const isLink = (name: string): boolean => name.trim().toLowerCase() === link || shortNameOf(name) === 'groups.link'
  if (claims.some((claim) => isLink(claim.type)) || attributeNames.some(isLink)) return 'groups_link'
  if (claims.some((claim) => shortNameOf(claim.type) === HAS_GROUPS && saysTrue(claim.value))) return 'hasgroups'
  return undefined
}
