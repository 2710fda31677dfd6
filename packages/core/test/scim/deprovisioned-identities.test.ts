/**
 * The deprovisioned marks as the bearer deny check reads them (scim/deprovisioned-identities.ts):
 * one state-store read per person, then answered from memory (synchronously) for at most a
 * second; a mark or clear on another instance sharing the store drops the answer at once; a read
 * an invalidation overtook is not kept; a lost subscription empties the memory.
 */
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { createEmbeddedStore } from '../../src/plugins/state.js'
import { DEPROVISIONED_ANSWER_TTL_MS, DeprovisionedIdentities } from '../../src/scim/deprovisioned-identities.js'
import type { StateStore } from '../../src/state/state-store.js'
import { loadTestConfiguration } from '../helpers/app.js'

const grace = { issuer: 'https://idp.example.test', subject: 'grace' }

/** The store with its reads counted, and a way to hold one read until released. */
function counted (store: StateStore): { store: StateStore, reads: () => number, hold: () => () => void } {
  let reads = 0
  let gate: Promise<void> | undefined
  const wrapped: StateStore = {
    provider: store.provider,
    status: () => store.status(),
    set: async (key, value, ttlMs) => { await store.set(key, value, ttlMs) },
    add: async (key, value, ttlMs) => await store.add(key, value, ttlMs),
    update: async (key, value, ttlMs) => await store.update(key, value, ttlMs),
    replace: async (key, value) => await store.replace(key, value),
    delete: async (keys) => { await store.delete(keys) },
    addMember: async (key, member, ttlMs) => { await store.addMember(key, member, ttlMs) },
    members: async (key) => await store.members(key),
    removeMember: async (key, member) => { await store.removeMember(key, member) },
    publish: async (message) => { await store.publish(message) },
    subscribe: (listeners) => { store.subscribe(listeners) },
    start: () => { store.start() },
    close: async () => { await store.close() },
    get: async (key: string) => {
      reads++
      const value = await store.get(key)
      if (gate !== undefined) await gate
      return value
    }
  }
  return {
    store: wrapped,
    reads: () => reads,
    hold: () => {
      let release!: () => void
      gate = new Promise((resolve) => { release = resolve })
      return () => { gate = undefined; release() }
    }
  }
}

/** This instance's checks (reads counted, a clock the test moves) and another instance's, on one shared store. */
function twoInstances (context: TestContext): { here: ReturnType<typeof counted>, checks: DeprovisionedIdentities, elsewhere: DeprovisionedIdentities, advance: (ms: number) => void } {
  const shared = createEmbeddedStore(loadTestConfiguration().config.State.Embedded)
  context.after(async () => { await shared.close() })
  let now = 1_000_000
  const here = counted(shared)
  return { here, checks: new DeprovisionedIdentities(here.store, undefined, () => now), elsewhere: new DeprovisionedIdentities(shared), advance: (ms) => { now += ms } }
}

test('one read per person, then synchronous answers until a mark on another instance or a second passes', async (context) => {
  const { here, checks, elsewhere, advance } = twoInstances(context)

  assert.equal(await checks.denies(grace), false)
  assert.equal(here.reads(), 1)
  assert.equal(checks.denies(grace), false, 'answered synchronously from memory')
  assert.equal(checks.denies({ ...grace, kind: 'client' }), false, 'a client is never a deprovisioned person')
  assert.equal(here.reads(), 1, 'no store round trip')

  await elsewhere.mark(grace)
  assert.equal(await checks.denies(grace), true, 'the mark on another instance is seen on the next request')
  assert.equal(here.reads(), 2)
  assert.equal(checks.denies(grace), true)
  assert.equal(here.reads(), 2)

  advance(DEPROVISIONED_ANSWER_TTL_MS)
  assert.equal(await checks.denies(grace), true)
  assert.equal(here.reads(), 3, 'read again after a second')

  await elsewhere.clear(grace)
  assert.equal(await checks.denies(grace), false, 'reactivated: seen at once')
})

test('a read overtaken by a mark is not kept', async (context) => {
  const shared = createEmbeddedStore(loadTestConfiguration().config.State.Embedded)
  context.after(async () => { await shared.close() })
  const here = counted(shared)
  const checks = new DeprovisionedIdentities(here.store)
  const release = here.hold()
  const pending = checks.denies(grace)
  await new Promise((resolve) => setImmediate(resolve))
  await new DeprovisionedIdentities(shared).mark(grace)
  release()
  assert.equal(await pending, false, 'the read started before the mark')
  assert.equal(await checks.denies(grace), true, 'its stale answer was not kept')
})

test('each identity object remembers its answer until an invalidation or its second; another object of the same person reads the same answer', async (context) => {
  const { here, checks, elsewhere, advance } = twoInstances(context)
  const [cached, fresh] = [{ ...grace }, { ...grace }]

  assert.equal(await checks.denies(cached), false)
  assert.deepEqual([checks.denies(cached), checks.denies(fresh), here.reads()], [false, false, 1], 'one read for the person, whichever object asks')
  await elsewhere.mark(grace)
  assert.equal(await checks.denies(cached), true, 'the remembered "no" is dropped by the invalidation')
  assert.deepEqual([checks.denies(fresh), here.reads()], [true, 2])
  advance(DEPROVISIONED_ANSWER_TTL_MS)
  await elsewhere.clear(grace)
  assert.equal(await checks.denies(fresh), false)
  assert.equal(checks.denies(cached), false, 'the other object reads the new answer')
})
