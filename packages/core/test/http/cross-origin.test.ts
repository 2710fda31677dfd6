/**
 * CORS for the bearer routes (`Cors`, issue 40 item 13), with real HTTP on loopback: the app with
 * a JwtBearer scheme trusting oidc-provider, and preflights and calls sent with node:http as a
 * browser sends them. Closed by default (no AllowedOrigins: no CORS header anywhere); an allowed
 * origin's preflight is answered 204 before authentication; any other origin, method or header,
 * and every page path, gets no CORS header; a call from an allowed origin gets that origin (never
 * `*`, never credentials), also on its 401, whose challenge it may read.
 */
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildBearerApp, type BearerTestApp } from '../helpers/bearer-app.js'
import { startResourceIdp, type ResourceIdp } from '../helpers/providers/resource-idp.js'
import { loadTestConfiguration } from '../helpers/app.js'
import type { TestSettings } from '../../src/testing/app.js'

const RESOURCE = 'https://orders.example.test'
const SPA = 'https://spa.example.test'

interface Answer { readonly status: number, readonly headers: Record<string, string | string[] | undefined> }

async function send (origin: string, method: string, path: string, headers: Record<string, string>): Promise<Answer> {
  return await new Promise((resolve, reject) => {
    const request = httpRequest(`${origin}${path}`, { method, headers, timeout: 10_000 }, (response) => {
      response.resume()
      response.on('end', () => { resolve({ status: response.statusCode ?? 0, headers: response.headers }) })
    })
    request.on('timeout', () => { request.destroy(new Error('timeout')) })
    request.on('error', reject)
    request.end()
  })
}

function corsHeadersOf (answer: Answer): string[] {
  return Object.keys(answer.headers).filter((name) => name.startsWith('access-control-')).sort()
}

const preflight = (headers: Record<string, string> = {}): Record<string, string> => ({
  origin: SPA, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization, dpop', ...headers
})

async function listen (app: BearerTestApp): Promise<string> {
  await app.app.listen({ host: '127.0.0.1', port: 0 })
  return `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`
}

