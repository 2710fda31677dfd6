/**
 * A per-API user token for `app.downstreamApis.callAsUser` (issue 40 item 10), with real pieces on
 * loopback: oidc-provider with resource indicators (RFC 8707) signs the user in (the sign-in asks
 * for the API's resource; refresh tokens rotate), and the downstream API is a second app built with
 * createApp and a JwtBearer scheme whose audience is that resource. The token saved at sign-in is
 * the provider's userinfo token, which the API refuses; with UserToken:Resource the call carries a
 * token asked for with the session's refresh token and that resource, which the API accepts. It
 * is requested once for concurrent callers, kept in the session, and the rotated refresh token
 * replaces the session's; a refused request is a 503 that leaves the session signed in.
 */
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { storedSession } from '../helpers/app.js'
import { buildBearerApp, type BearerTestApp } from '../helpers/bearer-app.js'
import { openIdConnectForApi, signInOverHttp, startApiIdp } from '../helpers/providers/api-sign-in.js'
import { sessionCookiesSet } from '../helpers/providers/http-session.js'
import type { OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startProviderApp, waitUntilReady, type ListeningApp } from '../helpers/providers/provider-app.js'

const SECRET = 'api-token-client-secret-PLANTED-8d'
const CLIENT_ID = 'api-token-client'
const CLIENT = { clientId: CLIENT_ID, clientSecret: SECRET }
const RESOURCE = 'https://orders.example.test'
const API = { uri: RESOURCE, scopes: ['orders.read', 'orders.write'] }

function addRoutes (app: FastifyInstance): void {
  app.get('/test-only/call/:api', { config: { allowAnonymous: true } }, async (request, reply) => {
    const response = await app.downstreamApis.callAsUser(request, reply, (request.params as { api: string }).api, '/orders')
    return { status: response.status, body: response.status === 200 ? await response.json() as unknown : null }
  })
  // The sign-in token's own refresh, as a 401 from an API that takes it would cause.
  app.get('/test-only/refresh', { config: { allowAnonymous: true } }, async (request, reply) => {
    const saved = request.user?.ticket.tokens?.access_token ?? (await app.session.authenticate(request, reply))?.ticket.tokens?.access_token
    return { token: await app.session.accessToken(request, reply, saved === undefined ? undefined : { rejected: saved }) ?? null }
  })
}

