/**
 * Step-up authentication on the session's side (issue 36, item 3): what a policy requires of how
 * and how recently the user authenticated ({@link AuthenticationRequirement}), what a provider's
 * response proved ({@link AuthenticationProof}, recorded in the session at sign-in), and whether
 * the one satisfies the other when a request reaches a route. The protocols ask for the
 * requirement and check the response (oidc/step-up.ts, saml2/authn-request.ts); this module only
 * compares what the session holds. Plain data, no Fastify types.
 */
import type { AuthenticationProof } from './claims.js'

export type { AuthenticationProof } from './claims.js'

/** What a policy requires of the user's authentication at the provider. */
export interface AuthenticationRequirement {
  /**
   * Accepted `acr` values (SAML2: `AuthnContextClassRef`), most preferred first; sent as
   * `acr_values` (SAML2: `RequestedAuthnContext`).
   */
  readonly acrValues?: readonly string[]
  /** `amr` methods that must all be present (RFC 8176: `mfa`, `hwk`, `otp`, ...); OpenID Connect only. */
  readonly amr?: readonly string[]
  /**
   * Maximum seconds since the user authenticated (sent as `max_age`; 0 adds `prompt=login`,
   * SAML2 `ForceAuthn`).
   */
  readonly maxAgeSeconds?: number
  /**
   * SAML2 `RequestedAuthnContext` Comparison (SAML Core 3.3.2.2.1): `exact` (default) or `minimum`
   * (the IdP may use a stronger context). Either way the response's `AuthnContextClassRef` must be
   * one of {@link acrValues}: with `minimum`, list every class you accept.
   */
  readonly authnContextComparison?: 'exact' | 'minimum'
}

/**
 * How long a session stays fresh enough for a maximum age of 0 after the re-authentication that
 * proved it: the browser must reach the route again after the provider's redirect, so "now" is
 * never exactly the instant of authentication. Also the clock skew allowed for other ages.
 */
export const FRESH_AUTHENTICATION_SECONDS = 60

/** Which part of a requirement the proof fails first, or undefined when it satisfies all of it. */
export type UnmetAuthentication = 'auth_time' | 'acr' | 'amr'

/** Whether `requirement` asks for anything at all. */
export function requiresAuthentication (requirement: AuthenticationRequirement): boolean {
  return (requirement.acrValues?.length ?? 0) > 0 || (requirement.amr?.length ?? 0) > 0 || requirement.maxAgeSeconds !== undefined
}

/**
 * Whether the session's `proof` satisfies `requirement` at `nowSeconds`: an authentication time
 * no older than the maximum age (at least {@link FRESH_AUTHENTICATION_SECONDS}), an `acr` among the
 * accepted ones, every required `amr` method. A session without a proof satisfies no requirement.
 */
export function unmetAuthentication (proof: AuthenticationProof | undefined, requirement: AuthenticationRequirement, nowSeconds: number): UnmetAuthentication | undefined {
  if (requirement.maxAgeSeconds !== undefined) {
    const authTime = proof?.authTime
    if (authTime === undefined || nowSeconds - authTime > Math.max(requirement.maxAgeSeconds, 0) + FRESH_AUTHENTICATION_SECONDS) return 'auth_time'
    // Skewed far into the future: nothing to trust.
    if (authTime > nowSeconds + FRESH_AUTHENTICATION_SECONDS) return 'auth_time'
  }
  if (requirement.acrValues !== undefined && requirement.acrValues.length > 0) {
    if (proof?.acr === undefined || !requirement.acrValues.includes(proof.acr)) return 'acr'
  }
  if (requirement.amr !== undefined && requirement.amr.length > 0) {
    const methods = proof?.amr ?? []
    if (!requirement.amr.every((method) => methods.includes(method))) return 'amr'
  }
  return undefined
}

/**
 * The proof a JSON token carries (a validated ID token or access token): `acr` when a string,
 * `amr` as its string members, `auth_time` when a finite number. Undefined when it has none.
 */
export function proofOfTokenClaims (claims: Readonly<Record<string, unknown>>): AuthenticationProof | undefined {
  const acr = typeof claims.acr === 'string' && claims.acr !== '' ? claims.acr : undefined
  const amr = Array.isArray(claims.amr) ? claims.amr.filter((method): method is string => typeof method === 'string') : undefined
  const authTime = typeof claims.auth_time === 'number' && Number.isFinite(claims.auth_time) ? Math.floor(claims.auth_time) : undefined
  if (acr === undefined && amr === undefined && authTime === undefined) return undefined
  return { ...(acr === undefined ? {} : { acr }), ...(amr === undefined ? {} : { amr }), ...(authTime === undefined ? {} : { authTime }) }
}

/** A proof read back from storage: undefined unless every present field has its type. */
export function checkedProof (value: unknown): AuthenticationProof | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined
  const { acr, amr, authTime } = value as Record<string, unknown>
  if (acr !== undefined && typeof acr !== 'string') return undefined
  if (amr !== undefined && !(Array.isArray(amr) && amr.every((method) => typeof method === 'string'))) return undefined
  if (authTime !== undefined && !(typeof authTime === 'number' && Number.isFinite(authTime))) return undefined
  return { ...(acr === undefined ? {} : { acr }), ...(amr === undefined ? {} : { amr: amr as string[] }), ...(authTime === undefined ? {} : { authTime: authTime as number }) }
}
