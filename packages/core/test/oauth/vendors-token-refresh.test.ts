/**
 * SaveTokens and token refresh for an OAuth 2.0 vendor slot against oauth2-mock-server on loopback:
 * the access token, refresh token and expiry are kept in the server-side session record only;
 * `app.session.accessToken` refreshes at the slot's token endpoint (grant_type=refresh_token with
 * the slot's client authentication) when the token expires within a minute, once for concurrent
 * callers; a refresh the vendor refuses with invalid_grant ends the session cleanly, with a log
 * line naming the class and no token or secret in any log.
 */
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildTestApp, storedSession, type TestApp } from '../helpers/app.js'
import { addTokenRoute, getToken as getTokenAt, type TokenAnswer } from '../helpers/providers/access-token-route.js'
import { findPlanted, HttpSession, sessionCookiesSet } from '../helpers/providers/http-session.js'
import { startVendorIdp, type VendorIdp } from '../helpers/providers/oauth-vendor-idp.js'

const SECRET = 'vendor-refresh-secret-PLANTED-58'

describe('VendorA with SaveTokens and refresh tokens', () => {
  let idp: VendorIdp
  let test_: TestApp
  let origin: string

  before(async () => {
    idp = await startVendorIdp({ id: 77, login: 'refresh-user' })
    // Code-grant tokens expire within the skew; refreshed ones live an hour.
    idp.tokenExpiresIn = (grantType) => grantType === 'authorization_code' ? 20 : 3600
    test_ = await buildTestApp({
      nodeEnv: 'development',
      testSignIn: false,
      configure: addTokenRoute,
      settings: { Authentication: { Providers: { VendorA: idp.settings('client-r', SECRET, { SaveTokens: true, TokenEndpointAuthMethod: 'client_secret_post' }) } } }
    })
    await test_.app.listen({ host: '127.0.0.1', port: 0 })
    origin = `http://127.0.0.1:${(test_.app.server.address() as AddressInfo).port}`
  })
  after(async () => {
    await test_?.app.close()
    await idp?.close()
  })

  async function signIn (): Promise<string> {
    const session = new HttpSession()
    const start = await session.request(`${origin}/External/Challenge?provider=VendorA`)
    const authorize = await session.request(start.location!)
    const callback = await session.request(authorize.location!)
    assert.equal(sessionCookiesSet(callback.response).length, 1, 'signed in')
    return session.jar.header(new URL(origin))
  }

  const getToken = async (cookie: string): Promise<TokenAnswer> => await getTokenAt(origin, cookie)

  const refreshRequests = (): Array<{ authorization: string | undefined, body: Record<string, string> }> =>
    idp.tokenRequests.filter((request) => request.body.grant_type === 'refresh_token')

  test('the tokens are stored server-side; concurrent callers share one refresh grant with the slot\'s client authentication', async () => {
    const cookie = await signIn()
    const stored = await storedSession(test_.app, test_.keyRing, cookie)
    assert.ok(stored?.tokens?.access_token !== undefined && stored.tokens.refresh_token !== undefined && stored.tokens.expires_at !== undefined)
    const before = refreshRequests().length
    const results = await Promise.all(Array.from({ length: 6 }, async () => await getToken(cookie)))
    assert.deepEqual(results.map((result) => result.status), Array(6).fill(200))
    assert.equal(new Set(results.map((result) => result.token)).size, 1)
    const sent = refreshRequests().slice(before)
    assert.equal(sent.length, 1, 'one refresh grant')
    assert.equal(sent[0]?.body.refresh_token, stored.tokens.refresh_token)
    assert.equal(sent[0]?.body.client_secret, SECRET, 'client_secret_post as configured')
    const after = await storedSession(test_.app, test_.keyRing, cookie)
    assert.equal(after?.tokens?.access_token, results[0]?.token)
    // (oauth2-mock-server may mint the same JWT within one second; the expiry shows the refresh.)
    assert.ok(Number(after?.tokens?.expires_at) > Number(stored.tokens.expires_at) + 3000, 'the refreshed expiry is stored')
    // Valid for an hour now: handed out without another grant.
    assert.equal((await getToken(cookie)).token, results[0]?.token)
    assert.equal(refreshRequests().length - before, 1)
    const planted = [SECRET, ...idp.planted]
    assert.deepEqual(findPlanted(results.flatMap((result) => result.setCookie).join('\n'), planted), [])
    assert.deepEqual(findPlanted(test_.logs.text(), planted), [])
  })

  test('invalid_grant, and GitHub\'s bad_refresh_token with HTTP 200, end the session cleanly', async () => {
    for (const answer of [{ status: 400, body: { error: 'invalid_grant', error_description: 'refresh token revoked' } }, { status: 200, body: { error: 'bad_refresh_token' } }]) {
      const cookie = await signIn()
      idp.tokenAnswer = answer
      try {
        const result = await getToken(cookie)
        assert.equal(result.status, 401)
        assert.ok(result.setCookie.some((line) => /Authentication=;/.test(line)), 'the session cookie is deleted')
      } finally {
        idp.tokenAnswer = undefined
      }
      const page = await fetch(`${origin}/api/application-information`, { headers: { cookie, accept: 'application/json' } })
      assert.equal(page.status, 401, 'the old cookie is anonymous')
      const failed = test_.logs.events('session.token_refresh.failed').at(-1)
      assert.equal(failed?.failure, 'invalid_grant')
      assert.equal(failed?.oauthError, answer.body.error)
      assert.equal(failed?.httpStatus, answer.status)
    }
    assert.doesNotMatch(test_.logs.text(), /refresh token revoked/, 'no error description')
    assert.deepEqual(findPlanted(test_.logs.text(), [SECRET, ...idp.planted]), [])
  })

  test('a vendor that cannot be reached keeps the session and the still valid token', async () => {
    const cookie = await signIn()
    idp.tokenAnswer = { status: 503, body: { error: 'temporarily_unavailable' } }
    try {
      const result = await getToken(cookie)
      // The code-grant token still has about 20 s: handed out while the refresh fails.
      assert.equal(result.status, 200)
      assert.equal(result.token, (await storedSession(test_.app, test_.keyRing, cookie))?.tokens?.access_token)
    } finally {
      idp.tokenAnswer = undefined
    }
    assert.equal(test_.logs.events('session.token_refresh.failed').at(-1)?.failure, 'unavailable')
    const page = await fetch(`${origin}/api/application-information`, { headers: { cookie, accept: 'application/json' } })
    assert.equal(page.status, 200, 'the session stays')
  })
})