describe('calls as the signed-in user with a token for the API (RFC 8707 resource)', () => {
  let idp: OidcIdp
  let api: BearerTestApp
  let app: ListeningApp

  before(async () => {
    idp = await startApiIdp(CLIENT, { ada: { name: 'Ada Lovelace' } }, API)
    api = await buildBearerApp({ schemes: { Idp: { Authority: idp.issuer, Audiences: [RESOURCE] } } })
    await api.app.listen({ host: '127.0.0.1', port: 0 })
    const apiBase = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}/api`
    const userToken = { Scheme: 'OpenIdConnect', Resource: RESOURCE }
    app = await startProviderApp({
      Authentication: { Providers: { OpenIdConnect: openIdConnectForApi(idp, CLIENT, API, ['orders.read']) } },
      DownstreamApis: {
        Saved: { BaseUrl: apiBase, UserToken: { Scheme: 'OpenIdConnect' } },
        Orders: { BaseUrl: apiBase, UserToken: { ...userToken, Scopes: ['orders.read'] } },
        Burst: { BaseUrl: apiBase, UserToken: userToken },
        Ungranted: { BaseUrl: apiBase, UserToken: { ...userToken, Scopes: ['orders.write'] } }
      }
    }, addRoutes)
    await idp.configure(`${app.origin}/signin-oidc`)
    await waitUntilReady(app.origin)
  })
  after(async () => {
    await app?.close()
    await api?.app.close()
    await idp?.close()
  })

  async function signIn (): Promise<string> {
    const { start, callback, cookie } = await signInOverHttp(app.origin, 'ada')
    assert.equal(start.location?.searchParams.getAll('resource').join(' '), RESOURCE, 'the sign-in asks for the resource')
    assert.equal(sessionCookiesSet(callback.response).length, 1, 'signed in')
    return cookie
  }

  async function get (path: string, cookie: string): Promise<{ status: number, body: Record<string, unknown> }> {
    const response = await fetch(`${app.origin}${path}`, { headers: { cookie, accept: 'application/json' }, redirect: 'manual', signal: AbortSignal.timeout(20_000) })
    return { status: response.status, body: await response.json() as Record<string, unknown> }
  }

  test('the token saved at sign-in has no audience for the API: the JwtBearer API refuses it', async () => {
    const cookie = await signIn()
    const result = await get('/test-only/call/Saved', cookie)
    assert.deepEqual(result, { status: 200, body: { status: 401, body: null } })
  })

  test('with UserToken:Resource the call carries a token for the resource, which the API accepts, and the session keeps it', async () => {
    const cookie = await signIn()
    const before = await storedSession(app.app, app.keyRing, cookie)
    const grants = idp.grants.refresh_token ?? 0
    const result = await get('/test-only/call/Orders', cookie)
    assert.equal(result.status, 200)
    assert.deepEqual(result.body, { status: 200, body: { subject: 'ada', scheme: 'Idp', machine: false, clientId: CLIENT_ID, scopes: ['orders.read'] } })
    assert.equal((idp.grants.refresh_token ?? 0) - grants, 1, 'one refresh-token request')
    const afterwards = await storedSession(app.app, app.keyRing, cookie)
    const tokens = afterwards?.tokens ?? {}
    assert.equal(tokens.access_token, before?.tokens?.access_token, 'the sign-in token is left as it was')
    assert.notEqual(tokens.refresh_token, before?.tokens?.refresh_token, 'the rotated refresh token replaced the old one')
    assert.equal(typeof tokens['api:Orders:access_token'], 'string')
    assert.match(tokens['api:Orders:expires_at'] ?? '', /^\d+$/)
  })

  test('concurrent calls share one token request, and later calls reuse the kept token', async () => {
    const cookie = await signIn()
    const grants = idp.grants.refresh_token ?? 0
    const results = await Promise.all(Array.from({ length: 4 }, async () => await get('/test-only/call/Burst', cookie)))
    assert.deepEqual(results.map((result) => result.body.status), [200, 200, 200, 200])
    assert.equal((idp.grants.refresh_token ?? 0) - grants, 1, 'one token request for four calls')
    for (let index = 0; index < 2; index++) assert.equal((await get('/test-only/call/Burst', cookie)).body.status, 200)
    assert.equal((idp.grants.refresh_token ?? 0) - grants, 1, 'the kept token serves later calls')
  })

  test('after the per-API request rotated the refresh token, the sign-in token still refreshes', async () => {
    const cookie = await signIn()
    assert.equal((await get('/test-only/call/Orders', cookie)).body.status, 200)
    const refreshed = await get('/test-only/refresh', cookie)
    assert.equal(typeof refreshed.body.token, 'string', 'the stored (rotated) refresh token is the valid one')
    assert.equal((await storedSession(app.app, app.keyRing, cookie))?.tokens?.access_token, refreshed.body.token)
    assert.equal((await get('/test-only/call/Orders', cookie)).body.status, 200, 'the API token is still kept')
  })

  test('a scope the sign-in did not grant: 503 APP_ERR_DOWNSTREAM_TOKEN_UNAVAILABLE, the session stays', async () => {
    const cookie = await signIn()
    const response = await fetch(`${app.origin}/test-only/call/Ungranted`, { headers: { cookie, accept: 'application/json' }, signal: AbortSignal.timeout(20_000) })
    assert.equal(response.status, 503)
    assert.equal((await response.json() as { code: string }).code, 'APP_ERR_DOWNSTREAM_TOKEN_UNAVAILABLE')
    const line = app.logs.events('downstream.token.failed').find((record) => record.api === 'Ungranted')
    assert.equal(line?.failure, 'unavailable')
    assert.equal(line?.oauthError, 'invalid_scope')
    assert.equal((await get('/test-only/call/Orders', cookie)).body.status, 200, 'still signed in')
  })

  test('no log line carries a token or the client secret', () => {
    const logs = app.logs.text()
    assert.ok(idp.issuedTokenResponseValues.length >= 6)
    for (const value of idp.issuedTokenResponseValues) assert.equal(logs.includes(value), false)
    assert.equal(logs.includes(SECRET), false)
    assert.ok(app.logs.events('downstream.token.obtained').length >= 3)
  })
})
