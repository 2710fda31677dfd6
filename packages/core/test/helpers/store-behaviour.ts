/**
 * What every state store must do, and what the embedded store does at its bounds, as test suites
 * run against each store and variant (test/state/state-stores.test.ts: embedded in memory and
 * Redis; test/state/embedded-persistence.test.ts: embedded written through to SQLite).
 */
import { before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import type { EmbeddedStateStore, EmbeddedStoreLimits } from '../../src/state/embedded-store.js'
import { StateStoreFullError, type StateStore } from '../../src/state/state-store.js'
import { waitFor } from './wait.js'

export function behavesLikeAStore (name: string, create: () => Promise<StateStore>): void {
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

export function embeddedStoreBounds (name: string, create: (limits: EmbeddedStoreLimits) => Promise<EmbeddedStateStore>): void {
  describe(`${name} store bounds`, () => {
    test('sessions: the least recently written session goes when full', async () => {
      const store = await create({ maxEntries: { session: 2, index: 2, flow: 2, replay: 2, lock: 10 }, maxCharacters: 1_000_000 })
      await store.set('session:1', 'a', 60_000)
      await store.set('session:2', 'b', 60_000)
      await store.set('session:3', 'c', 60_000)
      assert.equal(await store.get('session:1'), undefined)
      assert.equal(await store.get('session:3'), 'c')
    })

    test('flows and replay records: refused when full, never an unexpired record forgotten', async () => {
      const store = await create({ maxEntries: { session: 2, index: 2, flow: 2, replay: 2, lock: 10 }, maxCharacters: 1_000_000 })
      for (const kind of ['flow', 'replay'] as const) {
        await store.add(`${kind}:1`, 'a', 60_000)
        await store.add(`${kind}:2`, 'b', 60_000)
        await assert.rejects(store.add(`${kind}:3`, 'c', 60_000), (error: unknown) => error instanceof StateStoreFullError && error.kind === kind)
        assert.equal(await store.add(`${kind}:1`, 'again', 60_000), false, `${kind}: the first record is still there`)
      }
    })

    test('characters are bounded across kinds', async () => {
      const store = await create({ maxEntries: { session: 100, index: 100, flow: 100, replay: 100, lock: 10 }, maxCharacters: 1000 })
      await store.add('flow:big', 'x'.repeat(900), 60_000)
      await assert.rejects(store.add('replay:r', 'y'.repeat(200), 60_000), StateStoreFullError)
      assert.ok(store.characters <= 1000)
    })
  })
}
