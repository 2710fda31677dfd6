/**
 * Step-up authentication, the OpenID Connect protocol step (issue 36, item 3; OpenID Connect Core
 * 1.0, sections 3.1.2.1 and 2): how recently and how strongly the user must have authenticated at
 * the provider. The request asks with `acr_values`, `max_age` and, for a maximum age of 0,
 * `prompt=login`; the response must prove it, or the sign-in is refused:
 * - `auth_time` present and no older than the maximum age (with the clock skew); for a maximum age
 *   of 0, not older than the request itself (a missing or stale `auth_time` is refused: the check
 *   ASP.NET made mandatory in .NET 11) - failure class `auth_time`;
 * - `acr` one of the requested values (absent, or a value not requested, is refused) - `acr`;
 * - `amr` holding every required method (`mfa`, `hwk`, ... RFC 8176) - `amr`.
 * Plain inputs and results; which policy asks for what, and the session upgrade, are not here.
 */

import type { AuthenticationRequirement } from '../session/authentication-proof.js'

/** What a policy requires of the user's authentication at the provider (session/authentication-proof.ts). */
export type { AuthenticationRequirement } from '../session/authentication-proof.js'

export type StepUpFailure = 'auth_time' | 'acr' | 'amr'

/** The authorization request parameters that ask for `requirement`. */
export function stepUpParameters (requirement: AuthenticationRequirement): Record<string, string> {
  const parameters: Record<string, string> = {}
  if (requirement.acrValues !== undefined && requirement.acrValues.length > 0) parameters.acr_values = requirement.acrValues.join(' ')
  if (requirement.maxAgeSeconds !== undefined) {
    parameters.max_age = String(Math.max(0, Math.floor(requirement.maxAgeSeconds)))
    if (requirement.maxAgeSeconds <= 0) parameters.prompt = 'login'
  }
  return parameters
}

/**
 * Whether the validated ID token's claims satisfy `requirement`: undefined when they do, else the
 * failure class and a stable code (never a claim value).
 */
export function checkAuthentication (claims: Readonly<Record<string, unknown>>, requirement: AuthenticationRequirement, at: {
  /** Seconds since the epoch, now. */
  readonly nowSeconds: number
  /** When the authorization request was made (seconds since the epoch). */
  readonly requestedAtSeconds: number
  readonly clockToleranceSeconds: number
}): { readonly failure: StepUpFailure, readonly code: string } | undefined {
  if (requirement.maxAgeSeconds !== undefined) {
    const authTime = claims.auth_time
    if (typeof authTime !== 'number' || !Number.isFinite(authTime)) return { failure: 'auth_time', code: 'AUTH_TIME_MISSING' }
    if (authTime > at.nowSeconds + at.clockToleranceSeconds) return { failure: 'auth_time', code: 'AUTH_TIME_IN_FUTURE' }
    const oldest = requirement.maxAgeSeconds <= 0
      ? at.requestedAtSeconds - at.clockToleranceSeconds
      : at.nowSeconds - requirement.maxAgeSeconds - at.clockToleranceSeconds
    if (authTime < oldest) return { failure: 'auth_time', code: 'AUTH_TIME_STALE' }
  }
  if (requirement.acrValues !== undefined && requirement.acrValues.length > 0) {
    const acr = claims.acr
    if (typeof acr !== 'string') return { failure: 'acr', code: 'ACR_MISSING' }
    if (!requirement.acrValues.includes(acr)) return { failure: 'acr', code: 'ACR_NOT_REQUESTED' }
  }
  if (requirement.amr !== undefined && requirement.amr.length > 0) {
    const amr = Array.isArray(claims.amr) ? claims.amr.filter((method): method is string => typeof method === 'string') : []
    if (!requirement.amr.every((method) => amr.includes(method))) return { failure: 'amr', code: 'AMR_MISSING_METHOD' }
  }
  return undefined
}
