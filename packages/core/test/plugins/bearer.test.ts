/**
 * Bearer tokens on API routes (issue 35, item 2 and "Bad input"), against real issuers on
 * loopback: oidc-provider issuing RFC 9068 JWT access tokens for a resource (Resource Indicators)
 * through the client-credentials grant, and an issuer whose user tokens jose mints (Issuer and
 * JwksUri without discovery). A present token alone decides (a refused one is 401 even beside a
 * valid session cookie), RFC 6750 answers with problem+json and never a redirect, no anti-forgery
 * token for bearer calls, pages never accept tokens, one `bearer.refused` line per refusal naming
 * the failure class, never the token, and a flood of forged tokens is held back with 429.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { SignJWT, type JWTPayload } from 'jose'
import { claim, signIn } from '../../src/testing/app.js'
import { clientPolicy, scopePolicy, userPolicy } from '../../src/authorization/scopes.js'
import { tenantOf } from '../../src/authorization/tenants.js'
import { userKeyOf } from '../../src/session/user-identity.js'
import { buildBearerApp, who, type BearerTestApp } from '../helpers/bearer-app.js'
import { startResourceIdp, type ResourceIdp } from '../helpers/providers/resource-idp.js'
import { startTokenIdp, type TokenIdp } from '../helpers/providers/token-idp.js'

const RESOURCE = 'https://api.example.test/'
const PARTNER_AUDIENCE = 'api://orders'
/** inject() addresses the app as localhost:80; no PublicOrigin in these tests (Development). */
const METADATA_URL = 'http://localhost:80/.well-known/oauth-protected-resource'
/** Authentication:Bearer:ScopesSupported, which every 401 names (issue 40, item 17). */
const SCOPES = 'orders.read orders.write'
const INVALID_TOKEN_CHALLENGE = `Bearer error="invalid_token", scope="${SCOPES}", resource_metadata="${METADATA_URL}"`
/** A resource under a path: an audience of the Partner scheme on the app's origin (inject() is http://localhost:80). */
const TOOLS_RESOURCE = 'http://localhost/api/tools'