describe('CORS on the bearer routes', () => {
  let idp: ResourceIdp
  let open: BearerTestApp
  let closed: BearerTestApp
  let openOrigin: string
  let closedOrigin: string

  before(async () => {
    idp = await startResourceIdp({ resource: RESOURCE, scopes: ['orders.read'], clients: { spa: 'spa-secret' } })
    const schemes = { Idp: { Authority: idp.issuer, Audiences: [RESOURCE] } }
    open = await buildBearerApp({ schemes, settings: { Cors: { AllowedOrigins: [SPA, 'https://other.example.test'] } } })
    closed = await buildBearerApp({ schemes })
    openOrigin = await listen(open)
    closedOrigin = await listen(closed)
  })
  after(async () => {
    await open?.app.close()
    await closed?.app.close()
    await idp?.close()
  })

  test('by default no CORS header is sent, not even to a preflight', async () => {
    const answer = await send(closedOrigin, 'OPTIONS', '/api/orders', preflight())
    assert.deepEqual(corsHeadersOf(answer), [])
    assert.notEqual(answer.status, 204)
  })

  test('a preflight from an allowed origin is answered 204 without authentication', async () => {
    const answer = await send(openOrigin, 'OPTIONS', '/api/orders', preflight())
    assert.equal(answer.status, 204)
    assert.equal(answer.headers['access-control-allow-origin'], SPA)
    assert.equal(answer.headers['access-control-allow-methods'], 'GET, HEAD, POST, PUT, PATCH, DELETE')
    assert.equal(answer.headers['access-control-allow-headers'], 'Authorization, DPoP, Content-Type, X-API-Key')
    assert.equal(answer.headers['access-control-max-age'], '600')
    assert.match(String(answer.headers.vary), /Origin/)
    assert.equal(answer.headers['access-control-allow-credentials'], undefined)
    assert.equal(answer.headers['set-cookie'], undefined)
  })

  test('a script on an allowed origin may send its API key as X-API-Key: the preflight allows the header by default', async () => {
    const answer = await send(openOrigin, 'OPTIONS', '/api/orders', preflight({ 'access-control-request-headers': 'x-api-key' }))
    assert.equal(answer.status, 204)
    assert.equal(answer.headers['access-control-allow-origin'], SPA)
  })

  test('a preflight to a path no route serves under the API prefix is answered the same', async () => {
    const answer = await send(openOrigin, 'OPTIONS', '/api/nothing-here', preflight())
    assert.equal(answer.status, 204)
    assert.equal(answer.headers['access-control-allow-origin'], SPA)
  })

  const refused: ReadonlyArray<readonly [string, string, Record<string, string>]> = [
    ['an origin not listed', '/api/orders', preflight({ origin: 'https://evil.example.test' })],
    ['a listed origin with a path-like suffix', '/api/orders', preflight({ origin: `${SPA}.evil.example` })],
    ['the null origin', '/api/orders', preflight({ origin: 'null' })],
    ['a method not allowed', '/api/orders', preflight({ 'access-control-request-method': 'TRACE' })],
    ['a header not allowed', '/api/orders', preflight({ 'access-control-request-headers': 'authorization, x-admin' })],
    ['a page path', '/orders', preflight()],
    ['a path that only looks like the API', '/apix/orders', preflight()]
  ]
  for (const [name, path, headers] of refused) {
    test(`no CORS header and no 204 for ${name}`, async () => {
      const answer = await send(openOrigin, 'OPTIONS', path, headers)
      assert.deepEqual(corsHeadersOf(answer), [])
      assert.notEqual(answer.status, 204)
    })
  }

  test('a call with a valid token from an allowed origin gets that origin and the exposed headers', async () => {
    const token = await idp.clientCredentialsToken('spa', 'orders.read')
    const answer = await send(openOrigin, 'GET', '/api/orders', { origin: SPA, authorization: `Bearer ${token}` })
    assert.equal(answer.status, 200)
    assert.equal(answer.headers['access-control-allow-origin'], SPA)
    assert.equal(answer.headers['access-control-expose-headers'], 'WWW-Authenticate, DPoP-Nonce')
    assert.equal(answer.headers['access-control-allow-credentials'], undefined)
  })

  test('a refused call from an allowed origin still lets the page read the 401 and its challenge', async () => {
    const answer = await send(openOrigin, 'GET', '/api/orders', { origin: 'https://other.example.test' })
    assert.equal(answer.status, 401)
    assert.equal(answer.headers['access-control-allow-origin'], 'https://other.example.test')
    assert.match(String(answer.headers['www-authenticate']), /^Bearer/)
  })

  test('a call from another origin gets no CORS header, only Vary: Origin', async () => {
    const token = await idp.clientCredentialsToken('spa', 'orders.read')
    const answer = await send(openOrigin, 'GET', '/api/orders', { origin: 'https://evil.example.test', authorization: `Bearer ${token}` })
    assert.equal(answer.status, 200)
    assert.deepEqual(corsHeadersOf(answer), [])
    assert.match(String(answer.headers.vary), /Origin/)
  })
})

describe('Cors settings at startup', () => {
  const messagesOf = (cors: TestSettings, nodeEnv = 'production'): string[] =>
    loadTestConfiguration({ nodeEnv, settings: { Hosting: { PublicOrigin: 'https://app.example.test' }, Cors: cors } }).errors.map((problem) => problem.message)

  test('exact https origins load', () => {
    assert.deepEqual(messagesOf({ AllowedOrigins: ['https://spa.example.test', 'https://spa.example.test:8443'] }), [])
  })

  const ORIGIN = 'must be an exact origin such as https://spa.example.com (scheme, lower-case host and port only; no path, no trailing slash, no wildcard; http only for a loopback host in Development).'
  for (const [name, value] of [['a wildcard', '*'], ['a trailing slash', 'https://spa.example.test/'], ['a path', 'https://spa.example.test/app'], ['upper case', 'https://SPA.example.test'], ['http', 'http://spa.example.test'], ['http loopback outside Development', 'http://127.0.0.1:5173']]) {
    test(`an origin with ${name} is refused, naming its index`, () => {
      assert.deepEqual(messagesOf({ AllowedOrigins: ['https://ok.example.test', value] }), [`ProjectTemplate:Cors:AllowedOrigins:1 ${ORIGIN}`])
    })
  }

  test('http on loopback is accepted in Development; wildcard methods and headers are refused', () => {
    assert.deepEqual(messagesOf({ AllowedOrigins: ['http://localhost:5173'] }, 'development'), [])
    assert.deepEqual(messagesOf({ AllowedMethods: ['GET', '*'], AllowedHeaders: ['*'] }), [
      'ProjectTemplate:Cors:AllowedMethods:1 must be an upper-case method name (no wildcard).',
      'ProjectTemplate:Cors:AllowedHeaders:0 must be a header name (no wildcard).'
    ])
  })
})
