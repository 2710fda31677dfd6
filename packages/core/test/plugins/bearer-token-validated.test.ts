/**
 * The token-validated hook (issue 40, item 13; ASP.NET's `OnTokenValidated`):
 * `app.requestCredentials.onTokenValidated(hook)` is called once per verified token with the
 * caller, may add claims that the app's policies then read (an administrator role from the
 * app's own records), and what it answered is what the verified-token cache keeps: a second call
 * with the same token carries the claims with no hook call. A refusal answers 401 `invalid_token`
 * with one `bearer.refused` line, failure `hook`, and is not cached; a hook may not add the
 * subject, the tenant or a scope, and one that throws fails the request (never lets it pass).
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { SignJWT } from 'jose'
import type { BearerAuthentication } from '../../src/bearer/jwt-bearer-scheme.js'
import { buildBearerApp, who, type BearerTestApp } from '../helpers/bearer-app.js'
import { startTokenIdp, type TokenIdp } from '../helpers/providers/token-idp.js'

const AUDIENCE = 'api://orders'

describe('a token-validated hook', () => {
  let idp: TokenIdp
  let t: BearerTestApp
  const seen: BearerAuthentication[] = []
  const refused = new Set<string>()
  const nonsense = new Map<string, unknown>()

  before(async () => {
    idp = await startTokenIdp('unused')
    t = await buildBearerApp({
      schemes: { Partner: { Issuer: idp.issuer, JwksUri: `${idp.issuer}/jwks`, Audiences: [AUDIENCE] } },
      refusalsPerWindow: 1000,
      routes: (app) => {
        app.requestCredentials.onTokenValidated((authentication) => {
          seen.push(authentication)
          const subject = authentication.principal.subject ?? ''
          if (nonsense.has(subject)) return nonsense.get(subject) as never
          if (refused.has(subject)) return { allow: false }
          return subject === 'ada' ? { allow: true, add: { 'application:role': ['Administrator'], 'app:department': 'orders' } } : { allow: true }
        })
        app.get('/api/claims', async (request) => ({ ...who(request), claims: request.user?.claims.filter((claim) => claim.issuer === 'application') }))
      }
    })
  })
  after(async () => {
    await t?.app.close()
    await idp?.close()
  })

  async function token (sub: string, extra: Record<string, unknown> = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000)
    return await new SignJWT({ iss: idp.issuer, aud: AUDIENCE, sub, iat: now, exp: now + 300, client_id: 'orders-spa', scope: 'orders.read', ...extra })
      .setProtectedHeader({ alg: 'RS256', kid: 'known', typ: 'JWT' }).sign(idp.signingKey)
  }
  const call = async (url: string, bearer: string): Promise<{ statusCode: number, body: string, headers: Record<string, unknown> }> => await t.app.inject({ url, headers: { authorization: `Bearer ${bearer}` } })

  test('adds claims a policy reads, once per token: the cache keeps its answer', async () => {
    const ada = await token('ada')
    const before = seen.length
    const first = await call('/api/admin', ada)
    assert.equal(first.statusCode, 200, 'the added role satisfies the administrator policy')
    assert.equal(seen.length, before + 1)
    const hooked = seen.at(-1) as BearerAuthentication
    assert.equal(hooked.scheme, 'Partner')
    assert.equal(hooked.clientId, 'orders-spa')
    assert.deepEqual(hooked.scopes, ['orders.read'])
    assert.equal(hooked.machine, false)
    const second = await call('/api/claims', ada)
    assert.equal(second.statusCode, 200)
    assert.deepEqual(JSON.parse(second.body).claims, [
      { type: 'application:role', value: 'Administrator', issuer: 'application' },
      { type: 'app:department', value: 'orders', issuer: 'application' }
    ])
    assert.equal(seen.length, before + 1, 'a cache hit calls no hook')
  })

  test('without an added role the administrator policy refuses', async () => {
    assert.equal((await call('/api/admin', await token('grace'))).statusCode, 403)
  })

  test('a refusal answers 401 invalid_token, logs failure hook, and is not cached', async () => {
    refused.add('mallory')
    const mallory = await token('mallory')
    const logged = t.logs.events('bearer.refused').length
    const before = seen.length
    const answer = await call('/api/orders', mallory)
    assert.equal(answer.statusCode, 401)
    assert.match(String(answer.headers['www-authenticate']), /^Bearer error="invalid_token"/)
    assert.deepEqual(t.logs.events('bearer.refused').slice(logged).map((line) => line.failure), ['hook'])
    assert.ok(!JSON.stringify(t.logs.events('bearer.refused')).includes(mallory), 'the token is never logged')
    refused.delete('mallory')
    assert.equal((await call('/api/orders', mallory)).statusCode, 200, 'asked again, it allows')
    assert.equal(seen.length, before + 2)
  })

  test('a hook may not add the subject, the tenant or a scope, nor answer nonsense: the request fails, the token never passes', async () => {
    const answers: Array<[string, unknown]> = [
      ['eve-subject', { allow: true, add: { 'application:subject': 'ada' } }],
      ['eve-tenant', { allow: true, add: { 'application:tenant': 'other' } }],
      ['eve-scope', { allow: true, add: { 'application:scope': 'orders.write' } }],
      ['eve-value', { allow: true, add: { 'application:role': [1] } }],
      ['eve-none', undefined]
    ]
    for (const [subject, answer] of answers) {
      nonsense.set(subject, answer)
      const response = await call('/api/orders', await token(subject))
      assert.equal(response.statusCode, 500, subject)
    }
  })
})