describe('bearer tokens on the API routes', () => {
  let resourceIdp: ResourceIdp
  let partnerIdp: TokenIdp
  let t: BearerTestApp
  const planted: string[] = []

  before(async () => {
    resourceIdp = await startResourceIdp({ resource: RESOURCE, scopes: ['orders.read', 'orders.write'], clients: { billing: 'billing-secret-PLANTED' } })
    partnerIdp = await startTokenIdp('unused')
    t = await buildBearerApp({
      schemes: {
        Api: { Authority: resourceIdp.issuer, Audiences: [RESOURCE] },
        Partner: { Issuer: partnerIdp.issuer, JwksUri: `${partnerIdp.issuer}/jwks`, Audiences: [PARTNER_AUDIENCE, TOOLS_RESOURCE], ClaimMappings: { scp: 'permission' } }
      },
      refusalsPerWindow: 1000,
      settings: { Authentication: { Bearer: { ScopesSupported: ['orders.read', 'orders.write'] } } },
      policies: [scopePolicy('orders.Write', 'orders.write'), userPolicy('orders.UsersOnly'), clientPolicy('orders.Billing', 'billing')],
      routes: (app) => {
        app.post('/api/orders/write', { config: { authorize: 'orders.Write' } }, async (request) => who(request))
        app.get('/api/me', { config: { authorize: 'orders.UsersOnly' } }, async (request) => who(request))
        app.get('/api/invoices', { config: { authorize: 'orders.Billing' } }, async (request) => who(request))
        app.post('/api/approve', { config: { governance: { action: 'orders.approve' } } }, async () => ({ approved: true }))
        app.post('/api/tools', async (request) => who(request))
        app.authorization.useGovernanceEvaluator(({ principal }) => principal?.subject === 'nobody')
      }
    })
  })
  after(async () => {
    await t?.app.close()
    await resourceIdp?.close()
    await partnerIdp?.close()
  })

  async function userToken (claims: JWTPayload = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000)
    const token = await new SignJWT({ iss: partnerIdp.issuer, aud: PARTNER_AUDIENCE, sub: 'ada', name: 'Ada Lovelace', iat: now, exp: now + 300, scp: 'orders.read', ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: 'known', typ: 'JWT' }).sign(partnerIdp.signingKey)
    planted.push(token)
    return token
  }

  async function machineToken (): Promise<string> {
    const token = await resourceIdp.clientCredentialsToken('billing', 'orders.read')
    planted.push(token)
    return token
  }

  test('a client-credentials token from oidc-provider (resource indicator) is a machine principal of the Api scheme', async () => {
    const response = await t.app.inject({ url: '/api/orders', headers: { authorization: `Bearer ${await machineToken()}` } })
    assert.equal(response.statusCode, 200)
    assert.deepEqual(response.json(), { subject: 'billing', scheme: 'Api', machine: true, clientId: 'billing', scopes: ['orders.read'] })
    assert.equal(response.headers['set-cookie'], undefined, 'a bearer call sets no cookie')
  })

  test('a user token of the second scheme (picked by its iss) is that user, with the scheme, issuer and subject identity', async () => {
    const response = await t.app.inject({ url: '/api/orders', headers: { authorization: `Bearer ${await userToken()}` } })
    assert.equal(response.statusCode, 200)
    assert.deepEqual(response.json(), { subject: 'ada', scheme: 'Partner', machine: false, clientId: null, scopes: ['orders.read'] })
  })

  test('a refused token is 401 invalid_token with problem+json even when a valid session cookie is sent too (no fallback)', async () => {
    const cookie = await signIn(t.app, [claim('application:subject', 'cookie-user')])
    const withCookie = await t.app.inject({ url: '/api/orders', headers: { cookie } })
    assert.equal(withCookie.statusCode, 200, 'the cookie alone still works on the API')
    assert.equal(withCookie.json().subject, 'cookie-user')

    const forged = await userToken({ aud: 'api://someone-else' })
    const response = await t.app.inject({ url: '/api/orders', headers: { cookie, authorization: `Bearer ${forged}`, accept: 'text/html' } })
    assert.equal(response.statusCode, 401)
    assert.equal(response.headers['www-authenticate'], INVALID_TOKEN_CHALLENGE)
    assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
    assert.equal(response.headers.location, undefined)
    assert.equal(response.json().code, 'APP_ERR_BEARER_INVALID')
    assert.equal(response.json().detail, undefined, 'no detail that helps an attacker')
  })

  test('no token and no session on an API route: 401 WWW-Authenticate: Bearer, problem+json, never a redirect', async () => {
    const response = await t.app.inject({ url: '/api/orders', headers: { accept: 'text/html' } })
    assert.equal(response.statusCode, 401)
    assert.equal(response.headers['www-authenticate'], `Bearer scope="${SCOPES}", resource_metadata="${METADATA_URL}"`)
    assert.equal(response.headers.location, undefined)
    assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
  })

  test('a valid token that does not meet the route\'s policy: 403 insufficient_scope with the 401\'s resource_metadata, never a redirect', async () => {
    const response = await t.app.inject({ url: '/api/admin', headers: { authorization: `Bearer ${await userToken()}`, accept: 'text/html' } })
    assert.equal(response.statusCode, 403)
    assert.equal(response.headers['www-authenticate'], `Bearer error="insufficient_scope", resource_metadata="${METADATA_URL}"`, 'no scope: the policy asks for a role, not a scope')
    assert.equal(response.json().code, 'APP_ERR_BEARER_SCOPE')
    const admin = await t.app.inject({ url: '/api/admin', headers: { authorization: `Bearer ${await userToken({ roles: ['Administrator'] })}` } })
    assert.equal(admin.statusCode, 200)
  })

  test('scope policies: a token without the scope is 403 insufficient_scope naming it; with it, allowed (no anti-forgery token)', async () => {
    const without = await t.app.inject({ method: 'POST', url: '/api/orders/write', headers: { authorization: `Bearer ${await machineToken()}` } })
    assert.equal(without.statusCode, 403)
    assert.equal(without.headers['www-authenticate'], `Bearer error="insufficient_scope", scope="orders.write", resource_metadata="${METADATA_URL}"`)
    const token = await resourceIdp.clientCredentialsToken('billing', 'orders.read orders.write')
    planted.push(token)
    const granted = await t.app.inject({ method: 'POST', url: '/api/orders/write', headers: { authorization: `Bearer ${token}` } })
    assert.equal(granted.statusCode, 200)
    assert.deepEqual(granted.json().scopes, ['orders.read', 'orders.write'])
    const cookie = await signIn(t.app, [claim('application:subject', 'cookie-user'), claim('scope', 'orders.write')])
    const sessionUser = await t.app.inject({ method: 'POST', url: '/api/orders/write', headers: { cookie, accept: 'application/json' } })
    assert.equal(sessionUser.statusCode, 403, 'a session has no token scopes')
  })

  test('machine principals: a user policy refuses a client-credentials token; a client policy names the allowed clients', async () => {
    const machine = await machineToken()
    assert.equal((await t.app.inject({ url: '/api/me', headers: { authorization: `Bearer ${machine}` } })).statusCode, 403)
    assert.equal((await t.app.inject({ url: '/api/me', headers: { authorization: `Bearer ${await userToken()}` } })).statusCode, 200)
    assert.equal((await t.app.inject({ url: '/api/invoices', headers: { authorization: `Bearer ${machine}` } })).statusCode, 200)
    assert.equal((await t.app.inject({ url: '/api/invoices', headers: { authorization: `Bearer ${await userToken({ azp: 'mobile-app' })}` } })).statusCode, 403)
  })

  test('audit lines name the acting client: bearer.authenticated once per token verified, governance.denied with the client', async () => {
    const token = await machineToken()
    const before = t.logs.events('bearer.authenticated').length
    for (let call = 0; call < 2; call++) assert.equal((await t.app.inject({ url: '/api/orders', headers: { authorization: `Bearer ${token}` } })).statusCode, 200)
    const lines = t.logs.events('bearer.authenticated').slice(before)
    assert.equal(lines.length, 1, 'the cached second call writes no line')
    const { provider, issuer, subject, clientId, machine, userKey, sessionAuditId } = lines[0] ?? {}
    assert.deepEqual({ provider, issuer, subject, clientId, machine }, { provider: 'Api', issuer: resourceIdp.issuer, subject: 'billing', clientId: 'billing', machine: true })
    assert.equal(userKey, userKeyOf({ scheme: 'Api', issuer: resourceIdp.issuer, subject: 'billing', kind: 'client' }), 'a client\'s key, never a user\'s')
    assert.match(String(sessionAuditId), /^[A-Za-z0-9_-]{22}$/)
    const denied = await t.app.inject({ method: 'POST', url: '/api/approve', headers: { authorization: `Bearer ${token}`, accept: 'application/json' } })
    assert.equal(denied.statusCode, 403)
    const governance = t.logs.events('governance.denied').at(-1) ?? {}
    assert.deepEqual([governance.action, governance.provider, governance.clientId, governance.machine, governance.userKey], ['orders.approve', 'Api', 'billing', true, userKey])
    await t.app.inject({ url: '/api/orders', headers: { authorization: `Bearer ${await userToken({ azp: 'mobile-app', jti: 'audit-user-token' })}` } })
    const user = t.logs.events('bearer.authenticated').at(-1) ?? {}
    assert.deepEqual([user.provider, user.subject, user.clientId, user.machine], ['Partner', 'ada', 'mobile-app', false])
  })

  test('protected-resource metadata (RFC 9728): the configured issuers, scopes and the header method, anonymously', async () => {
    const response = await t.app.inject({ url: '/.well-known/oauth-protected-resource' })
    assert.equal(response.statusCode, 200)
    assert.deepEqual(response.json(), {
      resource: 'http://localhost:80',
      authorization_servers: [resourceIdp.issuer, partnerIdp.issuer],
      scopes_supported: ['orders.read', 'orders.write'],
      bearer_methods_supported: ['header']
    })
    assert.ok(t.app.authorization.anonymousRoutes().includes('GET /.well-known/oauth-protected-resource'))
  })

  test('a resource under a path (an audience on the app\'s origin) has its own metadata, which its route\'s challenges name (RFC 9728 section 3.1)', async () => {
    const metadata = await t.app.inject({ url: '/.well-known/oauth-protected-resource/api/tools' })
    assert.equal(metadata.statusCode, 200)
    assert.deepEqual(metadata.json(), { resource: TOOLS_RESOURCE, authorization_servers: [partnerIdp.issuer], scopes_supported: ['orders.read', 'orders.write'], bearer_methods_supported: ['header'] })
    const challenge = await t.app.inject({ method: 'POST', url: '/api/tools' })
    assert.equal(challenge.statusCode, 401)
    assert.equal(challenge.headers['www-authenticate'], `Bearer scope="${SCOPES}", resource_metadata="${METADATA_URL}/api/tools"`)
    const accepted = await t.app.inject({ method: 'POST', url: '/api/tools', headers: { authorization: `Bearer ${await userToken({ aud: TOOLS_RESOURCE })}` } })
    assert.equal(accepted.statusCode, 200, 'a token for the resource is accepted')
    const otherOrigin = await t.app.inject({ url: '/.well-known/oauth-protected-resource/api/tools', headers: { host: 'api.example.test' } })
    assert.equal(otherOrigin.statusCode, 404, 'the resource is not on the request\'s origin')
  })

  test('an unknown well-known path is a 404 problem, never the sign-in redirect, whatever the caller accepts', async () => {
    for (const url of ['/.well-known/oauth-protected-resource/api/orders', '/.well-known/oauth-authorization-server', '/.well-known/openid-configuration/x?y=1']) {
      const response = await t.app.inject({ url, headers: { accept: 'text/html' } })
      assert.equal(response.statusCode, 404, url)
      assert.equal(response.headers.location, undefined)
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
      assert.equal(response.json().code, 'APP_ERR_NOT_FOUND')
    }
  })

  test('an unserved method or path under /api/: a token is verified first; valid -> 405 or 404, none or refused -> the Bearer challenge', async () => {
    const anonymous = await t.app.inject({ method: 'DELETE', url: '/api/orders' })
    assert.equal(anonymous.statusCode, 401)
    assert.equal(anonymous.headers['www-authenticate'], `Bearer scope="${SCOPES}", resource_metadata="${METADATA_URL}"`)
    const before = t.logs.events('bearer.refused').length
    const refused = await t.app.inject({ url: '/api/nowhere', headers: { authorization: 'Bearer not-a-jwt' } })
    assert.equal(refused.statusCode, 401)
    assert.equal(refused.headers['www-authenticate'], INVALID_TOKEN_CHALLENGE)
    assert.deepEqual(t.logs.events('bearer.refused').slice(before).map((line) => line.failure), ['malformed'])
    const token = await userToken()
    const wrongMethod = await t.app.inject({ method: 'DELETE', url: '/api/orders', headers: { authorization: `Bearer ${token}` } })
    assert.equal(wrongMethod.statusCode, 405)
    assert.equal(wrongMethod.headers.allow, 'GET, HEAD, POST')
    assert.equal(wrongMethod.json().code, 'APP_ERR_METHOD_NOT_ALLOWED')
    const unknown = await t.app.inject({ url: '/api/nowhere', headers: { authorization: `Bearer ${token}` } })
    assert.equal(unknown.statusCode, 404)
    assert.equal(unknown.json().code, 'APP_ERR_NOT_FOUND')
    const cookie = await signIn(t.app, [claim('application:subject', 'cookie-user')])
    assert.equal((await t.app.inject({ url: '/api/nowhere', headers: { cookie } })).statusCode, 404, 'a session is a caller too')
    const page = await t.app.inject({ url: '/nowhere', headers: { accept: 'text/html' } })
    assert.equal(page.statusCode, 302, 'outside the API an anonymous caller is still sent to sign in')
  })

  test('bearer schemes sign no one in: not on the login page, unknown to /External/Challenge', async () => {
    const login = await t.app.inject({ url: '/Account/Login' })
    assert.equal(login.body.includes('Partner'), false)
    const challenge = await t.app.inject({ url: '/External/Challenge?provider=Partner', headers: { accept: 'application/json' } })
    assert.equal(challenge.statusCode, 400)
    assert.equal(challenge.json().code, 'APP_ERR_PROVIDER_UNKNOWN')
  })

  const refused: ReadonlyArray<{ readonly name: string, readonly failure: string, readonly header: () => Promise<string> }> = [
    { name: 'not a JWT', failure: 'malformed', header: async () => 'Bearer not-a-jwt' },
    { name: 'characters outside b64token', failure: 'malformed', header: async () => 'Bearer a.b.c"' },
    { name: 'oversized', failure: 'oversized', header: async () => `Bearer ${await userToken({ pad: 'x'.repeat(9000) })}` },
    { name: 'expired', failure: 'expired', header: async () => `Bearer ${await userToken({ exp: Math.floor(Date.now() / 1000) - 120 })}` },
    { name: 'wrong audience', failure: 'audience', header: async () => `Bearer ${await userToken({ aud: 'api://other' })}` },
    { name: 'unknown issuer', failure: 'issuer', header: async () => `Bearer ${await userToken({ iss: 'https://evil.example' })}` },
    { name: 'alg none', failure: 'algorithm', header: async () => `Bearer ${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ iss: partnerIdp.issuer, aud: PARTNER_AUDIENCE, sub: 'x', exp: 9999999999 })).toString('base64url')}.` },
    { name: 'signed by an unknown key', failure: 'unknown_key', header: async () => `Bearer ${await new SignJWT({ iss: partnerIdp.issuer, aud: PARTNER_AUDIENCE, sub: 'x', exp: 9999999999 }).setProtectedHeader({ alg: 'RS256', kid: 'nope' }).sign(partnerIdp.unknownKey)}` }
  ]

  for (const { name, failure, header } of refused) {
    test(`refused with 401 and one bearer.refused line (${failure}): ${name}`, async () => {
      const before = t.logs.events('bearer.refused').length
      const response = await t.app.inject({ url: '/api/orders', headers: { authorization: await header() } })
      assert.equal(response.statusCode, 401)
      assert.equal(response.headers['www-authenticate'], INVALID_TOKEN_CHALLENGE)
      const lines = t.logs.events('bearer.refused').slice(before)
      assert.deepEqual(lines.map((line) => line.failure), [failure])
    })
  }

  test('a bearer POST needs no anti-forgery token; a cookie POST still does', async () => {
    const bearerPost = await t.app.inject({ method: 'POST', url: '/api/orders', headers: { authorization: `Bearer ${await userToken()}` }, payload: {} })
    assert.equal(bearerPost.statusCode, 200)
    assert.equal(bearerPost.json().created, true)
    const cookie = await signIn(t.app, [claim('application:subject', 'cookie-user')])
    const cookiePost = await t.app.inject({ method: 'POST', url: '/api/orders', headers: { cookie, accept: 'application/json' }, payload: {} })
    assert.equal(cookiePost.statusCode, 400)
    assert.equal(cookiePost.json().code, 'APP_ERR_CSRF_INVALID')
  })

  test('pages never accept bearer tokens; a route may opt in with config.bearer', async () => {
    const token = await userToken()
    const page = await t.app.inject({ url: '/orders', headers: { authorization: `Bearer ${token}` } })
    assert.equal(page.statusCode, 302, 'the page ignores the token: anonymous, sent to sign in')
    assert.match(String(page.headers.location), /^\/Account\/Login/)
    const optedIn = await t.app.inject({ url: '/reports', headers: { authorization: `Bearer ${token}` } })
    assert.equal(optedIn.statusCode, 200)
    assert.equal(optedIn.json().subject, 'ada')
  })

  test('on an anonymous API route a refused token leaves the caller anonymous; a valid one is the user', async () => {
    const refusedToken = await t.app.inject({ url: '/api/public', headers: { authorization: 'Bearer forged.token.value' } })
    assert.equal(refusedToken.statusCode, 200)
    assert.equal(refusedToken.json().subject, null)
    const valid = await t.app.inject({ url: '/api/public', headers: { authorization: `Bearer ${await userToken()}` } })
    assert.equal(valid.json().subject, 'ada')
  })

  test('a verified token is served from the cache until it expires: the scheme verifies it once', async () => {
    const token = await userToken({ jti: 'cache-test' })
    const scheme = t.scheme('Partner')
    let verifications = 0
    const original = scheme.authenticate.bind(scheme)
    scheme.authenticate = async (value, transformation) => { verifications++; return await original(value, transformation) }
    try {
      for (let index = 0; index < 5; index++) {
        assert.equal((await t.app.inject({ url: '/api/orders', headers: { authorization: `Bearer ${token}` } })).statusCode, 200)
      }
    } finally {
      scheme.authenticate = original
    }
    assert.equal(verifications, 1)
  })

  test('no token issued or refused in these tests appears in any log line', () => {
    const text = t.logs.text()
    assert.ok(planted.length > 5)
    for (const token of planted) {
      assert.equal(text.includes(token), false, 'a token was logged')
      assert.equal(text.includes(token.split('.')[2] ?? token), false, 'a token signature was logged')
    }
    assert.equal(text.includes('billing-secret-PLANTED'), false)
  })
})

