/**
 * Opaque access tokens through introspection (RFC 7662; issue 35, item 4). Against oidc-provider
 * on loopback (opaque client-credentials tokens for a resource, introspection and revocation on):
 * an opaque token is the same machine principal a JWT gives, a revoked one is refused once the
 * cache window (CacheSeconds) has passed, the API's client secret and the tokens never reach a log
 * line. Against a controlled introspection endpoint on loopback (a clock the test moves): the
 * answer's `aud`, `iss`, `exp` are checked, identical lookups share one call, inactive answers are
 * remembered briefly and in bounded number, and an endpoint that cannot answer is
 * `introspection_unavailable` (503), never a bad token.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, decodeJwt } from 'jose'
import type { BearerFailure } from '../../src/bearer/failures.js'
import { MAX_INACTIVE_ANSWERS, TokenIntrospection, type IntrospectionSettings } from '../../src/bearer/introspection.js'
import { JwtBearerScheme } from '../../src/bearer/jwt-bearer-scheme.js'
import { Secret } from '../../src/config/secret.js'
import { bearerFailureOf, buildBearerApp, type BearerTestApp } from '../helpers/bearer-app.js'
import { startResourceIdp, type ResourceIdp } from '../helpers/providers/resource-idp.js'

const RESOURCE = 'https://api.example.test/'
const OPAQUE_RESOURCE = 'https://opaque.example.test/'
const API_SECRET = 'PLANTED-introspection-secret-51c2'
const TRANSFORMATION = { Enabled: true, RemoveOriginalClaims: false }

describe('opaque tokens introspected at oidc-provider', () => {
  let idp: ResourceIdp
  let t: BearerTestApp
  const planted: string[] = [API_SECRET]

  before(async () => {
    idp = await startResourceIdp({
      resource: RESOURCE,
      opaqueResource: OPAQUE_RESOURCE,
      scopes: ['orders.read', 'orders.write'],
      clients: { billing: 'billing-secret-PLANTED' },
      introspectionClients: [{ client_id: 'orders-api', client_secret: API_SECRET, grant_types: [], redirect_uris: [], response_types: [], token_endpoint_auth_method: 'client_secret_post' }]
    })
    t = await buildBearerApp({
      schemes: {
        Api: {
          Authority: idp.issuer,
          Audiences: [OPAQUE_RESOURCE, RESOURCE],
          Introspection: { ClientId: 'orders-api', ClientSecret: API_SECRET, TokenEndpointAuthMethod: 'client_secret_post', CacheSeconds: 1 }
        }
      },
      refusalsPerWindow: 1000
    })
  })
  after(async () => {
    await t?.app.close()
    await idp?.close()
  })

  async function opaqueToken (): Promise<string> {
    const token = await idp.clientCredentialsToken('billing', 'orders.read', OPAQUE_RESOURCE)
    planted.push(token)
    return token
  }

  test('an opaque client-credentials token is the machine principal a JWT gives; a second call is served from the cache', async () => {
    const token = await opaqueToken()
    assert.equal(token.split('.').length, 1, 'oidc-provider issued an opaque token')
    const before = idp.introspectionRequests
    const response = await t.app.inject({ url: '/api/orders', headers: { authorization: `Bearer ${token}` } })
    assert.equal(response.statusCode, 200)
    assert.deepEqual(response.json(), { subject: 'billing', scheme: 'Api', machine: true, clientId: 'billing', scopes: ['orders.read'] })
    assert.equal((await t.app.inject({ url: '/api/orders', headers: { authorization: `Bearer ${token}` } })).statusCode, 200)
    assert.equal(idp.introspectionRequests - before, 1, 'one introspection for two calls')
  })

  test('a JWT of the same issuer is still validated locally, not introspected', async () => {
    const jwt = await idp.clientCredentialsToken('billing', 'orders.read')
    planted.push(jwt)
    assert.equal(decodeJwt(jwt).aud, RESOURCE)
    const before = idp.introspectionRequests
    assert.equal((await t.app.inject({ url: '/api/orders', headers: { authorization: `Bearer ${jwt}` } })).statusCode, 200)
    assert.equal(idp.introspectionRequests, before)
  })

  test('revoked at the issuer: refused (401 invalid_token) once CacheSeconds has passed, and only then', async () => {
    const token = await opaqueToken()
    const call = async (): Promise<number> => (await t.app.inject({ url: '/api/orders', headers: { authorization: `Bearer ${token}` } })).statusCode
    assert.equal(await call(), 200)
    await idp.revoke('billing', token)
    assert.equal(await call(), 200, 'within the cache window the answer is reused')
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const before = t.logs.events('bearer.refused').length
    const refused = await t.app.inject({ url: '/api/orders', headers: { authorization: `Bearer ${token}` } })
    assert.equal(refused.statusCode, 401)
    assert.match(String(refused.headers['www-authenticate']), /^Bearer error="invalid_token"/)
    assert.deepEqual(t.logs.events('bearer.refused').slice(before).map((line) => line.failure), ['inactive'])
  })

  test('an unknown opaque token is 401 invalid_token, failure class inactive', async () => {
    const response = await t.app.inject({ url: '/api/orders', headers: { authorization: 'Bearer made-up-opaque-token-0123456789' } })
    assert.equal(response.statusCode, 401)
    assert.equal(t.logs.events('bearer.refused').at(-1)?.failure, 'inactive')
  })

  test('neither the introspection secret nor a token appears in any log line', () => {
    const text = t.logs.text()
    for (const value of planted) assert.equal(text.includes(value), false, 'a secret or token was logged')
  })
})

describe('the introspection answer, checked (a controlled endpoint on loopback)', () => {
  let server: Server
  let origin: string
  let answer: (body: URLSearchParams, request: IncomingMessage) => { status?: number, body: unknown, delayMs?: number } = () => ({ body: { active: false } })
  const requests: Array<{ body: URLSearchParams, authorization: string | undefined }> = []
  let nowMs = Date.now()

  before(async () => {
    server = createServer((request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () => {
        const body = new URLSearchParams(Buffer.concat(chunks).toString('utf8'))
        requests.push({ body, authorization: request.headers.authorization })
        const { status = 200, body: out, delayMs = 0 } = answer(body, request)
        setTimeout(() => {
          response.writeHead(status, { 'content-type': 'application/json' }).end(typeof out === 'string' ? out : JSON.stringify(out))
        }, delayMs)
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    origin = `http://localhost:${(server.address() as AddressInfo).port}`
  })
  after(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  function introspection (overrides: Partial<IntrospectionSettings> = {}): IntrospectionSettings {
    return { ClientId: 'orders api+1', ClientSecret: new Secret(API_SECRET), Endpoint: `${origin}/introspect`, TokenEndpointAuthMethod: 'client_secret_basic', ClientAssertionKeys: [], ClientAssertionCertificates: [], CacheSeconds: 60, ...overrides }
  }

  function scheme (overrides: Partial<IntrospectionSettings> = {}, timeoutMs = 2000): JwtBearerScheme {
    return new JwtBearerScheme({
      scheme: 'Api',
      keyPrefix: 'ProjectTemplate:Authentication:Schemes:Api',
      settings: { Authority: '', Issuer: origin, JwksUri: `${origin}/jwks`, Audiences: ['api://orders'], ValidAlgorithms: [], ClockSkewSeconds: 0, ClaimMappings: {}, Introspection: introspection(overrides) },
      allowInsecureRequests: true,
      timeoutMs,
      now: () => nowMs
    })
  }

  const active = (claims: Record<string, unknown> = {}): Record<string, unknown> =>
    ({ active: true, iss: origin, aud: 'api://orders', sub: 'ada', client_id: 'mobile-app', scope: 'orders.read', exp: Math.floor(nowMs / 1000) + 300, ...claims })

  test('client_secret_basic: the id and secret encoded as for OpenID Connect; token_type_hint access_token', async () => {
    answer = () => ({ body: active() })
    requests.length = 0
    const authentication = await scheme().authenticate('opaque-basic', TRANSFORMATION)
    assert.equal(authentication.principal.subject, 'ada')
    assert.equal(authentication.clientId, 'mobile-app')
    assert.equal(authentication.machine, false)
    const [request] = requests
    assert.equal(request?.authorization, `Basic ${Buffer.from(`orders%20api%2B1:${API_SECRET}`).toString('base64')}`)
    assert.equal(request?.body.get('token'), 'opaque-basic')
    assert.equal(request?.body.get('token_type_hint'), 'access_token')
  })

  test('private_key_jwt: a client assertion for the issuer, no secret sent', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    answer = () => ({ body: active() })
    requests.length = 0
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
    await scheme({ TokenEndpointAuthMethod: 'private_key_jwt', ClientAssertionKeys: [new Secret(pem)] }).authenticate('opaque-pkjwt', TRANSFORMATION)
    const [request] = requests
    assert.equal(request?.authorization, undefined)
    assert.equal(request?.body.get('client_secret'), null)
    const assertion = request?.body.get('client_assertion') ?? ''
    const { jwtVerify } = await import('jose')
    const { payload } = await jwtVerify(assertion, publicKey, { issuer: 'orders api+1', audience: origin })
    assert.equal(payload.sub, 'orders api+1')
    assert.ok(await exportJWK(publicKey))
  })

  const refusals: ReadonlyArray<{ readonly name: string, readonly failure: BearerFailure, readonly body: unknown, readonly status?: number }> = [
    { name: 'active false', failure: 'inactive', body: { active: false } },
    { name: 'active the string "true"', failure: 'inactive', body: { active: 'true', aud: 'api://orders', sub: 'x' } },
    { name: 'another audience', failure: 'audience', body: { ...active(), aud: 'api://billing' } },
    { name: 'no audience', failure: 'audience', body: { ...active(), aud: undefined } },
    { name: 'another issuer', failure: 'issuer', body: { ...active(), iss: 'https://evil.example' } },
    { name: 'exp passed', failure: 'expired', body: { ...active(), exp: Math.floor(Date.now() / 1000) - 10 } },
    { name: 'exp a string', failure: 'malformed', body: { ...active(), exp: 'soon' } },
    { name: 'no subject and no client', failure: 'no_subject', body: { ...active(), sub: undefined, client_id: undefined } },
    { name: 'the endpoint answers 500', failure: 'introspection_unavailable', body: { error: 'server_error' }, status: 500 },
    { name: 'the endpoint answers 401 (our credentials refused)', failure: 'introspection_unavailable', body: { error: 'invalid_client' }, status: 401 },
    { name: 'the endpoint answers HTML', failure: 'introspection_unavailable', body: '<html>maintenance</html>' },
    { name: 'the endpoint answers a JSON array', failure: 'introspection_unavailable', body: [true] },
    { name: 'the endpoint answers over 64 KB', failure: 'introspection_unavailable', body: { ...active(), padding: 'x'.repeat(70 * 1024) } }
  ]
  for (const { name, failure, body, status } of refusals) {
    test(`refused: ${name} (${failure})`, async () => {
      nowMs = Date.now()
      answer = () => ({ body, ...(status === undefined ? {} : { status }) })
      assert.equal(await bearerFailureOf(scheme().authenticate(`opaque-${name.replace(/\W+/g, '-')}`, TRANSFORMATION)), failure)
    })
  }

  test('an endpoint slower than the deadline is introspection_unavailable', async () => {
    answer = () => ({ body: active(), delayMs: 500 })
    assert.equal(await bearerFailureOf(scheme({}, 100).authenticate('opaque-slow', TRANSFORMATION)), 'introspection_unavailable')
  })

  test('an answer without exp is valid for CacheSeconds; an answer with exp is cached no longer than exp', async () => {
    nowMs = Date.now()
    answer = () => ({ body: { ...active(), exp: undefined } })
    const withoutExp = await scheme({ CacheSeconds: 30 }).authenticate('opaque-no-exp', TRANSFORMATION)
    assert.equal(withoutExp.cachedUntilMs, Math.floor(nowMs / 1000) * 1000 + 30_000)
    answer = () => ({ body: active({ exp: Math.floor(nowMs / 1000) + 5 }) })
    const shortLived = await scheme({ CacheSeconds: 30 }).authenticate('opaque-short', TRANSFORMATION)
    assert.equal(shortLived.cachedUntilMs, Math.floor(nowMs / 1000) * 1000 + 5000)
  })

  test('identical lookups in flight share one call', async () => {
    answer = () => ({ body: active(), delayMs: 50 })
    requests.length = 0
    const api = scheme()
    const results = await Promise.all(Array.from({ length: 10 }, async () => await api.authenticate('opaque-shared', TRANSFORMATION)))
    assert.equal(results.length, 10)
    assert.equal(requests.length, 1)
  })

  test('an inactive answer is remembered (no second call) until its short window ends, then asked again', async () => {
    nowMs = Date.now()
    answer = () => ({ body: { active: false } })
    requests.length = 0
    const api = scheme()
    assert.equal(await bearerFailureOf(api.authenticate('opaque-revoked', TRANSFORMATION)), 'inactive')
    assert.equal(await bearerFailureOf(api.authenticate('opaque-revoked', TRANSFORMATION)), 'inactive')
    assert.equal(requests.length, 1)
    nowMs += 10_001
    assert.equal(await bearerFailureOf(api.authenticate('opaque-revoked', TRANSFORMATION)), 'inactive')
    assert.equal(requests.length, 2)
  })

  test(`inactive answers are bounded (${MAX_INACTIVE_ANSWERS} by default; 20 here): past the bound the oldest is asked again`, async () => {
    nowMs = Date.now()
    answer = () => ({ body: { active: false } })
    const lookups = new TokenIntrospection({ settings: introspection(), allowInsecureRequests: true, timeoutMs: 2000, now: () => nowMs, maxInactiveAnswers: 20 })
    const call = { endpoint: `${origin}/introspect`, issuer: origin }
    await bearerFailureOf(lookups.introspect('garbage-first', call))
    for (let index = 0; index < 19; index++) await bearerFailureOf(lookups.introspect(`garbage-${index}`, call))
    requests.length = 0
    await bearerFailureOf(lookups.introspect('garbage-first', call))
    assert.equal(requests.length, 0, 'still remembered at the bound')
    await bearerFailureOf(lookups.introspect('garbage-19', call))
    await bearerFailureOf(lookups.introspect('garbage-first', call))
    assert.equal(requests.length, 2, 'one more answer pushed the oldest out')
  })

  test('a JWT-shaped token is not introspected', async () => {
    requests.length = 0
    assert.notEqual(await bearerFailureOf(scheme().authenticate('aGVhZA.cGF5bG9hZA.c2ln', TRANSFORMATION)), 'inactive')
    assert.equal(requests.length, 0)
  })
})
