/**
 * The state store as telemetry sees it: a decorator around any {@link StateStore} (embedded or
 * Redis) that counts each operation by outcome and records its latency, plus two gauges read when
 * metrics are collected: whether the store is available, and (embedded only) how many sessions it
 * holds. Values and keys are never looked at beyond the operation's name.
 */
import type { Attributes } from '@opentelemetry/api'
import type { Instruments } from './event-metrics.js'
import { METRICS } from './names.js'
import { StateStoreFullError, StateStoreUnavailableError, type StateStore } from '../state/state-store.js'

/** The operations measured: every method that asks the store something. */
type Operation = 'get' | 'set' | 'add' | 'update' | 'replace' | 'delete' | 'addMember' | 'members' | 'removeMember' | 'increment' | 'publish'

function outcomeOf (error: unknown): string {
  if (error instanceof StateStoreUnavailableError) return 'unavailable'
  if (error instanceof StateStoreFullError) return 'full'
  return 'error'
}

/** A store that can count its live sessions without a scan (the embedded store's `counts()`). */
interface CountingStore { counts: () => { session: number } }

function canCount (store: StateStore): store is StateStore & CountingStore {
  return typeof (store as Partial<CountingStore>).counts === 'function'
}

/** `store` with every operation measured; `status`, `subscribe`, `start` and `close` pass through. */
export function observeStore (store: StateStore, instruments: Instruments): StateStore {
  const { tally, meter } = instruments
  function measure<A extends unknown[], R> (operation: Operation, call: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
    const operationTally = tally.tally(store.provider, operation)
    return async (...args: A): Promise<R> => {
      const started = performance.now()
      try {
        const result = await call(...args)
        operationTally.record((performance.now() - started) / 1000)
        return result
      } catch (error) {
        operationTally.record((performance.now() - started) / 1000, outcomeOf(error))
        throw error
      }
    }
  }

  const storeLabel: Attributes = { store: store.provider }
  meter.createObservableGauge(METRICS.stateAvailable.name, { description: METRICS.stateAvailable.description, unit: METRICS.stateAvailable.unit })
    .addCallback((result) => { result.observe(store.status().available ? 1 : 0, storeLabel) })
  if (canCount(store)) {
    meter.createObservableGauge(METRICS.activeSessions.name, { description: METRICS.activeSessions.description, unit: METRICS.activeSessions.unit })
      .addCallback((result) => { result.observe(store.counts().session, storeLabel) })
  }

  const observed: StateStore = {
    provider: store.provider,
    status: () => store.status(),
    get: measure('get', async (key: string) => await store.get(key)),
    set: measure('set', async (key: string, value: string, ttlMs: number) => { await store.set(key, value, ttlMs) }),
    add: measure('add', async (key: string, value: string, ttlMs: number) => await store.add(key, value, ttlMs)),
    update: measure('update', async (key: string, value: string, ttlMs: number) => await store.update(key, value, ttlMs)),
    replace: measure('replace', async (key: string, value: string) => await store.replace(key, value)),
    delete: measure('delete', async (keys: readonly string[]) => { await store.delete(keys) }),
    addMember: measure('addMember', async (key: string, member: string, ttlMs: number) => { await store.addMember(key, member, ttlMs) }),
    members: measure('members', async (key: string) => await store.members(key)),
    removeMember: measure('removeMember', async (key: string, member: string) => { await store.removeMember(key, member) }),
    publish: measure('publish', async (message: string) => { await store.publish(message) }),
    // The rate-limit counter (optional on a store), kept when the store has it.
    ...(store.increment === undefined ? {} : { increment: measure('increment', store.increment.bind(store)) }),
    subscribe: (listeners) => { store.subscribe(listeners) },
    start: () => { store.start() },
    close: async () => { await store.close() }
  }
  return observed
}