describe('a flood of forged bearer tokens', () => {
  let idp: TokenIdp
  let t: BearerTestApp
  before(async () => {
    idp = await startTokenIdp('unused')
    t = await buildBearerApp({ schemes: { Partner: { Issuer: idp.issuer, JwksUri: `${idp.issuer}/jwks`, Audiences: [PARTNER_AUDIENCE] } }, refusalsPerWindow: 5 })
  })
  after(async () => { await t?.app.close(); await idp?.close() })

  test('is answered 429 after the limit, before any cryptography, with at most one key refetch; a valid cached token still passes', async () => {
    const now = Math.floor(Date.now() / 1000)
    const valid = await new SignJWT({ iss: idp.issuer, aud: PARTNER_AUDIENCE, sub: 'ada', exp: now + 300 }).setProtectedHeader({ alg: 'RS256', kid: 'known' }).sign(idp.signingKey)
    assert.equal((await t.app.inject({ url: '/api/orders', headers: { authorization: `Bearer ${valid}` } })).statusCode, 200)
    const fetched = idp.jwksRequests
    const statuses: number[] = []
    for (let index = 0; index < 20; index++) {
      const forged = await new SignJWT({ iss: idp.issuer, aud: PARTNER_AUDIENCE, sub: 'x', exp: now + 300 }).setProtectedHeader({ alg: 'RS256', kid: `forged-${index}` }).sign(idp.unknownKey)
      const response = await t.app.inject({ url: '/api/orders', headers: { authorization: `Bearer ${forged}` } })
      statuses.push(response.statusCode)
      if (response.statusCode === 429) assert.ok(Number(response.headers['retry-after']) >= 1)
    }
    assert.deepEqual(statuses, [...Array(6).fill(401), ...Array(14).fill(429)])
    assert.ok(idp.jwksRequests - fetched <= 1, 'at most one refetch for the whole flood')
    assert.equal((await t.app.inject({ url: '/api/orders', headers: { authorization: `Bearer ${valid}` } })).statusCode, 200, 'the verified token is not held back')
    assert.equal(t.logs.events('bearer.refused').filter((line) => line.failure === 'rate_limited').length, 14)
  })
})

