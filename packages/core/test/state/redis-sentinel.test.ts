/**
 * The Redis store behind Sentinel (State:Redis:Sentinel), against Debian's redis-server as a
 * primary and a replica, watched by three redis-sentinels, all with passwords: the store's
 * behaviour suite; a forced SENTINEL FAILOVER followed to the new primary without a restart of
 * the app side (what was written before is still there, invalidations flow again, caches were
 * told to reset); a lost sentinel while the primary answers costs nothing; errors and events
 * never carry a password. Timings under load: test/soak/redis-failover.soak.ts.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { Secret } from '../../src/config/secret.js'
import type { RedisStateStore, RedisStoreEvent } from '../../src/state/redis-store.js'
import { StateStoreUnavailableError } from '../../src/state/state-store.js'
import { behavesLikeAStore } from '../helpers/store-behaviour.js'
import { RedisSentinelFixture, storesOn } from '../helpers/redis-topologies.js'
import { waitFor } from '../helpers/wait.js'

const PASSWORD = 'PLANTED-sentinel-data-password-41'
const SENTINEL_PASSWORD = 'PLANTED-sentinel-own-password-77'
const fixture = new RedisSentinelFixture({ password: PASSWORD, sentinelPassword: SENTINEL_PASSWORD })
const stores = storesOn(fixture)
const events: RedisStoreEvent[] = []

function sentinelStore (prefix: string, timeoutMs = 1000): RedisStateStore {
  return stores.open({ keyPrefix: prefix, timeoutMs, onEvent: (event) => { events.push(event) } })
}

behavesLikeAStore('Redis behind Sentinel', async () => {
  const store = sentinelStore('behaviour:')
  await waitFor(() => store.status().available, 'the store through Sentinel', 15_000)
  return store
})

describe('Sentinel failover', () => {
  test('a forced SENTINEL FAILOVER: the store follows the new primary by itself, keeps what was written, resets caches, and invalidations flow again', { timeout: 45_000 }, async () => {
    const store = sentinelStore('failover:')
    const other = sentinelStore('failover:')
    const resets: number[] = []
    const seen: string[] = []
    store.subscribe({ onInvalidate: () => {}, onReset: () => { resets.push(Date.now()) } })
    other.subscribe({ onInvalidate: (message) => { seen.push(message) }, onReset: () => {} })
    await waitFor(() => store.status().available && other.status().available, 'both stores ready', 15_000)
    await store.set('session:kept', 'before-failover', 60_000)
    await store.addMember('index:user:u', 'kept', 60_000)
    // Replication is asynchronous: wait until the replica has the writes before promoting it.
    const oldPrimary = fixture.primary()
    await waitFor(() => oldPrimary.cli('info', 'replication').match(/master_repl_offset:(\d+)/)?.[1] === fixture.data.find((node) => node !== oldPrimary)?.cli('info', 'replication').match(/slave_repl_offset:(\d+)/)?.[1], 'the replica to catch up', 5000)
    const resetsBefore = resets.length

    assert.equal(fixture.forceFailover(), 'OK')
    await waitFor(() => fixture.primaryPort() !== oldPrimary.port, 'the sentinels to name a new primary', 15_000)
    // Until the sentinels announce the switch, the old primary may still accept a write (Redis's
    // asynchronous replication: docs/scale-out.md); the store follows on the announcement, and
    // distrusts caches until its subscription is proven on the new primary.
    await waitFor(() => resets.length > resetsBefore && store.status().available, 'the subscription proven on the new primary', 20_000)
    await store.set('session:after', 'written', 60_000)
    assert.equal(await store.get('session:kept'), 'before-failover', 'what was written before the failover is there (no sign-out)')
    assert.deepEqual(await store.members('index:user:u'), ['kept'])
    assert.equal(fixture.primary().cli('get', 'failover:session:after'), 'written', 'the write went to the new primary')

    await waitFor(() => other.status().available, 'the second instance to follow as well', 20_000)
    await store.publish('sessions:after-failover')
    await waitFor(() => seen.includes('sessions:after-failover'), 'the invalidation to reach the other instance over the new primary', 5000)
  })

  test('a sentinel lost while the primary answers: the store stays available throughout and reports no outage', { timeout: 20_000 }, async () => {
    const seen: RedisStoreEvent[] = []
    // Every sentinel (fixture.storeTopology()), the one lost below (sentinels[0]) first, so the client is connected to it.
    const store = stores.open({ keyPrefix: 'sentinel-lost:', timeoutMs: 1000, onEvent: (event) => { seen.push(event) } })
    await waitFor(() => store.status().available, 'the store through Sentinel', 15_000)
    let samples = 0
    let unavailable = 0
    const sampler = setInterval(() => { samples++; if (!store.status().available) unavailable++ }, 2)
    try {
      const before = seen.length
      await fixture.sentinels[0]?.kill()
      await store.set('session:still', 'here', 60_000)
      await new Promise((resolve) => setTimeout(resolve, 1500))
      assert.equal(await store.get('session:still'), 'here')
      assert.ok(samples > 100, `sampled ${samples} times`)
      assert.equal(unavailable, 0, 'the store never distrusted its caches')
      assert.deepEqual(seen.slice(before), [], 'no outage reported')
    } finally {
      clearInterval(sampler)
    }
  })

  test('every sentinel unreachable: typed unavailable errors that name no password; events carry error names only', { timeout: 20_000 }, async () => {
    const store = stores.open({
      topology: {
        kind: 'Sentinel',
        masterName: fixture.masterName,
        nodes: [{ host: '127.0.0.1', port: 1 }],
        username: 'app',
        password: new Secret(PASSWORD),
        sentinelUsername: '',
        sentinelPassword: new Secret(SENTINEL_PASSWORD),
        tls: false
      },
      keyPrefix: 'down:',
      timeoutMs: 200,
      onEvent: (event) => { events.push(event) }
    })
    await waitFor(() => events.some((event) => event.kind === 'error'), 'a connection error event', 10_000)
    assert.equal(store.status().available, false)
    const error = await store.get('session:x').then(() => undefined, (failure: unknown) => failure)
    assert.ok(error instanceof StateStoreUnavailableError, String(error))
    const text = `${String(error.message)} ${JSON.stringify(events)}`
    assert.ok(!text.includes(PASSWORD) && !text.includes(SENTINEL_PASSWORD), 'no password in errors or events')
  })
})
