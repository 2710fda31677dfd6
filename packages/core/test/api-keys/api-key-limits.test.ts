/**
 * The rate limits of API keys (issue 42, item 7), through the real app over `inject()`: a key
 * over `RateLimits:ApiKeyRequestsPerWindow` is answered 429 with `Retry-After` from any address
 * while the owner's other key is served; an address over `RateLimits:ApiKeyFailuresPerWindow`
 * (well-formed keys the store refuses) is answered 429 before any store access, while the owner
 * of the very key id it forged calls from elsewhere unhindered; the failure count is the state
 * store's, shared by two instances.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { checksumOf, randomBase62 } from '../../src/api-keys/api-key-format.js'
import { createApp } from '../../src/create-app.js'
import { buildTestApp, type TestApp } from '../../src/testing/app.js'
import { APP_ROOT, testStateStore } from '../helpers/app.js'
import { countStoreCalls, freshUser } from '../helpers/api-keys.js'

const SETTINGS = {
  Authentication: { Cookie: { AllowInsecureHttp: true }, Schemes: { Keys: { Type: 'ApiKey', Prefix: 'acme_', Scopes: { 'application.read': 'Read' } } } },
  RateLimits: { ApiKeyRequestsPerWindow: 3, ApiKeyFailuresPerWindow: 2 }
} as never

async function keyApp (stateStore?: ReturnType<typeof testStateStore>): Promise<TestApp> {
  return await buildTestApp({
    contentRoot: APP_ROOT,
    nodeEnv: 'Development',
    settings: SETTINGS,
    ...(stateStore === undefined ? {} : { stateStore }),
    buildApp: async (options) => await createApp({ ...options, routes: async (app: FastifyInstance) => { app.get('/api/orders', async () => ({ ok: true })) } })
  })
}

/** A well-formed key (valid checksum) with the id of `key` and a made-up secret: what someone who saw the key id in a log could send. */
function forgedWithIdOf (key: string): string {
  const head = `${key.slice(0, 5 + 16)}${randomBase62(43)}`
  return `${head}${checksumOf(head)}`
}

const call = async (t: TestApp, key: string, remoteAddress: string) =>
  await t.app.inject({ method: 'GET', url: '/api/orders', remoteAddress, headers: { authorization: `Bearer ${key}` } })

describe('API key rate limits', () => {
  let t: TestApp
  before(async () => { t = await keyApp() })
  after(async () => { await t?.app.close() })

  test('a key over its per-key limit is answered 429 with Retry-After from every address; the owner\'s other key is served', async () => {
    const owner = freshUser('user-1')
    const busy = (await t.app.apiKeys!.scheme().create(owner, { name: 'busy', scopes: ['application.read'] })).secret.reveal()
    const other = (await t.app.apiKeys!.scheme().create(owner, { name: 'other', scopes: ['application.read'] })).secret.reveal()
    for (let index = 0; index < 3; index++) assert.equal((await call(t, busy, `192.0.2.${index + 1}`)).statusCode, 200)
    for (const address of ['192.0.2.1', '198.51.100.7']) {
      const held = await call(t, busy, address)
      assert.equal(held.statusCode, 429, address)
      assert.match(String(held.headers['retry-after']), /^[1-9][0-9]*$/)
    }
    assert.equal(t.logs.events('bearer.refused').at(-1)?.limit, 'api_key_requests')
    assert.equal((await call(t, other, '192.0.2.1')).statusCode, 200)
  })

  test('an address over its failed look-ups is held before any store access; the owner of the forged key id is served from elsewhere', async () => {
    const victim = (await t.app.apiKeys!.scheme().create(freshUser('user-2'), { name: 'victim', scopes: ['application.read'] })).secret.reveal()
    for (let index = 0; index < 2; index++) {
      const refused = await call(t, forgedWithIdOf(victim), '203.0.113.9')
      assert.equal(refused.statusCode, 401)
      assert.match(String(refused.headers['www-authenticate']), /invalid_token/)
    }
    // The request that went over the limit was looked up and refused; from now on nothing is looked up.
    assert.equal((await call(t, forgedWithIdOf(victim), '203.0.113.9')).statusCode, 401)
    const counted = countStoreCalls()
    try {
      for (const key of [forgedWithIdOf(victim), victim]) {
        const held = await call(t, key, '203.0.113.9')
        assert.equal(held.statusCode, 429)
        assert.match(String(held.headers['retry-after']), /^[1-9][0-9]*$/)
      }
      assert.equal(counted.calls(), 0, 'a held address reached the key store')
    } finally {
      counted.restore()
    }
    assert.equal(t.logs.events('bearer.refused').at(-1)?.limit, 'api_key_failures')
    assert.equal((await call(t, victim, '203.0.113.10')).statusCode, 200, 'the key\'s owner was locked out')
  })
})

describe('API key failed look-ups on two instances sharing a state store', () => {
  const shared = testStateStore()
  const instances: TestApp[] = []
  before(async () => { for (let index = 0; index < 2; index++) instances.push(await keyApp(shared)) })
  after(async () => { for (const instance of instances) await instance.app.close() })

  test('failures counted on one instance hold the address on the other', async () => {
    const [a, b] = instances as [TestApp, TestApp]
    const key = (await a.app.apiKeys!.scheme().create(freshUser('user-3'), { name: 'script', scopes: ['application.read'] })).secret.reveal()
    for (let index = 0; index < 2; index++) assert.equal((await call(a, forgedWithIdOf(key), '203.0.113.20')).statusCode, 401)
    // B's first failure is the third in the shared window: refused and over the limit; its next is held.
    assert.equal((await call(b, forgedWithIdOf(key), '203.0.113.20')).statusCode, 401)
    assert.equal((await call(b, forgedWithIdOf(key), '203.0.113.20')).statusCode, 429)
  })
})
