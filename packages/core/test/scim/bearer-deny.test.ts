/**
 * A SCIM deactivation refuses the person's bearer tokens from the next request, on every instance,
 * and deletes the downstream tokens saved for them (issue 41 item 4, issue 43 item 1), with real
 * pieces on loopback: oidc-provider signs the person in (linked to their SCIM user by externalId)
 * and issues them a JWT access token for the app's API (RFC 8707 resource, asked for with the
 * sign-in's refresh token); the app verifies it with a JwtBearer scheme of another name than the
 * sign-in scheme (same issuer and subject), and calls a downstream API on loopback as the person
 * (`DownstreamApis:Orders`, a token for the API kept in the session). A second instance shares the
 * state store. Before: the token is accepted on both (and its verification cached), the
 * downstream call is made; after Entra's disabling PATCH: 401 `invalid_token`, `bearer.refused`
 * failure `denied`, on both, and no saved token is left for them in the state store, so the
 * downstream call cannot be made; after reactivation: accepted again.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { createEmbeddedStore } from '../../src/plugins/state.js'
import { userIndexKey } from '../../src/session/session-store.js'
import type { StateStore } from '../../src/state/state-store.js'
import { buildTestApp, loadTestConfiguration, storedSession, type TestApp } from '../helpers/app.js'
import { startDownstreamServer, type DownstreamServer } from '../helpers/downstream-server.js'
import { apiAccessToken, openIdConnectForApi, signInOverHttp, startApiIdp } from '../helpers/providers/api-sign-in.js'
import { sessionCookiesSet } from '../helpers/providers/http-session.js'
import type { OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startProviderApp, waitUntilReady, type ListeningApp } from '../helpers/providers/provider-app.js'
import { userBody } from '../helpers/scim.js'
import { entraDisableUserString, entraEnableUserString } from './corpora/entra-id.js'

const CLIENT = { clientId: 'project-template-web', clientSecret: 'oidc-client-secret-bearer-deny' }
const API = { uri: 'https://orders.example.test', scopes: ['orders.read'] }

function routes (app: FastifyInstance): void {
  app.get('/api/me', async (request) => ({ subject: request.user?.subject ?? null, scheme: request.user?.scheme ?? null }))
  app.get('/test-only/call-orders', { config: { allowAnonymous: true } }, async (request, reply) => {
    const response = await app.downstreamApis.callAsUser(request, reply, 'Orders', '/orders')
    return { status: response.status }
  })
}

describe('a deprovisioned person\'s bearer tokens and saved downstream tokens', () => {
  let idp: OidcIdp
  let downstream: DownstreamServer
  let state: StateStore
  let a: ListeningApp
  let b: TestApp

  before(async () => {
    idp = await startApiIdp(CLIENT, { grace: { name: 'Grace Hopper', email: 'grace@contoso.test' } }, API)
    downstream = await startDownstreamServer()
    const settings = {
      Authentication: {
        DefaultChallengeScheme: 'OpenIdConnect',
        Providers: { OpenIdConnect: openIdConnectForApi(idp, CLIENT, API) },
        Schemes: { OrdersApi: { Type: 'JwtBearer', Authority: idp.issuer, Audiences: [API.uri] } }
      },
      DownstreamApis: { Orders: { BaseUrl: downstream.origin, UserToken: { Scheme: 'OpenIdConnect', Resource: API.uri, Scopes: ['orders.read'] } } },
      Provisioning: { Enabled: true, Connections: { Contoso: { Tenant: 'contoso', Schemes: ['OpenIdConnect'] } } }
    }
    state = createEmbeddedStore(loadTestConfiguration().config.State.Embedded)
    a = await startProviderApp(settings, routes, { stateStore: state })
    b = await buildTestApp({ nodeEnv: 'development', settings, testSignIn: false, configure: routes, stateStore: state })
    await idp.configure(`${a.origin}/signin-oidc`)
    await waitUntilReady(a.origin)
  })
  after(async () => {
    await a?.close()
    await b?.app.close()
    await state?.close()
    await downstream?.close()
    await idp?.close()
  })

  /** Signs grace in on A (linked to her SCIM user): the Cookie header of her session. */
  async function signInGrace (): Promise<string> {
    const { callback, cookie } = await signInOverHttp(a.origin, 'grace')
    assert.equal(sessionCookiesSet(callback.response).length, 1, 'signed in and linked')
    return cookie
  }

  /** An access token for the API, redeemed with the refresh token her session holds now. */
  async function accessTokenOf (cookie: string): Promise<string> {
    const refreshToken = (await storedSession(a.app, a.keyRing, cookie))?.tokens?.refresh_token
    assert.ok(refreshToken !== undefined, 'the sign-in saved a refresh token')
    return await apiAccessToken(idp, CLIENT, refreshToken, API.uri, 'orders.read')
  }

  async function callOrders (cookie: string): Promise<{ status: number, body: Record<string, unknown> }> {
    const response = await fetch(`${a.origin}/test-only/call-orders`, { headers: { cookie, accept: 'application/json' }, redirect: 'manual', signal: AbortSignal.timeout(10_000) })
    return { status: response.status, body: await response.json() as Record<string, unknown> }
  }

  async function call (app: FastifyInstance, token: string): Promise<{ status: number, challenge: string | undefined, body: string }> {
    const response = await app.inject({ url: '/api/me', headers: { authorization: `Bearer ${token}`, accept: 'application/json' } })
    return { status: response.statusCode, challenge: response.headers['www-authenticate'] as string | undefined, body: response.body }
  }

  async function scim (method: string, path: string, token: string, body?: unknown): Promise<{ status: number, json: Record<string, any> }> {
    const response = await a.app.inject({ method: method as 'GET', url: `/scim/v2/Contoso${path}`, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }) }, ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) }) })
    return { status: response.statusCode, json: response.body === '' ? {} : response.json() }
  }

  test('bearer token accepted on both instances and downstream call made; deactivated: token refused on both from the next request (denied), saved tokens deleted; reactivated: accepted', async () => {
    const connectionToken = (await a.app.provisioning!.createToken('Contoso')).token
    const user = await scim('POST', '/Users', connectionToken, userBody('grace@contoso.test', { externalId: 'grace' }))
    assert.equal(user.status, 201)
    const cookie = await signInGrace()
    const identity = { scheme: 'OpenIdConnect', issuer: idp.issuer, subject: 'grace' }

    assert.deepEqual(await callOrders(cookie), { status: 200, body: { status: 200 } }, 'the downstream call is made as grace')
    const apiToken = (await storedSession(a.app, a.keyRing, cookie))?.tokens?.['api:Orders:access_token']
    assert.equal(typeof apiToken, 'string', 'the session keeps the token for the downstream API')
    assert.equal(downstream.seen.at(-1)?.authorization, `Bearer ${apiToken as string}`)
    assert.equal((await a.app.state.members(userIndexKey(identity))).length, 1, 'one session of grace holds her saved tokens')
    const token = await accessTokenOf(cookie)

    for (const app of [a.app, b.app]) {
      for (let index = 0; index < 2; index++) {
        const accepted = await call(app, token)
        assert.equal(accepted.status, 200, accepted.body)
        assert.deepEqual(JSON.parse(accepted.body), { subject: 'grace', scheme: 'OrdersApi' })
      }
    }

    assert.equal((await scim('PATCH', `/Users/${user.json.id as string}`, connectionToken, entraDisableUserString)).status, 200)
    for (const [name, app] of [['A', a], ['B', b]] as const) {
      const refused = await call(app.app, token)
      assert.equal(refused.status, 401, `refused on ${name}`)
      assert.match(refused.challenge ?? '', /^Bearer .*error="invalid_token"/)
      const line = app.logs.events('bearer.refused').at(-1)
      assert.equal(line?.failure, 'denied', `bearer.refused on ${name}`)
    }
    assert.ok(!JSON.stringify([...a.logs.lines, ...b.logs.lines]).includes(token), 'no token in the log')

    // The saved downstream tokens went with her sessions: nothing of grace is left in the state store.
    assert.equal(await storedSession(a.app, a.keyRing, cookie), undefined, 'her session record, with its saved tokens, is deleted')
    assert.deepEqual(await a.app.state.members(userIndexKey(identity)), [], 'no session of grace is left')
    const calls = downstream.seen.length
    const refused = await callOrders(cookie)
    assert.equal(refused.status, 401)
    assert.equal(refused.body.code, 'APP_ERR_DOWNSTREAM_SIGN_IN_REQUIRED', 'no saved token to call with')
    assert.equal(downstream.seen.length, calls, 'the downstream API was not called')

    assert.equal((await scim('PATCH', `/Users/${user.json.id as string}`, connectionToken, entraEnableUserString)).status, 200)
    for (const app of [a.app, b.app]) assert.equal((await call(app, token)).status, 200, 'reactivated: accepted again')
  })
})
