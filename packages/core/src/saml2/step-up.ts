/**
 * Step-up authentication, the SAML2 protocol step (issue 36, item 3; SAML Core 3.3.2.2.1 and
 * 2.7.2): the requirement becomes the AuthnRequest's `ForceAuthn` and `RequestedAuthnContext`;
 * the assertion's AuthnStatement is read as a proof and checked by the one step-up check
 * (session/authentication-proof.ts `authenticationShortfall`), whose shortfall is named here in
 * SAML2's failure classes and codes:
 * - A maximum age asks for `ForceAuthn="true"` (SAML has no max_age: the IdP authenticates the
 *   user anew), so the assertion is checked as for a maximum age of 0: its `AuthnInstant` must not
 *   be older than the request - failure class `auth_time`; a missing `AuthnInstant` too.
 * - Accepted `acr` values become `RequestedAuthnContext` with their `AuthnContextClassRef`s and
 *   Comparison `exact` or `minimum`, and the assertion's `AuthnContextClassRef` must be one of
 *   them - `authn_context`.
 * - `amr` methods cannot be proved by a SAML2 assertion: a requirement that names any is refused
 *   as `amr` (set `amr: []` for the SAML2 scheme in the policy's `schemes`).
 * Plain inputs and results, no Fastify types.
 */
import type { SamlConfig } from '@node-saml/node-saml'
import { authenticationShortfall, shortfallKey, type AuthenticationProof, type AuthenticationRequirement, type ProofCheckTime, type ShortfallKey } from '../session/authentication-proof.js'

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

export type Saml2StepUpFailure = 'auth_time' | 'authn_context' | 'amr'

/** Each shortfall's failure class and stable code (never a value from the assertion). */
const FAILURES: Readonly<Record<ShortfallKey, { readonly failure: Saml2StepUpFailure, readonly code: string }>> = {
  'auth_time missing': { failure: 'auth_time', code: 'AUTHN_INSTANT_MISSING' },
  'auth_time in_future': { failure: 'auth_time', code: 'AUTHN_INSTANT_IN_FUTURE' },
  'auth_time stale': { failure: 'auth_time', code: 'AUTHN_INSTANT_STALE' },
  'acr missing': { failure: 'authn_context', code: 'AUTHN_CONTEXT_MISSING' },
  'acr not_requested': { failure: 'authn_context', code: 'AUTHN_CONTEXT_NOT_REQUESTED' },
  'amr missing': { failure: 'amr', code: 'AMR_NOT_IN_SAML2' }
}

/**
 * Whether the assertion proves `requirement`, asked for at `at.requestedAtSeconds`: undefined
 * when it does, else the failure class and a stable code.
 */
export function checkAuthnStatement (facts: AuthnStatementFacts, requirement: AuthenticationRequirement, at: Required<ProofCheckTime>): { readonly failure: Saml2StepUpFailure, readonly code: string } | undefined {
  // What ForceAuthn asked for: an authentication after the request, a maximum age of 0.
  const asked: AuthenticationRequirement = requirement.maxAgeSeconds === undefined ? requirement : { ...requirement, maxAgeSeconds: 0 }
  const shortfall = authenticationShortfall(proofOfAuthnStatement(facts), asked, at)
  return shortfall === undefined ? undefined : FAILURES[shortfallKey(shortfall)]
}
