/**
 * A SCIM deactivation refuses the person's bearer tokens from the next request, on every instance
 * (issue 41 item 4, issue 43 item 1), with real pieces on loopback: oidc-provider signs the person
 * in (linked to their SCIM user by externalId) and issues them a JWT access token for the app's
 * API (RFC 8707 resource, asked for with the sign-in's refresh token); the app verifies it with a
 * JwtBearer scheme of another name than the sign-in scheme (same issuer and subject). A second
 * instance shares the state store. Before: the token is accepted on both (and its verification
 * cached); after Entra's disabling PATCH: 401 `invalid_token`, `bearer.refused` failure `denied`,
 * on both; after reactivation: accepted again.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { createEmbeddedStore } from '../../src/plugins/state.js'
import type { StateStore } from '../../src/state/state-store.js'
import { buildTestApp, loadTestConfiguration, storedSession, type TestApp } from '../helpers/app.js'
import { HttpSession, sessionCookiesSet } from '../helpers/providers/http-session.js'
import { throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import { startOidcIdp, type OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startProviderApp, waitUntilReady, type ListeningApp } from '../helpers/providers/provider-app.js'
import { userBody } from '../helpers/scim.js'
import { entraDisableUserString, entraEnableUserString } from './corpora/entra-id.js'

const CLIENT_ID = 'project-template-web'
const CLIENT_SECRET = 'oidc-client-secret-bearer-deny'
const RESOURCE = 'https://orders.example.test'

function routes (app: FastifyInstance): void {
  app.get('/api/me', async (request) => ({ subject: request.user?.subject ?? null, scheme: request.user?.scheme ?? null }))
}

describe('a deprovisioned person\'s bearer tokens', () => {
  let idp: OidcIdp
  let state: StateStore
  let a: ListeningApp
  let b: TestApp

  before(async () => {
    idp = await startOidcIdp({
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      accounts: { grace: { name: 'Grace Hopper', email: 'grace@contoso.test' } },
      refreshTokens: { accessTokenTtlSeconds: 3600 },
      resourceServers: { [RESOURCE]: { scopes: ['orders.read'] } }
    })
    const settings = {
      Authentication: {
        DefaultChallengeScheme: 'OpenIdConnect',
        Providers: { OpenIdConnect: { Enabled: true, Authority: idp.issuer, ClientId: CLIENT_ID, ClientSecret: CLIENT_SECRET, SaveTokens: true, Scopes: ['openid', 'profile', 'orders.read'], Resources: [RESOURCE] } },
        Schemes: { OrdersApi: { Type: 'JwtBearer', Authority: idp.issuer, Audiences: [RESOURCE] } }
      },
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
    await idp?.close()
  })

  /** Signs grace in on A and returns an access token for the API, from the provider's token endpoint. */
  async function accessTokenOfGrace (): Promise<string> {
    const session = new HttpSession()
    const start = await session.request(`${a.origin}/External/Challenge?provider=OpenIdConnect&returnUrl=%2F`)
    const callback = await session.request(await throughIdpLogin(session, start.location!, a.origin, 'grace'))
    assert.equal(sessionCookiesSet(callback.response).length, 1, 'signed in and linked')
    const refreshToken = (await storedSession(a.app, a.keyRing, session.jar.header(new URL(a.origin))))?.tokens?.refresh_token
    assert.ok(refreshToken !== undefined, 'the sign-in saved a refresh token')
    const discovery = await (await fetch(`${idp.issuer}/.well-known/openid-configuration`, { signal: AbortSignal.timeout(10_000) })).json() as { token_endpoint: string }
    const response = await fetch(discovery.token_endpoint, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, resource: RESOURCE, scope: 'orders.read' }),
      signal: AbortSignal.timeout(10_000)
    })
    const body = await response.json() as { access_token?: string }
    assert.equal(response.status, 200, JSON.stringify(body))
    assert.equal(body.access_token?.split('.').length, 3, 'a JWT access token')
    return body.access_token!
  }

  async function call (app: FastifyInstance, token: string): Promise<{ status: number, challenge: string | undefined, body: string }> {
    const response = await app.inject({ url: '/api/me', headers: { authorization: `Bearer ${token}`, accept: 'application/json' } })
    return { status: response.statusCode, challenge: response.headers['www-authenticate'] as string | undefined, body: response.body }
  }

  async function scim (method: string, path: string, token: string, body?: unknown): Promise<{ status: number, json: Record<string, any> }> {
    const response = await a.app.inject({ method: method as 'GET', url: `/scim/v2/Contoso${path}`, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }) }, ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) }) })
    return { status: response.statusCode, json: response.body === '' ? {} : response.json() }
  }

  test('accepted on both instances; deactivated: refused on both from the next request (denied); reactivated: accepted', async () => {
    const connectionToken = (await a.app.provisioning!.createToken('Contoso')).token
    const user = await scim('POST', '/Users', connectionToken, userBody('grace@contoso.test', { externalId: 'grace' }))
    assert.equal(user.status, 201)
    const token = await accessTokenOfGrace()

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

    assert.equal((await scim('PATCH', `/Users/${user.json.id as string}`, connectionToken, entraEnableUserString)).status, 200)
    for (const app of [a.app, b.app]) assert.equal((await call(app, token)).status, 200, 'reactivated: accepted again')
  })
})
