/**
 * A step-up policy's maximum age means what it says (issue 40, item 7): an authentication older
 * than `maxAgeSeconds` plus the step-up clock skew (STEP_UP_CLOCK_SKEW_SECONDS, 10 s) is sent back
 * to authenticate again, where 1.2.x let it pass for 60 more seconds; and an authentication
 * without a time (no `auth_time`, no `AuthnInstant`) never meets a maximum age. On the
 * session's recorded proof (authorization/policies.ts), through the app with a JwtBearer scheme's
 * tokens (RFC 9470) minted with jose by an issuer on loopback, and on a step-up's answer
 * (oidc/step-up.ts, saml2/step-up.ts), which uses the same clock skew in place of a scheme's
 * `ClockSkewSeconds` (60 s by default), so that the app never accepts an answer the route then
 * refuses.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { SignJWT, type JWTPayload } from 'jose'
import { evaluatePolicy, type AuthorizationPolicy } from '../../src/authorization/policies.js'
import { checkAuthentication } from '../../src/oidc/step-up.js'
import { checkAuthnStatement } from '../../src/saml2/step-up.js'
import { STEP_UP_CLOCK_SKEW_SECONDS, type AuthenticationProof } from '../../src/session/authentication-proof.js'
import { Principal } from '../../src/session/principal.js'
import { buildBearerApp, type BearerTestApp } from '../helpers/bearer-app.js'
import { startTokenIdp, type TokenIdp } from '../helpers/providers/token-idp.js'

const NOW = 1_800_000_000
const WITHIN_30_SECONDS: AuthorizationPolicy = { name: 'Recent', authentication: { maxAgeSeconds: 30 } }

function session (authentication?: AuthenticationProof): Principal {
  return new Principal({
    sessionId: '00000000-0000-4000-8000-000000000000',
    scheme: 'OpenIdConnect',
    claims: [{ type: 'application:subject', value: 'ada', issuer: 'https://idp.example' }],
    issuedAt: NOW - 600,
    expiresAt: NOW + 3600,
    absoluteExpiresAt: NOW + 3600,
    ...(authentication === undefined ? {} : { authentication })
  })
}

describe('the session side', () => {
  const cases: Array<{ name: string, proof?: AuthenticationProof, policy?: AuthorizationPolicy, expected: string }> = [
    { name: 'authenticated 45 s ago, a maximum age of 30', proof: { authTime: NOW - 45 }, expected: 'step_up' },
    { name: 'authenticated 20 s ago, a maximum age of 30', proof: { authTime: NOW - 20 }, expected: 'allow' },
    { name: 'at the maximum age plus the clock skew', proof: { authTime: NOW - 30 - STEP_UP_CLOCK_SKEW_SECONDS }, expected: 'allow' },
    { name: 'one second past the maximum age plus the clock skew', proof: { authTime: NOW - 30 - STEP_UP_CLOCK_SKEW_SECONDS - 1 }, expected: 'step_up' },
    { name: 'no auth_time (acr and amr proved)', proof: { acr: 'urn:example:loa:high', amr: ['mfa'] }, expected: 'step_up' },
    { name: 'no auth_time, a maximum age of a day', proof: { acr: 'urn:example:loa:high' }, policy: { name: 'Day', authentication: { maxAgeSeconds: 86_400 } }, expected: 'step_up' },
    { name: 'no proof at all', expected: 'step_up' }
  ]
  for (const entry of cases) {
    test(`${entry.name}: ${entry.expected}`, () => {
      assert.equal(evaluatePolicy(entry.policy ?? WITHIN_30_SECONDS, session(entry.proof), NOW), entry.expected)
    })
  }
})

describe('a bearer token on a route whose policy has a maximum age of 30 s', () => {
  const AUDIENCE = 'api://max-age'
  let idp: TokenIdp
  let t: BearerTestApp

  before(async () => {
    idp = await startTokenIdp('unused')
    t = await buildBearerApp({
      schemes: { Partner: { Issuer: idp.issuer, JwksUri: `${idp.issuer}/jwks`, Audiences: [AUDIENCE] } },
      policies: [WITHIN_30_SECONDS],
      routes: (app) => { app.get('/api/recent', { config: { authorize: 'Recent' } }, async () => 'recent') }
    })
  })
  after(async () => {
    await t?.app.close()
    await idp?.close()
  })

  async function call (claims: JWTPayload): Promise<{ status: number, challenge: unknown }> {
    const now = Math.floor(Date.now() / 1000)
    const token = await new SignJWT({ iss: idp.issuer, aud: AUDIENCE, sub: 'ada', iat: now, exp: now + 300, ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: 'known', typ: 'JWT' }).sign(idp.signingKey)
    const response = await t.app.inject({ url: '/api/recent', headers: { authorization: `Bearer ${token}` } })
    return { status: response.statusCode, challenge: response.headers['www-authenticate'] }
  }
  const CHALLENGE = 'Bearer error="insufficient_user_authentication", max_age=30'

  test('a user who authenticated 45 s ago: 401 insufficient_user_authentication, max_age=30', async () => {
    assert.deepEqual(await call({ auth_time: Math.floor(Date.now() / 1000) - 45 }), { status: 401, challenge: CHALLENGE })
  })
  test('a token without auth_time: 401 insufficient_user_authentication', async () => {
    assert.deepEqual(await call({}), { status: 401, challenge: CHALLENGE })
  })
  test('a user who authenticated 5 s ago: allowed', async () => {
    assert.deepEqual(await call({ auth_time: Math.floor(Date.now() / 1000) - 5 }), { status: 200, challenge: undefined })
  })
})

describe('the step-up answer, checked with the same clock skew', () => {
  const AT = { nowSeconds: NOW, requestedAtSeconds: NOW - 20 }
  const cases: Array<{ name: string, check: () => unknown, expected?: string }> = [
    { name: 'OpenID Connect, max_age 30: auth_time 45 s old', check: () => checkAuthentication({ auth_time: NOW - 45 }, { maxAgeSeconds: 30 }, AT), expected: 'auth_time AUTH_TIME_STALE' },
    { name: 'OpenID Connect, max_age 30: auth_time 40 s old', check: () => checkAuthentication({ auth_time: NOW - 40 }, { maxAgeSeconds: 30 }, AT) },
    { name: 'OpenID Connect, max_age 0: auth_time 11 s before the request', check: () => checkAuthentication({ auth_time: NOW - 31 }, { maxAgeSeconds: 0 }, AT), expected: 'auth_time AUTH_TIME_STALE' },
    { name: 'OpenID Connect, max_age 0: auth_time 11 s in the future', check: () => checkAuthentication({ auth_time: NOW + 11 }, { maxAgeSeconds: 0 }, AT), expected: 'auth_time AUTH_TIME_IN_FUTURE' },
    { name: 'SAML2 ForceAuthn: AuthnInstant 10 s before the request', check: () => checkAuthnStatement({ authnInstantMs: (NOW - 30) * 1000 }, { maxAgeSeconds: 300 }, AT) },
    { name: 'SAML2 ForceAuthn: AuthnInstant 11 s before the request', check: () => checkAuthnStatement({ authnInstantMs: (NOW - 31) * 1000 }, { maxAgeSeconds: 300 }, AT), expected: 'auth_time AUTHN_INSTANT_STALE' },
    { name: 'SAML2 ForceAuthn: no AuthnInstant', check: () => checkAuthnStatement({ authnContextClassRef: 'urn:oasis:names:tc:SAML:2.0:ac:classes:X509' }, { maxAgeSeconds: 300 }, AT), expected: 'auth_time AUTHN_INSTANT_MISSING' }
  ]
  for (const entry of cases) {
    test(`${entry.name}: ${entry.expected ?? 'accepted'}`, () => {
      const unmet = entry.check() as { failure: string, code: string } | undefined
      assert.equal(unmet === undefined ? undefined : `${unmet.failure} ${unmet.code}`, entry.expected)
    })
  }
})
