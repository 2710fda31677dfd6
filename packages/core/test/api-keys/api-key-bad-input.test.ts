/**
 * The request path's bad-input table of issue 42, through the real app over `inject()`: a
 * malformed key (wrong prefix, bad checksum, wrong length, wrong alphabet) is 401 before any key
 * store access (a store that counts its calls); an expired, revoked or deprovisioned key is 401
 * `invalid_token`; a valid key on a route that does not accept keys gets that route's own answer.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { checksumOf } from '../../src/api-keys/api-key-format.js'
import { createApp } from '../../src/create-app.js'
import { provisioningRuntimeOf } from '../../src/plugins/directory.js'
import { buildTestApp, type TestApp } from '../../src/testing/app.js'
import { APP_ROOT } from '../helpers/app.js'
import { countStoreCalls, freshUser } from '../helpers/api-keys.js'

const DAY_MS = 86_400_000

describe('API keys: the bad-input table', () => {
  let t: TestApp
  let offsetMs = 0
  before(async () => {
    t = await buildTestApp({
      contentRoot: APP_ROOT,
      nodeEnv: 'Development',
      now: () => Date.now() + offsetMs,
      settings: { Authentication: { Cookie: { AllowInsecureHttp: true }, Schemes: { Keys: { Type: 'ApiKey', Prefix: 'acme_', Scopes: { 'application.read': 'Read' } } } }, Provisioning: { Enabled: true } } as never,
      buildApp: async (options) => await createApp({
        ...options,
        routes: async (app: FastifyInstance) => {
          app.get('/api/orders', async () => ({ ok: true }))
          app.get('/api/internal', { config: { bearer: false } }, async () => ({ ok: true }))
          app.get('/reports', async () => ({ ok: true }))
        }
      })
    })
  })
  after(async () => { await t?.app.close() })

  const newKey = async (subject: string, lifetimeDays?: number) => {
    const owner = freshUser(subject, { atMs: Date.now() + offsetMs })
    const created = await t.app.apiKeys!.scheme().create(owner, { name: 'script', scopes: ['application.read'], ...(lifetimeDays === undefined ? {} : { lifetimeDays }) })
    return { owner, id: created.apiKey.id, key: created.secret.reveal() }
  }
  const call = async (url: string, key: string) => await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}`, accept: 'application/json' } })
  const assertInvalidToken = (response: { statusCode: number, headers: Record<string, unknown> }, label: string): void => {
    assert.equal(response.statusCode, 401, label)
    assert.equal(response.headers['www-authenticate'], 'Bearer error="invalid_token"', label)
  }

  test('a malformed key is 401 invalid_token before any key store access', async () => {
    const { key } = await newKey('user-1')
    const body = key.slice(5)
    const head = key.slice(0, -6)
    const withChecksum = (text: string): string => `${text}${checksumOf(text)}`
    const malformed: Record<string, string> = {
      'wrong prefix': `acmf_${body}`,
      'prefix of another case': `ACME_${body}`,
      'bad checksum': `${head}${key.endsWith('A') ? key.slice(-6, -1) + 'B' : key.slice(-6, -1) + 'A'}`,
      'one character short': withChecksum(head.slice(0, -1)),
      'one character long': withChecksum(`${head}x`),
      'empty body': 'acme_',
      'wrong alphabet': withChecksum(`${head.slice(0, -1)}.`)
    }
    const counted = countStoreCalls()
    try {
      for (const [label, text] of Object.entries(malformed)) assertInvalidToken(await call('/api/orders', text), label)
      assert.equal(counted.calls(), 0, 'a malformed key reached the key store')
    } finally {
      counted.restore()
    }
  })

  test('an expired, a revoked and a deprovisioned owner\'s key are 401 invalid_token', async () => {
    const revoked = await newKey('user-2')
    assert.equal((await call('/api/orders', revoked.key)).statusCode, 200)
    assert.equal(await t.app.apiKeys!.scheme().revoke(revoked.owner, revoked.id), true)
    assertInvalidToken(await call('/api/orders', revoked.key), 'revoked')

    const deprovisioned = await newKey('user-3')
    assert.equal((await call('/api/orders', deprovisioned.key)).statusCode, 200)
    await provisioningRuntimeOf(t.app)?.deprovisioned.mark(deprovisioned.owner.identity!)
    // The owner check runs on each store look-up: at most one second after the last one.
    offsetMs += 1001
    assertInvalidToken(await call('/api/orders', deprovisioned.key), 'deprovisioned')

    const expiring = await newKey('user-4', 1)
    assert.equal((await call('/api/orders', expiring.key)).statusCode, 200)
    offsetMs += 2 * DAY_MS
    assertInvalidToken(await call('/api/orders', expiring.key), 'expired')
    assert.deepEqual(t.logs.events('api_key.refused').slice(-3).map((line) => line.failure), ['revoked', 'owner_denied', 'expired'])
  })

  test('a valid key on a route that does not accept keys gets that route\'s own answer to no credential', async () => {
    const { key } = await newKey('user-5')
    for (const url of ['/api/internal', '/reports']) {
      const anonymous = await t.app.inject({ method: 'GET', url, headers: { accept: 'application/json' } })
      const withKey = await call(url, key)
      assert.equal(anonymous.statusCode, 401, url)
      assert.equal(withKey.statusCode, 401, url)
      const { requestId: _a, ...anonymousBody } = anonymous.json()
      const { requestId: _b, ...withKeyBody } = withKey.json()
      assert.deepEqual(withKeyBody, anonymousBody, url)
      assert.equal(withKey.headers['www-authenticate'], anonymous.headers['www-authenticate'], url)
    }
  })
})
