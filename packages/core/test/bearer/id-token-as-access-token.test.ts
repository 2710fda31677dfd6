/**
 * An ID token is never an access token (issue 40, item 3). The layout providers.md used to
 * recommend for Keycloak and Entra ID, a JwtBearer scheme whose Audiences holds the sign-in
 * client's id at the same issuer, against oidc-provider on loopback: a user signs in through the
 * app's OpenID Connect provider over real HTTP, and the ID token the provider issued for that
 * sign-in (`aud` the client id, a `nonce`; no `at_hash`, optional in the code flow) is sent to
 * the app's API as a bearer token.
 * It is refused (401 invalid_token, `bearer.refused` with failure `id_token`, the token never
 * logged) unless the scheme sets DangerouslyAllowIdTokenMarkers; RequireAccessTokenType refuses
 * it by its `typ` even then, while oidc-provider's RFC 9068 access tokens pass. Startup warns
 * once, naming both keys and no value. Each ID-token claim alone (tokens signed by jose with a
 * loopback issuer's key) is enough to refuse a token.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose'
import { JwtBearerScheme, type JwtBearerSettings } from '../../src/bearer/jwt-bearer-scheme.js'
import { reportConfiguration } from '../../src/startup.js'
import { createLogger } from '../../src/logger.js'
import { bearerFailureOf } from '../helpers/bearer-app.js'
import { LogCapture, loadTestConfiguration } from '../helpers/app.js'
import { findPlanted, HttpSession, sessionCookiesSet } from '../helpers/providers/http-session.js'
import { throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import { startOidcIdp, type OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startProviderApp, waitUntilReady, type ListeningApp } from '../helpers/providers/provider-app.js'
import { startResourceIdp } from '../helpers/providers/resource-idp.js'
import { startTokenIdp, type TokenIdp } from '../helpers/providers/token-idp.js'
import type { TestSettings } from '../../src/testing/app.js'

const CLIENT_ID = 'orders-web'
const CLIENT_SECRET = 'PLANTED-sign-in-client-secret-40'
const TRANSFORMATION = { Enabled: true, RemoveOriginalClaims: false }
const ROOT = 'ProjectTemplate:Authentication'

/** The app: OpenID Connect sign-in at `issuer`, and a JwtBearer scheme of the same issuer whose Audiences holds the sign-in client id. */
function settingsFor (issuer: string, api: TestSettings = {}): TestSettings {
  return {
    Authentication: {
      Providers: { OpenIdConnect: { Enabled: true, Authority: issuer, ClientId: CLIENT_ID, ClientSecret: CLIENT_SECRET, Scopes: ['openid', 'profile'] } },
      Schemes: { Api: { Type: 'JwtBearer', Authority: issuer, Audiences: [CLIENT_ID], ...api } }
    }
  }
}