describe('a JwtBearer scheme from the provider source (a customer\'s issuer)', () => {
  let idp: TokenIdp
  let t: BearerTestApp
  before(async () => {
    idp = await startTokenIdp('unused')
    t = await buildBearerApp({
      schemes: {},
      providerSource: async () => [{ scheme: 'Contoso', tenant: 'tenant-contoso', settings: { Type: 'JwtBearer', Issuer: idp.issuer, JwksUri: `${idp.issuer}/jwks`, Audiences: [PARTNER_AUDIENCE] } }],
      routes: (app) => { app.get('/api/tenant', async (request) => ({ tenant: request.user === undefined ? null : tenantOf(request.user) ?? null, scheme: request.user?.scheme ?? null })) }
    })
  })
  after(async () => { await t?.app.close(); await idp?.close() })

  test('its tokens are that tenant\'s principals: the source\'s tenant claim, never the token\'s; its issuer is not published', async () => {
    const now = Math.floor(Date.now() / 1000)
    const token = await new SignJWT({ iss: idp.issuer, aud: PARTNER_AUDIENCE, sub: 'ada', exp: now + 300, 'application:tenant': 'tenant-fabrikam' })
      .setProtectedHeader({ alg: 'RS256', kid: 'known' }).sign(idp.signingKey)
    const response = await t.app.inject({ url: '/api/tenant', headers: { authorization: `Bearer ${token}` } })
    assert.equal(response.statusCode, 200)
    assert.deepEqual(response.json(), { tenant: 'tenant-contoso', scheme: 'Contoso' })
    assert.equal((await t.app.inject({ url: '/.well-known/oauth-protected-resource' })).statusCode, 404, 'no metadata without a configured scheme (an unknown well-known path)')
  })
})
