/**
 * Step-up authentication (issue 36, item 3): what a policy requires of how and how recently the
 * user authenticated ({@link AuthenticationRequirement}), what a provider's response proved
 * ({@link AuthenticationProof}, recorded in the session at sign-in), and the one check of the one
 * against the other ({@link authenticationShortfall}), at a route and at the callback of a
 * step-up. The protocols only translate the requirement into their request parameters
 * (oidc/step-up.ts, saml2/step-up.ts), read their proof, and name a shortfall in their own
 * failure classes. Plain data, no Fastify types.
 */
import type { AuthenticationProof } from './claims.js'

export type { AuthenticationProof } from './claims.js'

/** What a policy requires of the user's authentication at the provider. @public @experimental */
export interface AuthenticationRequirement {
  /**
   * Accepted `acr` values (SAML2: `AuthnContextClassRef`), most preferred first; sent as
   * `acr_values` (SAML2: `RequestedAuthnContext`).
   */
  readonly acrValues?: readonly string[]
  /** `amr` methods that must all be present (RFC 8176: `mfa`, `hwk`, `otp`, ...); OpenID Connect only. */
  readonly amr?: readonly string[]
  /**
   * Maximum seconds since the user authenticated, compared with `auth_time` (SAML2
   * `AuthnInstant`) give or take {@link STEP_UP_CLOCK_SKEW_SECONDS}; an authentication without
   * one never meets it. Sent as `max_age` (0 adds `prompt=login`; SAML2: `ForceAuthn`).
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
 * The clock skew of every step-up time comparison, at a route and at a step-up's callback (fixed;
 * a scheme's `ClockSkewSeconds` is for token and assertion lifetimes, not for this): how far the
 * provider's clock (`auth_time`, `AuthnInstant`) may be from the app's. A maximum age of N is met
 * up to N + 10 seconds after the authentication, a maximum age of 0 for the 10 seconds the browser
 * has to come back from the provider. docs/guides/enterprise.md, "Step-up authentication".
 */
export const STEP_UP_CLOCK_SKEW_SECONDS = 10

/** Which part of a requirement a proof fails first. */
export type UnmetAuthentication = 'auth_time' | 'acr' | 'amr'

/**
 * Why a proof does not meet a requirement: the part it fails first and how. `auth_time`: none
 * (`missing`), later than now (`in_future`) or too old (`stale`); `acr`: none (`missing`) or not
 * an accepted one (`not_requested`); `amr`: a required method missing (`missing`).
 */
export type AuthenticationShortfall =
  | { readonly part: 'auth_time', readonly reason: 'missing' | 'in_future' | 'stale' }
  | { readonly part: 'acr', readonly reason: 'missing' | 'not_requested' }
  | { readonly part: 'amr', readonly reason: 'missing' }

type KeyOf<S> = S extends { readonly part: infer P extends string, readonly reason: infer R extends string } ? `${P} ${R}` : never
/** A shortfall as one key (`auth_time stale`, `acr missing`...): what a protocol names its failure codes by. */
export type ShortfallKey = KeyOf<AuthenticationShortfall>

/** The key of `shortfall`. */
export function shortfallKey (shortfall: AuthenticationShortfall): ShortfallKey {
  return `${shortfall.part} ${shortfall.reason}` as ShortfallKey
}

/** When a proof is checked: now, and for a step-up's answer when the provider was asked. */
export interface ProofCheckTime {
  /** Seconds since the epoch. */
  readonly nowSeconds: number
  /**
   * When the step-up asked the provider (seconds since the epoch): a maximum age of 0 (OpenID
   * Connect `prompt=login`, SAML2 `ForceAuthn`) is then met by an authentication after it.
   */
  readonly requestedAtSeconds?: number
}

/** Whether `requirement` asks for anything at all. */
export function requiresAuthentication (requirement: AuthenticationRequirement): boolean {
  return (requirement.acrValues?.length ?? 0) > 0 || (requirement.amr?.length ?? 0) > 0 || requirement.maxAgeSeconds !== undefined
}

/**
 * The one comparison of an authentication time with a maximum age, with the clock skew
 * {@link STEP_UP_CLOCK_SKEW_SECONDS} either way: no time never meets it, and neither does a time
 * later than now.
 */
export function authenticationAgeFailure (authTime: number | undefined, maxAgeSeconds: number, at: ProofCheckTime): 'missing' | 'in_future' | 'stale' | undefined {
  if (authTime === undefined) return 'missing'
  if (authTime > at.nowSeconds + STEP_UP_CLOCK_SKEW_SECONDS) return 'in_future'
  const oldest = maxAgeSeconds <= 0 && at.requestedAtSeconds !== undefined ? at.requestedAtSeconds : at.nowSeconds - maxAgeSeconds
  return authTime < oldest - STEP_UP_CLOCK_SKEW_SECONDS ? 'stale' : undefined
}

/**
 * Whether `proof` meets `requirement` at `at`: undefined when it does, else the first part it
 * fails (in the order authentication time, `acr`, `amr`). No proof meets no requirement.
 */
export function authenticationShortfall (proof: AuthenticationProof | undefined, requirement: AuthenticationRequirement, at: ProofCheckTime): AuthenticationShortfall | undefined {
  if (requirement.maxAgeSeconds !== undefined) {
    const reason = authenticationAgeFailure(proof?.authTime, requirement.maxAgeSeconds, at)
    if (reason !== undefined) return { part: 'auth_time', reason }
  }
  if (requirement.acrValues !== undefined && requirement.acrValues.length > 0) {
    if (proof?.acr === undefined) return { part: 'acr', reason: 'missing' }
    if (!requirement.acrValues.includes(proof.acr)) return { part: 'acr', reason: 'not_requested' }
  }
  if (requirement.amr !== undefined && requirement.amr.length > 0) {
    const methods = proof?.amr ?? []
    if (!requirement.amr.every((method) => methods.includes(method))) return { part: 'amr', reason: 'missing' }
  }
  return undefined
}

/** The part of `requirement` the session's `proof` fails at `nowSeconds`, or undefined when it meets it. */
export function unmetAuthentication (proof: AuthenticationProof | undefined, requirement: AuthenticationRequirement, nowSeconds: number): UnmetAuthentication | undefined {
  return authenticationShortfall(proof, requirement, { nowSeconds })?.part
}

/**
 * What is wrong with a requirement, naming the field (`acrValues must be ...`), or undefined when
 * it is well formed: a policy's (authorization/policies.ts) and one read back from a flow.
 */
export function requirementProblem (requirement: AuthenticationRequirement): string | undefined {
  for (const [field, values] of [['acrValues', requirement.acrValues], ['amr', requirement.amr]] as const) {
    if (values !== undefined && (!Array.isArray(values) || values.some((value) => typeof value !== 'string' || value === '' || /\s/.test(value)))) {
      return `${field} must be a list of non-empty values without spaces`
    }
  }
  const comparison = requirement.authnContextComparison
  if (comparison !== undefined && comparison !== 'exact' && comparison !== 'minimum') return 'authnContextComparison must be exact or minimum'
  const maxAgeSeconds = requirement.maxAgeSeconds
  if (maxAgeSeconds !== undefined && !(Number.isSafeInteger(maxAgeSeconds) && maxAgeSeconds >= 0)) return 'maxAgeSeconds must be a whole number of seconds, 0 or more'
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