describe('an ID token sent as an access token', () => {
  let idp: OidcIdp
  let app: ListeningApp
  let idToken: string

  before(async () => {
    idp = await startOidcIdp({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, accounts: { ada: { name: 'Ada Lovelace' } } })
    app = await startProviderApp(settingsFor(idp.issuer), (fastify) => {
      fastify.get('/api/whoami', async (request) => ({ subject: request.user?.subject ?? null, scheme: request.user?.scheme ?? null }))
    })
    await idp.configure(`${app.origin}/signin-oidc`)
    await waitUntilReady(app.origin)
    // A user signs in through the app, as in a browser; the provider's token answer holds the ID token.
    const session = new HttpSession()
    const start = await session.request(`${app.origin}/External/Challenge?provider=OpenIdConnect`)
    const callback = await session.request(await throughIdpLogin(session, start.location!, app.origin, 'ada'))
    assert.equal(sessionCookiesSet(callback.response).length, 1, 'signed in')
    const found = idp.issuedTokenResponseValues.find((value) => value.split('.').length === 3 && decodeJwt(value).nonce !== undefined)
    assert.ok(found !== undefined, 'oidc-provider issued an ID token')
    idToken = found
  })
  after(async () => {
    await app?.close()
    await idp?.close()
  })

  function scheme (overrides: Partial<JwtBearerSettings> = {}): JwtBearerScheme {
    return new JwtBearerScheme({
      scheme: 'Api',
      keyPrefix: 'ProjectTemplate:Authentication:Schemes:Api',
      settings: { Authority: idp.issuer, Issuer: '', JwksUri: '', Audiences: [CLIENT_ID], ValidAlgorithms: [], ClockSkewSeconds: 60, ClaimMappings: {}, ...overrides },
      allowInsecureRequests: true,
      timeoutMs: 5000
    })
  }

  test('the token is the sign-in\'s ID token: aud the client id, not typ at+jwt, a nonce', () => {
    const claims = decodeJwt(idToken)
    assert.equal(claims.aud, CLIENT_ID)
    assert.equal(claims.iss, idp.issuer)
    assert.equal(typeof claims.nonce, 'string')
    assert.notEqual(decodeProtectedHeader(idToken).typ?.toLowerCase(), 'at+jwt')
  })

  test('the API refuses it: 401 invalid_token, one bearer.refused line with failure id_token, the token not logged', async () => {
    const response = await fetch(`${app.origin}/api/whoami`, { headers: { authorization: `Bearer ${idToken}`, accept: 'application/json' } })
    assert.equal(response.status, 401)
    assert.match(String(response.headers.get('www-authenticate')), /^Bearer error="invalid_token"/)
    assert.equal((await response.json() as { code: string }).code, 'APP_ERR_BEARER_INVALID')
    const refused = app.logs.events('bearer.refused')
    assert.deepEqual(refused.map((entry) => entry.failure), ['id_token'])
    assert.deepEqual(findPlanted(app.logs.text(), [idToken, CLIENT_SECRET]), [])
  })

  test('DangerouslyAllowIdTokenMarkers accepts it (the opt-in works, and is what it says)', async () => {
    assert.equal(await bearerFailureOf(scheme().authenticate(idToken, TRANSFORMATION)), 'id_token')
    const accepted = await scheme({ DangerouslyAllowIdTokenMarkers: true }).authenticate(idToken, TRANSFORMATION)
    assert.equal(accepted.principal.subject, 'ada')
  })

  test('RequireAccessTokenType refuses it by its typ even with the opt-in; oidc-provider\'s at+jwt access token passes', async () => {
    assert.equal(await bearerFailureOf(scheme({ RequireAccessTokenType: true, DangerouslyAllowIdTokenMarkers: true }).authenticate(idToken, TRANSFORMATION)), 'type')
    const resourceIdp = await startResourceIdp({ resource: 'https://orders.example.test/', scopes: ['orders.read'], clients: { billing: 'billing-secret' } })
    try {
      const accessToken = await resourceIdp.clientCredentialsToken('billing', 'orders.read')
      assert.equal(decodeProtectedHeader(accessToken).typ, 'at+jwt')
      const api = scheme({ Authority: resourceIdp.issuer, Audiences: ['https://orders.example.test/'], RequireAccessTokenType: true })
      assert.equal((await api.authenticate(accessToken, TRANSFORMATION)).principal.subject, 'billing')
    } finally {
      await resourceIdp.close()
    }
  })

  test('startup warns once, naming the audience and the client id keys, never a value; logged as one structured line', () => {
    const loaded = loadTestConfiguration({ nodeEnv: 'Development', settings: settingsFor(idp.issuer) })
    assert.deepEqual(loaded.errors, [])
    const warnings = loaded.warnings.filter((warning) => warning.event === 'configuration.bearer_audience_is_client_id')
    assert.equal(warnings.length, 1)
    const [warning] = warnings
    assert.equal(warning?.key, `${ROOT}:Schemes:Api:Audiences:0`)
    assert.ok(warning?.message.startsWith(`${ROOT}:Schemes:Api:Audiences:0 equals ${ROOT}:Providers:OpenIdConnect:ClientId at the same issuer`))
    assert.deepEqual(findPlanted(warning?.message ?? '', [CLIENT_ID, CLIENT_SECRET, idp.issuer]), [])
    const logs = new LogCapture()
    reportConfiguration(loaded, createLogger('info', logs))
    const lines = logs.events('configuration.bearer_audience_is_client_id')
    assert.deepEqual(lines.map((entry) => [entry.level, entry.key]), [[40, `${ROOT}:Schemes:Api:Audiences:0`]])
  })

  test('no warning for an audience of the API\'s own, or for the same client id at another issuer', () => {
    const warned = (settings: TestSettings): number => loadTestConfiguration({ nodeEnv: 'Development', settings }).warnings
      .filter((warning) => warning.event === 'configuration.bearer_audience_is_client_id').length
    assert.equal(warned(settingsFor(idp.issuer, { Audiences: ['api://orders'] })), 0)
    assert.equal(warned(settingsFor(idp.issuer, { Authority: 'https://other-idp.example.test/realms/orders' })), 0)
    // A named OpenID Connect scheme at the same host (Entra ID: a tenant and the multi-tenant authority) is the same issuer.
    const named = settingsFor('https://login.example.test/tenant-a/v2.0', { Authority: 'https://login.example.test/tenant-a/v2.0' })
    const authentication = named.Authentication as { Providers: unknown, Schemes: Record<string, unknown> }
    assert.equal(warned({ Authentication: { Schemes: { ...authentication.Schemes, Partner: { Type: 'OpenIdConnect', Authority: 'https://login.example.test/organizations/v2.0', ClientId: CLIENT_ID, ClientSecret: 's', AllowedTenants: ['6f1c2b3a-0d4e-4f5a-9b8c-7d6e5f4a3b2c'] } } } }), 1)
  })
})

