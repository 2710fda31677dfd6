/**
 * The deny checks (issue 43, item 1, for issues 41 and 42): a check registered with
 * `app.requestCredentials.addDenyCheck` refuses a caller whose token is still valid and already
 * in the verified-token cache, on the very next request: 401 `invalid_token` with the route's
 * challenge, one `bearer.refused` line with failure `denied` (never the token), an anonymous
 * caller on an anonymous route, and the caller passes again once the check stops denying. A check
 * answering with a promise is awaited; one that fails fails the request (never "allowed").
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { SignJWT } from 'jose'
import { buildBearerApp, type BearerTestApp } from '../helpers/bearer-app.js'
import { startTokenIdp, type TokenIdp } from '../helpers/providers/token-idp.js'

const AUDIENCE = 'api://orders'

describe('a registered deny check', () => {
  let idp: TokenIdp
  let t: BearerTestApp
  /** Subjects the app's checks deny: `sync` answers at once, `later` with a promise. */
  const denied = { sync: new Set<string>(), later: new Set<string>(), failing: false }

  before(async () => {
    idp = await startTokenIdp('unused')
    t = await buildBearerApp({
      schemes: { Partner: { Issuer: idp.issuer, JwksUri: `${idp.issuer}/jwks`, Audiences: [AUDIENCE] } },
      refusalsPerWindow: 1000,
      routes: (app) => {
        app.requestCredentials.addDenyCheck((principal) => denied.sync.has(principal.subject ?? ''))
        app.requestCredentials.addDenyCheck(async (principal) => {
          if (denied.failing) throw new Error('revocation records unavailable')
          return denied.later.has(principal.subject ?? '')
        })
      }
    })
  })
  after(async () => {
    await t?.app.close()
    await idp?.close()
  })

  async function token (sub: string): Promise<string> {
    const now = Math.floor(Date.now() / 1000)
    return await new SignJWT({ iss: idp.issuer, aud: AUDIENCE, sub, iat: now, exp: now + 300 })
      .setProtectedHeader({ alg: 'RS256', kid: 'known', typ: 'JWT' }).sign(idp.signingKey)
  }

  test('refuses a cached token on the next request, and lets it pass again once it stops denying', async () => {
    const ada = await token('ada')
    const call = async (url = '/api/orders'): Promise<{ statusCode: number, body: string, headers: Record<string, unknown> }> => await t.app.inject({ url, headers: { authorization: `Bearer ${ada}` } })
    assert.equal((await call()).statusCode, 200)
    const verified = t.logs.events('bearer.authenticated').length
    const refusedBefore = t.logs.events('bearer.refused').length
    denied.sync.add('ada')
    const refused = await call()
    assert.equal(refused.statusCode, 401)
    assert.equal(refused.headers['www-authenticate'], 'Bearer error="invalid_token", resource_metadata="http://localhost:80/.well-known/oauth-protected-resource"')
    assert.equal(JSON.parse(refused.body).code, 'APP_ERR_BEARER_INVALID')
    const lines = t.logs.events('bearer.refused').slice(refusedBefore)
    assert.deepEqual(lines.map((line) => line.failure), ['denied'])
    assert.ok(!JSON.stringify(lines).includes(ada), 'the token is never logged')
    // On an anonymous route the denied caller is anonymous.
    assert.equal(JSON.parse((await call('/api/public')).body).subject, null)
    denied.sync.delete('ada')
    assert.equal((await call()).statusCode, 200)
    assert.equal(t.logs.events('bearer.authenticated').length, verified, 'every call after the first was served from the cache')
  })

  test('a check answering with a promise is awaited, for a token verified now and a cached one', async () => {
    const grace = await token('grace')
    denied.later.add('grace')
    const call = async (): Promise<number> => (await t.app.inject({ url: '/api/orders', headers: { authorization: `Bearer ${grace}` } })).statusCode
    assert.equal(await call(), 401, 'verified now, then denied')
    denied.later.delete('grace')
    assert.equal(await call(), 200)
    denied.later.add('grace')
    assert.equal(await call(), 401, 'cached, then denied')
    denied.later.delete('grace')
  })

  test('a check that fails fails the request: it is never read as allowed', async () => {
    const alan = await token('alan')
    denied.failing = true
    try {
      const response = await t.app.inject({ url: '/api/orders', headers: { authorization: `Bearer ${alan}` } })
      assert.equal(response.statusCode, 500)
    } finally {
      denied.failing = false
    }
  })
})
