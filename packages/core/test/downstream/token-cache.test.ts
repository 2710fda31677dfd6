/**
 * The client-credentials token cache (downstream/client-credentials.ts) with an injected clock and
 * a token endpoint on loopback that counts its requests: a token is reused until shortly before
 * its expiry (expires_in minus a minute, or half a short lifetime), then asked for again; a failed
 * request is not kept, so the next caller asks again; concurrent callers of a failing request
 * share its one failure.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { Secret } from '../../src/config/secret.js'
import { ClientCredentialsError, ClientCredentialsTokens, refreshAtOf } from '../../src/downstream/client-credentials.js'

describe('refreshAtOf', () => {
  test('a token is used until a minute before expiry, half a lifetime under two minutes, 60 s without expires_in', () => {
    assert.equal(refreshAtOf(0, 3600), 3_540_000)
    assert.equal(refreshAtOf(0, 120), 60_000)
    assert.equal(refreshAtOf(0, 30), 15_000)
    assert.equal(refreshAtOf(0, undefined), 60_000)
    assert.equal(refreshAtOf(0, 0), 60_000)
  })
})

describe('the token cache', () => {
  let server: Server
  let endpoint: string
  let requests = 0
  let answer: { status: number, body: Record<string, unknown> } = { status: 200, body: {} }

  before(async () => {
    server = createServer((request, response) => {
      requests++
      request.resume()
      request.on('end', () => {
        const body = answer.status === 200 ? { access_token: `token-${requests}`, token_type: 'Bearer', ...answer.body } : answer.body
        response.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`
  })
  after(async () => { await new Promise<void>((resolve) => server.close(() => resolve())) })

  function tokens (clock: { now: number }): ClientCredentialsTokens {
    return new ClientCredentialsTokens({
      tokenEndpoint: endpoint,
      clientId: 'cache-client',
      clientSecret: new Secret('cache-secret'),
      method: 'client_secret_basic',
      scopes: ['a'],
      allowInsecureRequests: true,
      timeoutMs: 5_000
    }, () => clock.now)
  }

  test('reused until the refresh point, then asked for again', async () => {
    const clock = { now: 1_000_000 }
    const source = tokens(clock)
    answer = { status: 200, body: { expires_in: 300 } }
    const first = await source.token()
    // openid-client counts expires_in down on the real clock: a loaded machine may read 299 s.
    clock.now += 238_000
    assert.equal(await source.token(), first)
    assert.equal(source.requests, 1)
    clock.now += 2_000
    assert.notEqual(await source.token(), first)
    assert.equal(source.requests, 2)
  })

  test('invalidate forgets the refused token only', async () => {
    const clock = { now: 0 }
    const source = tokens(clock)
    answer = { status: 200, body: { expires_in: 300 } }
    const first = await source.token()
    source.invalidate('another-token')
    assert.equal(await source.token(), first)
    source.invalidate(first)
    assert.notEqual(await source.token(), first)
    assert.equal(source.requests, 2)
  })

  test('a failure is not kept: concurrent callers share it, the next caller asks again', async () => {
    const clock = { now: 0 }
    const source = tokens(clock)
    answer = { status: 400, body: { error: 'invalid_scope' } }
    const before = requests
    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, async () => await source.token()))
    assert.equal(requests - before, 1, 'one request for five callers')
    for (const outcome of outcomes) {
      assert.equal(outcome.status, 'rejected')
      const error = (outcome as PromiseRejectedResult).reason as unknown
      assert.ok(error instanceof ClientCredentialsError)
      assert.equal(error.failure, 'refused')
      assert.equal(error.diagnostics.oauthError, 'invalid_scope')
    }
    answer = { status: 200, body: { expires_in: 300 } }
    assert.match(await source.token(), /^token-/)
    assert.equal(requests - before, 2)
  })
})
