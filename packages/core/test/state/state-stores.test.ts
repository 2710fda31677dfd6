/**
 * The two state stores behave alike on the operations the app relies on (expiry, add-if-absent,
 * update-only-if-present, atomic replace, sets, invalidations), against a real redis-server for
 * Redis; the embedded store's bounds and its policy when full; Redis outages: unavailable while
 * down (typed error, no host or password in it), available again after a restart without a
 * restart of the app side, and caches told to reset.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { Secret } from '../../src/config/secret.js'
import { EmbeddedStateStore } from '../../src/state/embedded-store.js'
import { RedisStateStore } from '../../src/state/redis-store.js'
import { StateStoreUnavailableError } from '../../src/state/state-store.js'
import { behavesLikeAStore, embeddedStoreBounds } from '../helpers/store-behaviour.js'
import { RedisServer } from '../helpers/redis-server.js'
import { waitFor } from '../helpers/wait.js'

const server = new RedisServer()
const stores: RedisStateStore[] = []

function redisStore (prefix = `t${stores.length}:`): RedisStateStore {
  const store = new RedisStateStore({ connectionString: new Secret(server.connectionString), keyPrefix: prefix, timeoutMs: 500 })
  stores.push(store)
  store.start()
  return store
}

before(async () => { await server.start() })
after(async () => {
  await Promise.all(stores.map(async (store) => { await store.close() }))
  await server.dispose()
})

behavesLikeAStore('Embedded', async () => new EmbeddedStateStore({ maxEntries: { session: 100, index: 100, flow: 100, replay: 100, lock: 10 }, maxCharacters: 1_000_000 }))
behavesLikeAStore('Redis', async () => {
  const store = redisStore()
  await waitFor(() => store.status().available, 'Redis ready')
  return store
})

embeddedStoreBounds('Embedded', async (limits) => new EmbeddedStateStore(limits))

describe('Redis outages', () => {
  test('down: typed unavailable errors without the connection string; back: available again by itself, caches reset', async () => {
    const password = 'PLANTED-REDIS-PASSWORD-93'
    // The server has no password; a URL with one still shows that errors never carry it.
    const store = redisStore('outage:')
    const resets: number[] = []
    store.subscribe({ onInvalidate: () => {}, onReset: () => { resets.push(Date.now()) } })
    await waitFor(() => store.status().available, 'Redis ready')
    const resetsBefore = resets.length
    await store.set('session:o', 'kept', 60_000)

    await server.kill()
    await waitFor(() => !store.status().available, 'the store to notice the outage', 5000)
    const error = await store.get('session:o').then(() => undefined, (failure: unknown) => failure)
    assert.ok(error instanceof StateStoreUnavailableError, String(error))
    assert.ok(!String(error.message).includes(server.socket) && !String(error.message).includes(password))

    await server.start()
    await waitFor(() => store.status().available, 'the store to reconnect by itself', 15_000)
    assert.ok(resets.length > resetsBefore, 'caches were told to reset after the outage')
    assert.equal(await store.get('session:o'), undefined, 'a restarted Redis without persistence lost the session: it reads as missing, never as a stale hit')
  })

  test('a store that cannot reach Redis at start is unavailable, and keeps trying', async () => {
    const store = new RedisStateStore({ connectionString: new Secret('unix:/nonexistent/redis.sock'), keyPrefix: 'none:', timeoutMs: 200 })
    stores.push(store)
    store.start()
    await sleep(300)
    assert.deepEqual(store.status(), { available: false, reason: 'unreachable' })
    await assert.rejects(store.get('session:x'), StateStoreUnavailableError)
  })
})
