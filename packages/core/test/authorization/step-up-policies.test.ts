/**
 * Step-up policies evaluated on the session's recorded proof (issue 36, item 3;
 * authorization/policies.ts, session/authentication-proof.ts): a principal that meets the rest of
 * the policy but authenticated too weakly or too long ago is `step_up`, never `forbid` or `allow`;
 * per-scheme acr values replace the common ones for that scheme only; the proof survives the
 * sealed session record, and a malformed one is dropped (the session then satisfies nothing).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { assertPolicyAuthentication, authenticationRequirementOf, evaluatePolicy, type AuthorizationPolicy } from '../../src/authorization/policies.js'
import { STEP_UP_CLOCK_SKEW_SECONDS, unmetAuthentication, type AuthenticationProof } from '../../src/session/authentication-proof.js'
import { Principal } from '../../src/session/principal.js'
import { openTicket, sealTicket } from '../../src/session/ticket.js'
import { testKeyRing } from '../../src/testing/app.js'

const NOW = 1_800_000_000

function principal (scheme: string, authentication?: AuthenticationProof, role = 'Reader'): Principal {
  return new Principal({
    sessionId: '00000000-0000-4000-8000-000000000000',
    scheme,
    claims: [{ type: 'application:subject', value: 'ada', issuer: 'https://idp.example' }, { type: 'application:role', value: role, issuer: 'https://idp.example' }],
    issuedAt: NOW - 10,
    expiresAt: NOW + 3600,
    absoluteExpiresAt: NOW + 3600,
    ...(authentication === undefined ? {} : { authentication })
  })
}

const policy: AuthorizationPolicy = {
  name: 'Payments',
  requirement: (user) => user.hasAnyValue('application:role', new Set(['Reader'])),
  authentication: {
    acrValues: ['urn:example:loa:high'],
    amr: ['mfa'],
    maxAgeSeconds: 300,
    // A SAML2 IdP names its context classes otherwise and proves no amr.
    schemes: { Saml2: { acrValues: ['urn:oasis:names:tc:SAML:2.0:ac:classes:MultiFactor'], amr: [] } }
  }
}

const cases: Array<{ name: string, principal: Principal | undefined, expected: string }> = [
  { name: 'anonymous', principal: undefined, expected: 'challenge' },
  { name: 'lacks the role (step-up would not help)', principal: principal('OpenIdConnect', { acr: 'urn:example:loa:high', amr: ['mfa'], authTime: NOW }, 'Guest'), expected: 'forbid' },
  { name: 'no proof recorded', principal: principal('OpenIdConnect'), expected: 'step_up' },
  { name: 'acr, mfa, authenticated a minute ago', principal: principal('OpenIdConnect', { acr: 'urn:example:loa:high', amr: ['pwd', 'mfa'], authTime: NOW - 60 }), expected: 'allow' },
  { name: 'a low acr', principal: principal('OpenIdConnect', { acr: 'urn:example:loa:low', amr: ['mfa'], authTime: NOW - 60 }), expected: 'step_up' },
  { name: 'no mfa', principal: principal('OpenIdConnect', { acr: 'urn:example:loa:high', amr: ['pwd'], authTime: NOW - 60 }), expected: 'step_up' },
  { name: 'authenticated an hour ago', principal: principal('OpenIdConnect', { acr: 'urn:example:loa:high', amr: ['mfa'], authTime: NOW - 3600 }), expected: 'step_up' },
  { name: 'Saml2: its own context class, no amr needed', principal: principal('Saml2', { acr: 'urn:oasis:names:tc:SAML:2.0:ac:classes:MultiFactor', authTime: NOW - 60 }), expected: 'allow' },
  { name: 'Saml2: the OpenID Connect acr is not its', principal: principal('Saml2', { acr: 'urn:example:loa:high', authTime: NOW - 60 }), expected: 'step_up' }
]
for (const entry of cases) {
  test(`policy with step-up, ${entry.name}: ${entry.expected}`, () => {
    assert.equal(evaluatePolicy(policy, entry.principal, NOW), entry.expected)
  })
}

test('a policy without authentication never asks for a step-up', () => {
  assert.equal(evaluatePolicy({ name: 'Plain' }, principal('OpenIdConnect'), NOW), 'allow')
  assert.equal(authenticationRequirementOf({ name: 'Empty', authentication: { acrValues: [] } }, 'OpenIdConnect'), undefined)
})

test('a maximum age of 0 is met only just after the re-authentication', () => {
  assert.equal(unmetAuthentication({ authTime: NOW - 5 }, { maxAgeSeconds: 0 }, NOW), undefined)
  assert.equal(unmetAuthentication({ authTime: NOW - STEP_UP_CLOCK_SKEW_SECONDS - 1 }, { maxAgeSeconds: 0 }, NOW), 'auth_time')
  assert.equal(unmetAuthentication({ authTime: NOW + STEP_UP_CLOCK_SKEW_SECONDS + 1 }, { maxAgeSeconds: 300 }, NOW), 'auth_time')
})

test('a malformed authentication requirement is refused naming the field', () => {
  assert.throws(() => { assertPolicyAuthentication({ name: 'P', authentication: { acrValues: ['two words'] } }) }, { message: 'policy P: authentication.acrValues must be a list of non-empty values without spaces' })
  assert.throws(() => { assertPolicyAuthentication({ name: 'P', authentication: { maxAgeSeconds: -1 } }) }, { message: 'policy P: authentication.maxAgeSeconds must be a whole number of seconds, 0 or more' })
  assert.throws(() => { assertPolicyAuthentication({ name: 'P', authentication: { schemes: { Saml2: { amr: [''] } } } }) }, { message: 'policy P: authentication.schemes.Saml2.amr must be a list of non-empty values without spaces' })
})

test('the proof survives the sealed session record; a malformed one is dropped', () => {
  const ring = testKeyRing()
  const ticket = principal('OpenIdConnect', { acr: 'urn:example:loa:high', amr: ['pwd', 'mfa'], authTime: NOW - 1 }).ticket
  assert.deepEqual(openTicket(sealTicket(ticket, ring), ring, NOW)?.authentication, { acr: 'urn:example:loa:high', amr: ['pwd', 'mfa'], authTime: NOW - 1 })
  const malformed = { ...ticket, authentication: { acr: 7 } as unknown as AuthenticationProof }
  const opened = openTicket(sealTicket(malformed, ring), ring, NOW)
  assert.equal(opened?.sessionId, ticket.sessionId)
  assert.equal(opened?.authentication, undefined)
})
