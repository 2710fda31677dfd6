/**
 * `app.downstreamApis.callAsApp` against real pieces on loopback: oidc-provider issuing
 * client-credentials JWT access tokens for a resource (RFC 8707), to a client authenticating with
 * client_secret_basic and to one authenticating with private_key_jwt (the provider verifies the
 * assertion against the client's registered key); a second app built with createApp and a
 * JwtBearer scheme as the downstream API, which verifies each token; and a recording node:http
 * API for the 401 retry, redirects, size caps and refused paths. The token is requested once for
 * concurrent callers and kept; the secret, the key and the tokens never reach a log line.
 */
import { generateKeyPairSync } from 'node:crypto'
import { createServer, type AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { calculateJwkThumbprint, type JWK } from 'jose'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { buildBearerApp, type BearerTestApp } from '../helpers/bearer-app.js'
import { startDownstreamServer, type DownstreamServer } from '../helpers/downstream-server.js'
import { startResourceIdp, type ResourceIdp } from '../helpers/providers/resource-idp.js'
import { DownstreamApiError } from '../../src/downstream/downstream-error.js'

const RESOURCE = 'https://orders.example.test'
const SECRET = 'worker-secret-PLANTED-5c1e'
const signer = generateKeyPairSync('ec', { namedCurve: 'P-256' })
const SIGNER_PEM = signer.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()
const SIGNER_JWK = signer.publicKey.export({ format: 'jwk' }) as JWK
const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' })
const STRANGER_PEM = stranger.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()

/** A loopback port nothing listens on (was free a moment ago). */
async function closedPort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

async function refusal (call: Promise<unknown>): Promise<DownstreamApiError> {
  try {
    await call
  } catch (error) {
    assert.ok(error instanceof DownstreamApiError, `a DownstreamApiError, not ${String(error)}`)
    return error
  }
  assert.fail('the call was not refused')
}

describe('calls as the app with client-credentials tokens', () => {
  let idp: ResourceIdp
  let api: BearerTestApp
  let apiOrigin: string
  let echo: DownstreamServer
  let catcher: DownstreamServer
  let t: TestApp

  before(async () => {
    idp = await startResourceIdp({
      resource: RESOURCE,
      scopes: ['orders.read'],
      clients: { 'orders-worker': SECRET },
      assertionClients: { 'orders-signer': { keys: [{ ...SIGNER_JWK, kid: await calculateJwkThumbprint(SIGNER_JWK), alg: 'ES256', use: 'sig' }] } }
    })
    api = await buildBearerApp({ schemes: { Idp: { Authority: idp.issuer, Audiences: [RESOURCE] } } })
    await api.app.listen({ host: '127.0.0.1', port: 0 })
    apiOrigin = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`
    echo = await startDownstreamServer()
    catcher = await startDownstreamServer()
    const worker = { Authority: idp.issuer, ClientId: 'orders-worker', ClientSecret: SECRET, Resource: RESOURCE }
    const signed = { Authority: idp.issuer, ClientId: 'orders-signer', TokenEndpointAuthMethod: 'private_key_jwt', ClientAssertionKeys: [SIGNER_PEM], Resource: RESOURCE }
    t = await buildTestApp({
      nodeEnv: 'development',
      settings: {
        DownstreamApis: {
          Orders: { BaseUrl: `${apiOrigin}/api`, Scopes: ['orders.read'], ClientCredentials: worker },
          Signed: { BaseUrl: `${apiOrigin}/api`, Scopes: ['orders.read'], ClientCredentials: signed },
          Stranger: { BaseUrl: `${apiOrigin}/api`, ClientCredentials: { ...signed, ClientAssertionKeys: [STRANGER_PEM] } },
          Burst: { BaseUrl: `${apiOrigin}/api`, Scopes: ['orders.read'], ClientCredentials: worker },
          Echo: { BaseUrl: `${echo.origin}/v1`, MaxResponseBytes: 4096, ClientCredentials: worker },
          Down: { BaseUrl: `${echo.origin}/v1`, ClientCredentials: { ...worker, Authority: '', TokenEndpoint: `http://127.0.0.1:${await closedPort()}/token` } }
        }
      },
      configure: (app) => {
        app.get('/test-only/call/:api', { config: { allowAnonymous: true } }, async (request) => {
          const response = await app.downstreamApis.callAsApp((request.params as { api: string }).api, '/orders')
          return { status: response.status, body: await response.json() as unknown }
        })
      }
    })
  })
  after(async () => {
    await t?.app.close()
    await api?.app.close()
    await echo?.close()
    await catcher?.close()
    await idp?.close()
  })

  test('client_secret_basic: the API verifies the token and sees the client', async () => {
    const response = await t.app.downstreamApis.callAsApp('Orders', '/orders')
    assert.equal(response.status, 200)
    const body = await response.json() as Record<string, unknown>
    assert.equal(body.clientId, 'orders-worker')
    assert.equal(body.machine, true)
    assert.deepEqual(body.scopes, ['orders.read'])
  })

  test('private_key_jwt: the provider verifies the assertion; the API sees the signing client', async () => {
    const response = await t.app.downstreamApis.callAsApp('Signed', '/orders')
    assert.equal(response.status, 200)
    assert.equal((await response.json() as Record<string, unknown>).clientId, 'orders-signer')
  })

  test('private_key_jwt with a key the provider does not know: no token, APP_ERR_DOWNSTREAM_TOKEN_UNAVAILABLE, the failure logged as invalid_client', async () => {
    const error = await refusal(t.app.downstreamApis.callAsApp('Stranger', '/orders'))
    assert.equal(error.code, 'APP_ERR_DOWNSTREAM_TOKEN_UNAVAILABLE')
    assert.equal(error.statusCode, 503)
    const line = t.logs.events('downstream.token.failed').find((record) => record.api === 'Stranger')
    assert.equal(line?.failure, 'invalid_client')
    assert.equal(line?.oauthError, 'invalid_client')
  })

  test('ten concurrent callers share one token request, and later callers reuse the token', async () => {
    const before = idp.tokenRequests
    const responses = await Promise.all(Array.from({ length: 10 }, async () => await t.app.downstreamApis.callAsApp('Burst', '/orders')))
    assert.deepEqual(responses.map((response) => response.status), Array(10).fill(200))
    assert.equal(idp.tokenRequests - before, 1, 'one token request for ten callers')
    for (let index = 0; index < 3; index++) assert.equal((await t.app.downstreamApis.callAsApp('Burst', '/orders')).status, 200)
    assert.equal(idp.tokenRequests - before, 1, 'the cached token serves later calls')
  })

  test('a 401 from the API: one retry with a new token, which the API accepts', async () => {
    echo.behave = { kind: 'refuse_first_token' }
    echo.seen.length = 0
    await t.app.downstreamApis.callAsApp('Echo', '/warm-up')
    const before = idp.tokenRequests
    echo.behave = { kind: 'refuse_first_token' }
    echo.seen.length = 0
    const response = await t.app.downstreamApis.callAsApp('Echo', '/items?status=open')
    assert.equal(response.status, 200)
    assert.equal(echo.seen.length, 2)
    assert.deepEqual(echo.seen.map((seen) => seen.path), ['/v1/items?status=open', '/v1/items?status=open'])
    assert.notEqual(echo.seen[0]!.authorization, echo.seen[1]!.authorization, 'the retry carries a new token')
    assert.equal(idp.tokenRequests - before, 1, 'one new token')
    assert.equal(t.logs.events('downstream.call.retried').filter((record) => record.api === 'Echo').length >= 1, true)
  })

  test('an API that refuses every token is called twice, never more, and its 401 is the answer', async () => {
    echo.behave = { kind: 'refuse_always' }
    echo.seen.length = 0
    const response = await t.app.downstreamApis.callAsApp('Echo', '/items')
    assert.equal(response.status, 401)
    assert.equal(echo.seen.length, 2)
  })

  test('a redirect is handed back, not followed: the other server never sees the token', async () => {
    echo.behave = { kind: 'redirect', location: `${catcher.origin}/collect` }
    catcher.seen.length = 0
    const response = await t.app.downstreamApis.callAsApp('Echo', '/items')
    assert.equal(response.status, 302)
    assert.equal(catcher.seen.length, 0)
  })

  test('an answer over MaxResponseBytes fails the call (APP_ERR_DOWNSTREAM_FAILED, too_large)', async () => {
    echo.behave = { kind: 'large', bytes: 64 * 1024 }
    const error = await refusal(t.app.downstreamApis.callAsApp('Echo', '/items'))
    assert.equal(error.code, 'APP_ERR_DOWNSTREAM_FAILED')
    assert.equal(error.failure, 'too_large')
    assert.equal(t.logs.events('downstream.call.failed').at(-1)?.responseLimitBytes, 4096)
  })

  test('paths that are absolute or leave the BaseUrl are refused before anything is sent', async () => {
    echo.behave = { kind: 'ok' }
    echo.seen.length = 0
    for (const path of [`${catcher.origin}/x`, '//127.0.0.1/x', '/../admin', '/%2e%2e/admin', '/a/%2F..%2Fadmin', 'items', '/a\\b', '/a b', '/items#x']) {
      const error = await refusal(t.app.downstreamApis.callAsApp('Echo', path))
      assert.equal(error.code, 'APP_ERR_DOWNSTREAM_REQUEST_INVALID', path)
      assert.equal(error.failure, 'invalid_target', path)
    }
    const unknown = await refusal(t.app.downstreamApis.callAsApp('Nope', '/items'))
    assert.equal(unknown.failure, 'invalid_target')
    assert.equal(echo.seen.length, 0)
    assert.equal(catcher.seen.length, 0)
  })

  test('through a route: an unreachable token endpoint is a 503 problem with the code, no stack, no secret', async () => {
    const response = await t.app.inject({ url: '/test-only/call/Down', headers: { accept: 'application/json' } })
    assert.equal(response.statusCode, 503)
    assert.match(String(response.headers['content-type']), /application\/problem\+json/)
    const body = response.json() as Record<string, unknown>
    assert.equal(body.code, 'APP_ERR_DOWNSTREAM_TOKEN_UNAVAILABLE')
    assert.doesNotMatch(response.body, /at .*\.ts:\d+|PLANTED/)
    const line = t.logs.events('downstream.token.failed').find((record) => record.api === 'Down')
    assert.equal(line?.failure, 'unavailable')
    assert.equal(line?.causeCode, 'ECONNREFUSED')
  })

  test('through a route: a working API answers 200', async () => {
    const response = await t.app.inject({ url: '/test-only/call/Orders', headers: { accept: 'application/json' } })
    assert.equal(response.statusCode, 200)
    assert.equal((response.json() as { body: { clientId: string } }).body.clientId, 'orders-worker')
  })

  test('no log line carries the client secret, the private key or a token', () => {
    const logs = t.logs.text()
    assert.ok(logs.length > 0)
    assert.equal(logs.includes(SECRET), false, 'secret')
    assert.equal(logs.includes(SIGNER_PEM.split('\n')[1]!), false, 'private key')
    const tokens = [...echo.authorizations, ...catcher.authorizations].map((authorization) => authorization.replace(/^Bearer /, ''))
    assert.ok(tokens.length > 0)
    for (const token of tokens) assert.equal(logs.includes(token), false, 'token')
    assert.equal(api.logs.text().includes(SECRET), false)
  })
})
