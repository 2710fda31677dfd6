/**
 * Entra ID group overage (docs/providers.md, "Entra ID"): above 200 groups in a JWT (150 in a SAML
 * assertion) Entra ID leaves the `groups` claim out and sends an indicator instead, pointing at
 * Microsoft Graph. A sign-in that went on without groups would make every group-based deny rule
 * fail open, so the indicator is detected here and the sign-in refused unless the provider's
 * `AcceptGroupOverage` says the application does not use groups (plugins/external-sign-in.ts).
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

/** The indicator in a JSON claim set (ID token, userinfo, vendor user information), or undefined. */
export function groupOverageInJson (claims: Readonly<Record<string, unknown>>): GroupOverageIndicator | undefined {
  const hasGroups = claims.hasgroups
  if (hasGroups === true || hasGroups === 'true') return 'hasgroups'
  const names = claims._claim_names
  if (names !== null && typeof names === 'object' && !Array.isArray(names) && Object.hasOwn(names, 'groups')) return 'claim_names'
  return undefined
}

/** The indicator among provider claims (SAML attributes by name, case-insensitive), or undefined. */
export function groupOverageInClaims (claims: readonly Claim[]): GroupOverageIndicator | undefined {
  const link = GROUPS_LINK_ATTRIBUTE.toLowerCase()
  return claims.some((claim) => claim.type.toLowerCase() === link) ? 'groups_link' : undefined
}
