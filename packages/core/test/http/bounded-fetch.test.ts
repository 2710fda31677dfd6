/**
 * The one bounded reader of outbound responses (src/http/bounded-fetch.ts), against a real HTTP
 * server on loopback: the cap applies after decompression, a declared length over the cap is
 * refused before reading, the deadline covers the body and not only the headers, a document
 * within its cap arrives whole and decoded, and the back-channel logout key set (read by jose)
 * goes through the same reader.
 */
import assert from 'node:assert/strict'
import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gzipSync } from 'node:zlib'
import { after, before, describe, test } from 'node:test'
import { SignJWT, generateKeyPair } from 'jose'
import { fetchBounded, OUTBOUND_RESPONSE_LIMITS, OutboundResponseTooLargeError, tooLargeFields } from '../../src/http/bounded-fetch.js'
import { LogoutTokenError, remoteKeySet, validateLogoutToken } from '../../src/oidc/back-channel-logout.js'
import { writeHostile } from '../helpers/hostile-bodies.js'

type Handler = (response: ServerResponse) => void | Promise<void>

describe('fetchBounded', () => {
  const routes = new Map<string, Handler>()
  let server: Server
  let origin = ''

  before(async () => {
    server = createServer((request, response) => {
      const handler = routes.get(request.url ?? '')
      if (handler === undefined) { response.writeHead(404).end(); return }
      Promise.resolve(handler(response)).catch(() => { response.destroy() })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  after(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  test('a gzip document within its cap arrives decoded, without the wire headers that no longer apply', async () => {
    const document = JSON.stringify({ issuer: 'https://idp.example', padding: 'x'.repeat(50_000) })
    routes.set('/small', (response) => {
      const body = gzipSync(document)
      response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': body.length }).end(body)
    })
    const response = await fetchBounded(`${origin}/small`, {}, { kind: 'discovery', timeoutMs: 5_000 })
    assert.equal(response.status, 200)
    assert.equal(await response.text(), document)
    assert.equal(response.headers.get('content-encoding'), null)
    assert.equal(response.headers.get('content-type'), 'application/json')
  })

  test('a gzip bomb is refused at the cap of its kind, counted after decompression', async () => {
    routes.set('/bomb', async (response) => { await writeHostile(response, 'gzip-bomb') })
    const error = await fetchBounded(`${origin}/bomb`, {}, { kind: 'discovery', timeoutMs: 5_000 }).then(() => undefined, (caught: unknown) => caught)
    assert.ok(error instanceof OutboundResponseTooLargeError)
    assert.equal(error.kind, 'discovery')
    assert.equal(error.limitBytes, OUTBOUND_RESPONSE_LIMITS.discovery)
    assert.deepEqual(tooLargeFields(new Error('wrapped', { cause: error })), { responseKind: 'discovery', responseLimitBytes: OUTBOUND_RESPONSE_LIMITS.discovery })
  })

  test('a declared Content-Length over the cap is refused before the body is read', async () => {
    let sent = 0
    routes.set('/declared', (response) => {
      response.writeHead(200, { 'content-length': 10 * 1024 * 1024 })
      const chunk = Buffer.alloc(64 * 1024, 'a')
      // Write slowly: a reader that waits for the body would see some of it.
      const timer = setInterval(() => { sent += chunk.length; if (!response.write(chunk) || sent > 4 * 1024 * 1024) clearInterval(timer) }, 5)
      response.on('close', () => { clearInterval(timer) })
    })
    await assert.rejects(fetchBounded(`${origin}/declared`, {}, { kind: 'introspection', timeoutMs: 5_000 }), (error: unknown) =>
      error instanceof OutboundResponseTooLargeError && error.kind === 'introspection')
  })

  test('the deadline covers the body: a body that trickles in is aborted at the deadline', async () => {
    routes.set('/trickle', (response) => {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.write('{"a":"')
      const timer = setInterval(() => { response.write('a') }, 50)
      response.on('close', () => { clearInterval(timer) })
    })
    const started = performance.now()
    await assert.rejects(fetchBounded(`${origin}/trickle`, {}, { kind: 'token', timeoutMs: 300 }), (error: unknown) =>
      (error as { name?: string }).name === 'TimeoutError')
    assert.ok(performance.now() - started < 5_000, 'aborted at the deadline, not when the server gave up')
  })

  test('the back-channel logout key set (read by jose) goes through the bounded reader', async () => {
    routes.set('/jwks-bomb', async (response) => { await writeHostile(response, 'gzip-bomb') })
    const { privateKey } = await generateKeyPair('RS256')
    const now = Math.floor(Date.now() / 1000)
    const token = await new SignJWT({ events: { 'http://schemas.openid.net/event/backchannel-logout': {} }, sid: 's', jti: 'j' })
      .setProtectedHeader({ alg: 'RS256', kid: 'k' }).setIssuer(origin).setAudience('client').setIssuedAt(now).sign(privateKey)
    await assert.rejects(validateLogoutToken(token, { issuer: origin, clientId: 'client', algorithm: 'RS256', keys: remoteKeySet(`${origin}/jwks-bomb`, 5_000), clockToleranceSeconds: 60 }),
      (error: unknown) => error instanceof LogoutTokenError && error.failure === 'unavailable' && error.code === 'RESPONSE_TOO_LARGE')
  })
})
