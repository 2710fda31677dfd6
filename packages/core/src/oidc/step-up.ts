/**
 * Step-up authentication, the OpenID Connect protocol step (issue 36, item 3; OpenID Connect Core
 * 1.0, sections 3.1.2.1 and 2): the requirement becomes the request's `acr_values`, `max_age`
 * and, for a maximum age of 0, `prompt=login`; the response's ID token is read as a proof
 * (session/authentication-proof.ts `proofOfTokenClaims`) and checked by the one step-up check
 * (`authenticationShortfall`), whose shortfall is named here in OpenID Connect's failure classes
 * and codes:
 * - `auth_time` missing (the check ASP.NET made mandatory in .NET 11), in the future or older
 *   than the maximum age (for 0: than the request) - failure class `auth_time`;
 * - `acr` absent or not one of the requested values - `acr`;
 * - `amr` without every required method (`mfa`, `hwk`, ... RFC 8176) - `amr`.
 * Plain inputs and results; which policy asks for what, and the session upgrade, are not here.
 */

import { authenticationShortfall, proofOfTokenClaims, shortfallKey, type AuthenticationRequirement, type ProofCheckTime, type ShortfallKey } from '../session/authentication-proof.js'

/** What a policy requires of the user's authentication at the provider (session/authentication-proof.ts). */
export type { AuthenticationRequirement } from '../session/authentication-proof.js'

export type StepUpFailure = 'auth_time' | 'acr' | 'amr'

/** A response that does not prove the requirement: its failure class and a stable code (never a claim value). */
export interface StepUpRefusal {
  readonly failure: StepUpFailure
  readonly code: string
}

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
 * Whether the validated ID token's claims satisfy `requirement`, asked for at
 * `at.requestedAtSeconds`: undefined when they do, else the failure class and a stable code.
 */
export function checkAuthentication (claims: Readonly<Record<string, unknown>>, requirement: AuthenticationRequirement, at: Required<ProofCheckTime>): StepUpRefusal | undefined {
  const shortfall = authenticationShortfall(proofOfTokenClaims(claims), requirement, at)
  return shortfall === undefined ? undefined : { failure: shortfall.part, code: CODES[shortfallKey(shortfall)] }
}

/** The stable code of each shortfall. */
const CODES: Readonly<Record<ShortfallKey, string>> = {
  'auth_time missing': 'AUTH_TIME_MISSING',
  'auth_time in_future': 'AUTH_TIME_IN_FUTURE',
  'auth_time stale': 'AUTH_TIME_STALE',
  'acr missing': 'ACR_MISSING',
  'acr not_requested': 'ACR_NOT_REQUESTED',
  'amr missing': 'AMR_MISSING_METHOD'
}
