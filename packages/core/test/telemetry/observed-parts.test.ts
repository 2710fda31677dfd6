/**
 * The two wrappers telemetry puts around the core's own parts: the logger (events count whatever
 * the level, labels from the line or the child's bindings, pino still writes what its level lets
 * through) and the state store (each operation tallied by outcome and latency bucket).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createLogger } from '../../src/logger.js'
import { StateStoreFullError, StateStoreUnavailableError, type StateStore } from '../../src/state/state-store.js'
import { observeLogger } from '../../src/telemetry/observed-logger.js'
import { observeStore } from '../../src/telemetry/observed-store.js'
import { StoreTally } from '../../src/telemetry/store-tally.js'
import { createEmbeddedStore } from '../../src/plugins/state.js'
import { LogCapture, loadTestConfiguration } from '../helpers/app.js'
import type { Instruments } from '../../src/telemetry/event-metrics.js'
import type { Meter } from '@opentelemetry/api'

const ENUMS = { dataPointType: { SUM: 3, HISTOGRAM: 0 }, cumulative: 1, doubleValueType: 1 }

test('the observed logger shows every level call with its child bindings, and pino writes only what its level allows', () => {
  const capture = new LogCapture()
  const seen: Array<[unknown, unknown]> = []
  const logger = observeLogger(createLogger('warn', capture), (line, context) => { seen.push([line, context]) })
  const child = logger.child({ provider: 'Saml2', reqId: 'r1' })
  child.info({ event: 'saml2.metadata.loaded' }, 'IdP metadata loaded')
  child.child({ stateStore: 'Redis' }).warn({ event: 'state.store.unavailable', connection: 'commands' }, 'down')
  logger.level = 'silent'
  logger.error({ event: 'x' }, 'not written')
  assert.deepEqual(seen, [
    [{ event: 'saml2.metadata.loaded' }, { provider: 'Saml2' }],
    [{ event: 'state.store.unavailable', connection: 'commands' }, { provider: 'Saml2', stateStore: 'Redis' }],
    [{ event: 'x' }, undefined]
  ])
  assert.deepEqual(capture.records().map((record) => record.event), ['state.store.unavailable'])
  assert.equal(capture.records()[0]?.provider, 'Saml2')
})

function refusingStore (error: Error): StateStore {
  const refuse = async (): Promise<never> => { throw error }
  return {
    provider: 'Redis',
    status: () => ({ available: false, reason: 'unreachable' }),
    get: refuse,
    set: refuse,
    add: refuse,
    update: refuse,
    replace: refuse,
    delete: refuse,
    addMember: refuse,
    members: refuse,
    removeMember: refuse,
    publish: refuse,
    subscribe: () => {},
    start: () => {},
    close: async () => {}
  }
}

const noMeter = { createObservableGauge: () => ({ addCallback: () => {} }) } as unknown as Meter

test('the observed store tallies each operation by outcome (ok, unavailable, full) and latency bucket, and passes errors through unchanged', async () => {
  const tally = new StoreTally(ENUMS)
  const instruments = { tally, meter: noMeter, counters: {} } as unknown as Instruments
  const embedded = observeStore(createEmbeddedStore({ ...loadTestConfiguration().config.State.Embedded, MaxReplayRecords: 1 }), instruments)
  assert.equal(await embedded.add('replay:a', 'v', 60_000), true)
  await assert.rejects(embedded.add('replay:b', 'v', 60_000), StateStoreFullError)
  assert.equal(await embedded.get('replay:a'), 'v')
  const unavailable = new StateStoreUnavailableError('unreachable')
  const redis = observeStore(refusingStore(unavailable), instruments)
  await assert.rejects(redis.get('session:x'), (error) => error === unavailable)

  const { resourceMetrics } = await tally.collect()
  const [operations, durations] = (resourceMetrics.scopeMetrics[0] as { metrics: Array<{ descriptor: { name: string }, dataPoints: Array<{ attributes: Record<string, string>, value: number | { count: number, counts: number[] } }> }> }).metrics
  assert.equal(operations?.descriptor.name, 'app.state_store.operations')
  assert.deepEqual(operations?.dataPoints.map((point) => [point.attributes, point.value]), [
    [{ store: 'Embedded', operation: 'get', outcome: 'ok' }, 1],
    [{ store: 'Embedded', operation: 'add', outcome: 'ok' }, 1],
    [{ store: 'Embedded', operation: 'add', outcome: 'full' }, 1],
    [{ store: 'Redis', operation: 'get', outcome: 'unavailable' }, 1]
  ])
  assert.equal(durations?.descriptor.name, 'app.state_store.duration')
  assert.deepEqual(durations?.dataPoints.map((point) => [point.attributes, (point.value as { count: number }).count]), [
    [{ store: 'Embedded', operation: 'get' }, 1],
    [{ store: 'Embedded', operation: 'add' }, 2],
    [{ store: 'Redis', operation: 'get' }, 1]
  ])
})
