/**
 * `app.downstreamApis.callAsUser` with a real sign-in: oidc-provider on loopback signs the user in
 * (SaveTokens, refresh tokens issued), and a recording API on loopback accepts only tokens the
 * provider's userinfo endpoint accepts. The call carries the session's saved access token; a 401
 * from the API refreshes it (once per session, even for concurrent calls) and retries once, never
 * more; without a session the call is refused with APP_ERR_DOWNSTREAM_SIGN_IN_REQUIRED before
 * anything is sent; no token or secret reaches a log line.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { storedSession } from '../helpers/app.js'
import { startDownstreamServer, type DownstreamServer } from '../helpers/downstream-server.js'
import { HttpSession, sessionCookiesSet } from '../helpers/providers/http-session.js'
import { throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import { startOidcIdp, type OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startProviderApp, waitUntilReady, type ListeningApp } from '../helpers/providers/provider-app.js'

const SECRET = 'downstream-user-secret-PLANTED-41'
const CLIENT_ID = 'downstream-user-client'
const CALL_PATH = '/test-only/orders'

function addCallRoute (app: FastifyInstance): void {
  app.get(CALL_PATH, { config: { allowAnonymous: true } }, async (request, reply) => {
    const response = await app.downstreamApis.callAsUser(request, reply, 'Orders', '/orders?open=1')
    return { status: response.status }
  })
}

describe('calls as the signed-in user with the saved access token', () => {
  let idp: OidcIdp
  let api: DownstreamServer
  let app: ListeningApp

  before(async () => {
    idp = await startOidcIdp({ clientId: CLIENT_ID, clientSecret: SECRET, accounts: { ada: { name: 'Ada Lovelace' } }, refreshTokens: { accessTokenTtlSeconds: 3600 } })
    api = await startDownstreamServer()
    // The API accepts what the provider accepts: its userinfo endpoint is the token's judge.
    api.verify = async (authorization) => {
      const response = await fetch(`${idp.issuer}/me`, { headers: { authorization }, signal: AbortSignal.timeout(5_000) })
      await response.arrayBuffer()
      return response.status === 200
    }
    app = await startProviderApp({
      Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: idp.issuer, ClientId: CLIENT_ID, ClientSecret: SECRET, SaveTokens: true, Scopes: ['openid', 'profile'] } } },
      DownstreamApis: { Orders: { BaseUrl: `${api.origin}/v2`, Scopes: ['profile'], UserToken: { Scheme: 'OpenIdConnect' } } }
    }, addCallRoute)
    await idp.configure(`${app.origin}/signin-oidc`)
    await waitUntilReady(app.origin)
  })
  after(async () => {
    await app?.close()
    await api?.close()
    await idp?.close()
  })

  async function signIn (): Promise<string> {
    const session = new HttpSession()
    const start = await session.request(`${app.origin}/External/Challenge?provider=OpenIdConnect`)
    const callback = await session.request(await throughIdpLogin(session, start.location!, app.origin, 'ada'))
    assert.equal(sessionCookiesSet(callback.response).length, 1, 'signed in')
    return session.jar.header(new URL(app.origin))
  }

  async function call (cookie: string): Promise<{ status: number, body: Record<string, unknown> }> {
    const response = await fetch(`${app.origin}${CALL_PATH}`, { headers: { cookie, accept: 'application/json' }, redirect: 'manual', signal: AbortSignal.timeout(20_000) })
    return { status: response.status, body: await response.json() as Record<string, unknown> }
  }

  test('the call carries the session\'s saved access token to the BaseUrl path, and the API accepts it', async () => {
    const cookie = await signIn()
    const stored = await storedSession(app.app, app.keyRing, cookie)
    api.behave = { kind: 'ok' }
    api.seen.length = 0
    const result = await call(cookie)
    assert.deepEqual(result, { status: 200, body: { status: 200 } })
    assert.deepEqual(api.seen, [{ method: 'GET', path: '/v2/orders?open=1', authorization: `Bearer ${stored?.tokens?.access_token}` }])
    assert.equal(idp.grants.refresh_token, undefined, 'no refresh')
  })

  test('a 401 from the API: the token is refreshed once and the call retried once with it', async () => {
    const cookie = await signIn()
    const before = await storedSession(app.app, app.keyRing, cookie)
    const refreshes = idp.grants.refresh_token ?? 0
    api.behave = { kind: 'refuse_first_token' }
    api.seen.length = 0
    const result = await call(cookie)
    assert.equal(result.body.status, 200)
    assert.equal(api.seen.length, 2)
    assert.equal(api.seen[0]!.authorization, `Bearer ${before?.tokens?.access_token}`)
    const afterwards = await storedSession(app.app, app.keyRing, cookie)
    assert.notEqual(afterwards?.tokens?.access_token, before?.tokens?.access_token, 'the session holds the refreshed token')
    assert.equal(api.seen[1]!.authorization, `Bearer ${afterwards?.tokens?.access_token}`)
    assert.equal((idp.grants.refresh_token ?? 0) - refreshes, 1, 'one refresh grant')
  })

  test('four concurrent calls refused with the same token share one refresh', async () => {
    const cookie = await signIn()
    const refreshes = idp.grants.refresh_token ?? 0
    api.behave = { kind: 'refuse_first_token' }
    const results = await Promise.all(Array.from({ length: 4 }, async () => await call(cookie)))
    assert.deepEqual(results.map((result) => result.body.status), [200, 200, 200, 200])
    assert.equal((idp.grants.refresh_token ?? 0) - refreshes, 1, 'one refresh grant for four refused calls')
  })

  test('an API that refuses every token is called twice, never more, and its 401 is the answer', async () => {
    const cookie = await signIn()
    const refreshes = idp.grants.refresh_token ?? 0
    api.behave = { kind: 'refuse_always' }
    api.seen.length = 0
    const result = await call(cookie)
    assert.equal(result.body.status, 401)
    assert.equal(api.seen.length, 2)
    assert.equal((idp.grants.refresh_token ?? 0) - refreshes, 1)
  })

  test('without a session: 401 APP_ERR_DOWNSTREAM_SIGN_IN_REQUIRED, nothing sent', async () => {
    api.behave = { kind: 'ok' }
    api.seen.length = 0
    const response = await fetch(`${app.origin}${CALL_PATH}`, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(20_000) })
    assert.equal(response.status, 401)
    assert.match(String(response.headers.get('content-type')), /application\/problem\+json/)
    assert.equal((await response.json() as { code: string }).code, 'APP_ERR_DOWNSTREAM_SIGN_IN_REQUIRED')
    assert.equal(api.seen.length, 0)
  })

  test('no log line carries a token or the client secret', () => {
    const logs = app.logs.text()
    assert.ok(api.authorizations.size >= 4)
    for (const authorization of api.authorizations) assert.equal(logs.includes(authorization.replace(/^Bearer /, '')), false)
    assert.equal(logs.includes(SECRET), false)
    assert.ok(app.logs.events('downstream.call.retried').length >= 1)
  })
})
