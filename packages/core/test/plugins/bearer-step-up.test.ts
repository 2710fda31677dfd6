/**
 * RFC 9470 on the API routes (issue 36, item 3): a valid bearer token whose user authenticated too
 * weakly or too long ago for the route's step-up policy is answered 401 with
 * `WWW-Authenticate: Bearer error="insufficient_user_authentication"` naming the policy's
 * `acr_values` and `max_age` (never anything from the token) and problem+json, never a redirect;
 * a token that proves it passes. A cookie session whose provider cannot step up is forbidden.
 * Tokens minted with jose by an issuer on loopback.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { SignJWT, type JWTPayload } from 'jose'
import { claim, signIn } from '../../src/testing/app.js'
import { bearerChallenge } from '../../src/bearer/challenge.js'
import { buildBearerApp, who, type BearerTestApp } from '../helpers/bearer-app.js'
import { findPlanted } from '../helpers/providers/http-session.js'
import { startTokenIdp, type TokenIdp } from '../helpers/providers/token-idp.js'

const AUDIENCE = 'api://payments'
const HIGH = 'urn:example:loa:high'

test('the challenge: error, acr_values quoted, max_age a number (RFC 9470 section 3)', () => {
  assert.equal(bearerChallenge({ error: 'insufficient_user_authentication', acrValues: `${HIGH} urn:example:loa:max`, maxAge: 300 }),
    `Bearer error="insufficient_user_authentication", acr_values="${HIGH} urn:example:loa:max", max_age=300`)
  assert.equal(bearerChallenge({ error: 'insufficient_user_authentication', maxAge: 0 }), 'Bearer error="insufficient_user_authentication", max_age=0')
})

describe('a step-up policy on an API route', () => {
  let idp: TokenIdp
  let t: BearerTestApp
  const planted: string[] = []

  before(async () => {
    idp = await startTokenIdp('unused')
    t = await buildBearerApp({
      schemes: { Partner: { Issuer: idp.issuer, JwksUri: `${idp.issuer}/jwks`, Audiences: [AUDIENCE] } },
      policies: [
        { name: 'payments.Approve', authentication: { acrValues: [HIGH], amr: ['mfa'], maxAgeSeconds: 300 } },
        { name: 'payments.Now', authentication: { maxAgeSeconds: 0 } }
      ],
      routes: (app) => {
        app.post('/api/payments/approve', { config: { authorize: 'payments.Approve' } }, async (request) => who(request))
        app.get('/api/payments/now', { config: { authorize: 'payments.Now' } }, async (request) => who(request))
      }
    })
  })
  after(async () => {
    await t?.app.close()
    await idp?.close()
  })

  async function token (claims: JWTPayload): Promise<string> {
    const now = Math.floor(Date.now() / 1000)
    const value = await new SignJWT({ iss: idp.issuer, aud: AUDIENCE, sub: 'ada', iat: now, exp: now + 300, ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: 'known', typ: 'JWT' }).sign(idp.signingKey)
    planted.push(value)
    return value
  }
  const now = (): number => Math.floor(Date.now() / 1000)
  const approve = async (claims: JWTPayload) => await t.app.inject({ method: 'POST', url: '/api/payments/approve', headers: { authorization: `Bearer ${await token(claims)}`, accept: 'text/html' } })
  const CHALLENGE = `Bearer error="insufficient_user_authentication", acr_values="${HIGH}", max_age=300`

  const refused: Array<{ name: string, claims: () => JWTPayload }> = [
    { name: 'no auth_time', claims: () => ({ acr: HIGH, amr: ['mfa'] }) },
    { name: 'an auth_time an hour old', claims: () => ({ acr: HIGH, amr: ['mfa'], auth_time: now() - 3600 }) },
    { name: 'an acr not accepted', claims: () => ({ acr: 'urn:example:loa:low', amr: ['mfa'], auth_time: now() }) },
    { name: 'no mfa in amr', claims: () => ({ acr: HIGH, amr: ['pwd'], auth_time: now() }) }
  ]
  for (const entry of refused) {
    test(`${entry.name}: 401 insufficient_user_authentication naming the policy's acr_values and max_age, problem+json, no redirect`, async () => {
      const response = await approve(entry.claims())
      assert.equal(response.statusCode, 401)
      assert.equal(response.headers['www-authenticate'], CHALLENGE)
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
      assert.equal(response.headers.location, undefined)
      assert.equal(response.json().code, 'APP_ERR_AUTH_STEP_UP_REQUIRED')
    })
  }

  test('a token that proves it passes the policy', async () => {
    const response = await approve({ acr: HIGH, amr: ['pwd', 'mfa'], auth_time: now() - 30 })
    assert.equal(response.statusCode, 200)
    assert.equal(response.json().subject, 'ada')
  })

  test('max age 0: max_age=0 and no acr_values; a just-authenticated token passes', async () => {
    const stale = await t.app.inject({ url: '/api/payments/now', headers: { authorization: `Bearer ${await token({ auth_time: now() - 600 })}` } })
    assert.equal(stale.statusCode, 401)
    assert.equal(stale.headers['www-authenticate'], 'Bearer error="insufficient_user_authentication", max_age=0')
    const fresh = await t.app.inject({ url: '/api/payments/now', headers: { authorization: `Bearer ${await token({ auth_time: now() })}` } })
    assert.equal(fresh.statusCode, 200)
    const logged = t.logs.events('authorization.step_up.required').at(-1)
    assert.equal(logged?.policy, 'payments.Now')
    assert.equal(logged?.bearer, true)
    assert.deepEqual(findPlanted(t.logs.text(), planted), [], 'no token in the log')
  })

  test('a cookie session whose provider cannot step up: 403, the step-up logged as unavailable', async () => {
    const cookie = await signIn(t.app, [claim('application:subject', 'cookie-user')])
    const response = await t.app.inject({ url: '/api/payments/now', headers: { cookie } })
    assert.equal(response.statusCode, 403)
    assert.equal(response.json().code, 'APP_ERR_AUTH_FORBIDDEN')
    assert.equal(t.logs.events('authorization.step_up.unavailable').at(-1)?.policy, 'payments.Now')
  })
})
