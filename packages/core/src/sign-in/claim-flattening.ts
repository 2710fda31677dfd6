/**
 * A token's or user-information document's members as claims: one claim per value, the way the
 * OpenID Connect callback reads an ID token and userinfo (oidc/callback.ts) and a bearer scheme
 * reads an access token (bearer/bearer-principal.ts). Nested members a ClaimMappings path
 * addresses are read by claim-paths.ts. Plain data.
 */
import type { Claim } from '../session/principal.js'

/** One claim per value: arrays become one claim each, numbers and booleans strings, objects JSON. */
export function flattenClaims (source: Readonly<Record<string, unknown>>, issuer: string, skip: ReadonlySet<string> = new Set()): Claim[] {
  const claims: Claim[] = []
  for (const [type, value] of Object.entries(source)) {
    if (skip.has(type)) continue
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === null || item === undefined) continue
      const text = typeof item === 'string' ? item : typeof item === 'object' ? JSON.stringify(item) : String(item)
      claims.push({ type, value: text, issuer })
    }
  }
  return claims
}