describe('each ID-token claim alone refuses a token (jose, a loopback issuer\'s key)', () => {
  let idp: TokenIdp
  before(async () => { idp = await startTokenIdp('unused-client') })
  after(async () => { await idp?.close() })

  async function mint (claims: Record<string, unknown>): Promise<string> {
    const now = Math.floor(Date.now() / 1000)
    return await new SignJWT({ iss: idp.issuer, aud: 'api://orders', sub: 'user-1', iat: now, exp: now + 300, ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: 'known', typ: 'at+jwt' }).sign(idp.signingKey)
  }

  function scheme (allowIdTokenMarkers = false): JwtBearerScheme {
    return new JwtBearerScheme({
      scheme: 'Api',
      keyPrefix: 'ProjectTemplate:Authentication:Schemes:Api',
      settings: { Authority: '', Issuer: idp.issuer, JwksUri: `${idp.issuer}/jwks`, Audiences: ['api://orders'], ValidAlgorithms: [], ClockSkewSeconds: 60, ClaimMappings: {}, DangerouslyAllowIdTokenMarkers: allowIdTokenMarkers },
      allowInsecureRequests: true,
      timeoutMs: 5000
    })
  }

  for (const claims of [{ nonce: 'n-1' }, { at_hash: 'aGFzaA' }, { c_hash: 'aGFzaA' }, { s_hash: 'aGFzaA' }, { nonce: null }, { nonce: '' }]) {
    test(`refused (id_token): ${JSON.stringify(claims)}, even with typ at+jwt; accepted with DangerouslyAllowIdTokenMarkers`, async () => {
      const token = await mint(claims)
      assert.equal(await bearerFailureOf(scheme().authenticate(token, TRANSFORMATION)), 'id_token')
      assert.equal((await scheme(true).authenticate(token, TRANSFORMATION)).principal.subject, 'user-1')
    })
  }

  test('claims an access token may carry (auth_time, acr, amr, sid) are not markers', async () => {
    const token = await mint({ auth_time: Math.floor(Date.now() / 1000), acr: '1', amr: ['pwd'], sid: 's-1' })
    assert.equal((await scheme().authenticate(token, TRANSFORMATION)).principal.subject, 'user-1')
  })
})
