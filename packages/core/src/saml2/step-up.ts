/**
 * Step-up authentication, the SAML2 protocol step (issue 36, item 3): what the AuthnRequest asks
 * for and what the assertion must prove (SAML Core 3.3.2.2.1 and 2.7.2).
 * - A maximum age asks for `ForceAuthn="true"` (SAML has no max_age: the IdP authenticates the
 *   user anew), and the assertion's `AuthnInstant` must not be older than the request (with the
 *   clock skew) - failure class `auth_time`; a missing `AuthnInstant` too.
 * - Accepted `acr` values become `RequestedAuthnContext` with their `AuthnContextClassRef`s and
 *   Comparison `exact` or `minimum`, and the assertion's `AuthnContextClassRef` must be one of
 *   them - `authn_context`.
 * - `amr` methods cannot be proved by a SAML2 assertion: a requirement that names any is refused
 *   as `amr` (set `amr: []` for the SAML2 scheme in the policy's `schemes`).
 * Plain inputs and results, no Fastify types.
 */
import type { SamlConfig } from '@node-saml/node-saml'
import type { AuthenticationProof, AuthenticationRequirement } from '../session/authentication-proof.js'

/** What the verified assertion's AuthnStatement says (read from the signature-covered XML). */
export interface AuthnStatementFacts {
  readonly authnContextClassRef?: string
  /** `AuthnInstant`, milliseconds since the epoch. */
  readonly authnInstantMs?: number
}

/** The node-saml options of an AuthnRequest that asks for `requirement` (none for an ordinary sign-in). */
export function stepUpRequestOptions (requirement: AuthenticationRequirement | undefined): Partial<SamlConfig> {
  if (requirement === undefined) return {}
  const contexts = requirement.acrValues ?? []
  return {
    forceAuthn: requirement.maxAgeSeconds !== undefined,
    ...(contexts.length === 0
      ? {}
      : { disableRequestedAuthnContext: false, authnContext: [...contexts], racComparison: requirement.authnContextComparison ?? 'exact' })
  }
}

/** The session's proof from an AuthnStatement: its class as `acr`, its instant as `authTime`. */
export function proofOfAuthnStatement (facts: AuthnStatementFacts): AuthenticationProof | undefined {
  const acr = facts.authnContextClassRef
  const authTime = facts.authnInstantMs === undefined ? undefined : Math.floor(facts.authnInstantMs / 1000)
  if (acr === undefined && authTime === undefined) return undefined
  return { ...(acr === undefined ? {} : { acr }), ...(authTime === undefined ? {} : { authTime }) }
}

/**
 * Whether the assertion proves `requirement`: undefined when it does, else the failure class and
 * a stable code (never a value from the assertion).
 */
export function checkAuthnStatement (facts: AuthnStatementFacts, requirement: AuthenticationRequirement, at: {
  /** When the AuthnRequest was made, seconds since the epoch. */
  readonly requestedAtSeconds: number
  readonly nowSeconds: number
  readonly clockSkewSeconds: number
}): { readonly failure: 'auth_time' | 'authn_context' | 'amr', readonly code: string } | undefined {
  if (requirement.maxAgeSeconds !== undefined) {
    if (facts.authnInstantMs === undefined) return { failure: 'auth_time', code: 'AUTHN_INSTANT_MISSING' }
    const instant = facts.authnInstantMs / 1000
    if (instant > at.nowSeconds + at.clockSkewSeconds) return { failure: 'auth_time', code: 'AUTHN_INSTANT_IN_FUTURE' }
    // ForceAuthn: the authentication happened after the request, not in an older IdP session.
    if (instant < at.requestedAtSeconds - at.clockSkewSeconds) return { failure: 'auth_time', code: 'AUTHN_INSTANT_STALE' }
  }
  const contexts = requirement.acrValues ?? []
  if (contexts.length > 0) {
    if (facts.authnContextClassRef === undefined) return { failure: 'authn_context', code: 'AUTHN_CONTEXT_MISSING' }
    if (!contexts.includes(facts.authnContextClassRef)) return { failure: 'authn_context', code: 'AUTHN_CONTEXT_NOT_REQUESTED' }
  }
  if ((requirement.amr ?? []).length > 0) return { failure: 'amr', code: 'AMR_NOT_IN_SAML2' }
  return undefined
}
