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
import { StateStoreFullError, StateStoreUnavailableError, type StateStore } from '../../src/state/state-store.js'
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

function behavesLikeAStore (name: string, create: () => Promise<StateStore>): void {
  describe(`${name} store`, () => {
    let store: StateStore
    before(async () => { store = await create() })

    test('set and get, expiry by TTL', async () => {
      await store.set('session:a', 'value-a', 150)
      assert.equal(await store.get('session:a'), 'value-a')
      await sleep(300)
      assert.equal(await store.get('session:a'), undefined)
    })

    test('add stores only when absent', async () => {
      assert.equal(await store.add('replay:x', '1', 5000), true)
      assert.equal(await store.add('replay:x', '2', 5000), false)
      assert.equal(await store.get('replay:x'), '1')
    })

    test('update never brings a deleted key back', async () => {
      await store.set('session:u', 'one', 5000)
      assert.equal(await store.update('session:u', 'two', 5000), true)
      assert.equal(await store.get('session:u'), 'two')
      await store.delete(['session:u'])
      assert.equal(await store.update('session:u', 'three', 5000), false)
      assert.equal(await store.get('session:u'), undefined)
    })

    test('replace swaps an existing value and returns the old one; absent stays absent', async () => {
      await store.set('flow:f', 'state', 5000)
      assert.equal(await store.replace('flow:f', 'used'), 'state')
      assert.equal(await store.replace('flow:f', 'used'), 'used')
      assert.equal(await store.replace('flow:none', 'used'), undefined)
      assert.equal(await store.get('flow:none'), undefined)
    })

    test('sets: add, list, remove', async () => {
      await store.addMember('index:s', 'a', 5000)
      await store.addMember('index:s', 'b', 5000)
      assert.deepEqual((await store.members('index:s')).sort(), ['a', 'b'])
      await store.removeMember('index:s', 'a')
      assert.deepEqual(await store.members('index:s'), ['b'])
      assert.deepEqual(await store.members('index:empty'), [])
    })

    test('a published invalidation reaches the subscribers', async () => {
      const seen: string[] = []
      store.subscribe({ onInvalidate: (message) => { seen.push(message) }, onReset: () => {} })
      await store.publish('sessions:abc')
      await waitFor(() => seen.includes('sessions:abc'), 'the invalidation', 3000)
    })
  })
}

behavesLikeAStore('Embedded', async () => new EmbeddedStateStore({ maxEntries: { session: 100, index: 100, flow: 100, replay: 100, lock: 10 }, maxCharacters: 1_000_000 }))
behavesLikeAStore('Redis', async () => {
  const store = redisStore()
  await waitFor(() => store.status().available, 'Redis ready')
  return store
})

describe('embedded store bounds', () => {
  test('sessions: the least recently written session goes when full', async () => {
    const store = new EmbeddedStateStore({ maxEntries: { session: 2, index: 2, flow: 2, replay: 2, lock: 10 }, maxCharacters: 1_000_000 })
    await store.set('session:1', 'a', 60_000)
    await store.set('session:2', 'b', 60_000)
    await store.set('session:3', 'c', 60_000)
    assert.equal(await store.get('session:1'), undefined)
    assert.equal(await store.get('session:3'), 'c')
  })

  test('flows and replay records: refused when full, never an unexpired record forgotten', async () => {
    const store = new EmbeddedStateStore({ maxEntries: { session: 2, index: 2, flow: 2, replay: 2, lock: 10 }, maxCharacters: 1_000_000 })
    for (const kind of ['flow', 'replay'] as const) {
      await store.add(`${kind}:1`, 'a', 60_000)
      await store.add(`${kind}:2`, 'b', 60_000)
      await assert.rejects(store.add(`${kind}:3`, 'c', 60_000), (error: unknown) => error instanceof StateStoreFullError && error.kind === kind)
      assert.equal(await store.add(`${kind}:1`, 'again', 60_000), false, `${kind}: the first record is still there`)
    }
  })

  test('characters are bounded across kinds', async () => {
    const store = new EmbeddedStateStore({ maxEntries: { session: 100, index: 100, flow: 100, replay: 100, lock: 10 }, maxCharacters: 1000 })
    await store.add('flow:big', 'x'.repeat(900), 60_000)
    await assert.rejects(store.add('replay:r', 'y'.repeat(200), 60_000), StateStoreFullError)
    assert.ok(store.characters <= 1000)
  })
})

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
