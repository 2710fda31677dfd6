/**
 * The Redis store on a Redis Cluster (State:Redis:Cluster), against Debian's redis-server as three
 * primaries with a replica each, with a password: the store's behaviour suite; keys spread over
 * the shards and a delete of several sessions across slots; invalidations on the sharded channel;
 * a primary killed (SIGKILL) and failed over to its replica, followed by the store without a
 * restart of the app side. Timings under load: test/soak/redis-failover.soak.ts.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { invalidationChannel } from '../../src/state/keys.js'
import type { RedisStateStore, RedisStoreEvent } from '../../src/state/redis-store.js'
import { behavesLikeAStore } from '../helpers/store-behaviour.js'
import { RedisClusterFixture, storesOn } from '../helpers/redis-topologies.js'
import { waitFor } from '../helpers/wait.js'

const PASSWORD = 'PLANTED-cluster-password-62'
const fixture = new RedisClusterFixture({ replicas: true, password: PASSWORD })
const stores = storesOn(fixture)
const events: RedisStoreEvent[] = []

function clusterStore (prefix: string): RedisStateStore {
  return stores.open({ keyPrefix: prefix, timeoutMs: 1000, onEvent: (event) => { events.push(event) } })
}

behavesLikeAStore('Redis Cluster', async () => {
  const store = clusterStore('behaviour:')
  await waitFor(() => store.status().available, 'the store on the cluster', 15_000)
  return store
})

describe('Redis Cluster', () => {
  test('keys spread over the shards; one delete of sessions in many slots removes them all; invalidations use a sharded channel', async () => {
    const store = clusterStore('spread:')
    await waitFor(() => store.status().available, 'the store on the cluster', 15_000)
    const keys = Array.from({ length: 24 }, (_, index) => `session:s${index}`)
    for (const key of keys) await store.set(key, 'v', 60_000)
    const primaries = fixture.nodes.filter((node) => node.cli('role').startsWith('master'))
    const holding = primaries.filter((node) => Number(node.cli('dbsize')) > 0)
    assert.equal(holding.length, 3, 'every primary holds some of the keys: no hash tag pins them to one slot')

    await store.delete(keys)
    for (const key of keys) assert.equal(await store.get(key), undefined, key)

    const channel = invalidationChannel('spread:')
    const owner = fixture.primaryOf(channel)
    assert.match(owner.cli('pubsub', 'shardchannels'), new RegExp(`^${channel}$`, 'm'), 'the channel is a sharded channel on the primary of its slot')
    assert.equal(primaries.filter((node) => node !== owner).map((node) => node.cli('pubsub', 'channels')).join(''), '', 'no classic channel anywhere')
  })

  test('the primary holding the sharded channel and keys is killed: its replica takes over, and the store follows by itself', { timeout: 45_000 }, async () => {
    const store = clusterStore('failover:')
    const other = clusterStore('failover:')
    const resets: number[] = []
    const seen: string[] = []
    store.subscribe({ onInvalidate: () => {}, onReset: () => { resets.push(Date.now()) } })
    other.subscribe({ onInvalidate: (message) => { seen.push(message) }, onReset: () => {} })
    await waitFor(() => store.status().available && other.status().available, 'both stores ready', 15_000)

    const channel = invalidationChannel('failover:')
    const victim = fixture.primaryOf(channel)
    // A session key on the same shard as the channel, so both move in the failover.
    const key = Array.from({ length: 500 }, (_, index) => `session:f${index}`).find((candidate) => fixture.primaryOf(`failover:${candidate}`) === victim) ?? assert.fail('no key on that shard')
    await store.set(key, 'before-failover', 60_000)
    const replica = fixture.nodes.find((node) => node.cli('role').startsWith('slave') && node.cli('info', 'replication').includes(`master_port:${victim.port}`)) ?? assert.fail('no replica of the victim')
    const offset = (text: string, field: string): string | undefined => new RegExp(`${field}:(\\d+)`).exec(text)?.[1]
    await waitFor(() => offset(victim.cli('info', 'replication'), 'master_repl_offset') === offset(replica.cli('info', 'replication'), 'slave_repl_offset'), 'the replica to catch up', 5000)
    const resetsBefore = resets.length

    await victim.kill()
    await waitFor(() => replica.cli('role').startsWith('master'), 'the replica to be promoted', 20_000)
    await waitFor(() => resets.length > resetsBefore && store.status().available, 'the store to prove its subscription on the promoted replica', 20_000)
    assert.equal(await store.get(key), 'before-failover', 'what was written before the failover is there (no sign-out)')
    await store.set(key, 'after-failover', 60_000)
    assert.equal(replica.cli('get', `failover:${key}`), 'after-failover', 'the write went to the promoted replica')

    await waitFor(() => other.status().available, 'the second instance to follow as well', 20_000)
    await store.publish('sessions:after-failover')
    await waitFor(() => seen.includes('sessions:after-failover'), 'the invalidation to reach the other instance through the promoted replica', 5000)
    assert.ok(!JSON.stringify(events).includes(PASSWORD), 'no password in events')
  })
})
