/**
 * The event counters kept in plain numbers (telemetry/event-metrics.ts TalliedCounter): each label
 * set counted apart and reported with its labels, nothing reported before the first add, and label
 * sets beyond MAX_LABEL_SETS folded into one overflow point instead of growing without bound.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Attributes, ObservableResult } from '@opentelemetry/api'
import { MAX_LABEL_SETS, TalliedCounter } from '../../src/telemetry/event-metrics.js'

function observed (counter: TalliedCounter): Array<[number, Attributes | undefined]> {
  const points: Array<[number, Attributes | undefined]> = []
  counter.observe({ observe: (value: number, attributes?: Attributes) => { points.push([value, attributes]) } } as ObservableResult)
  return points
}

test('each label set is counted apart, in the order first seen, and reported with its labels', () => {
  const counter = new TalliedCounter(['policy', 'outcome'])
  assert.deepEqual(observed(counter), [])
  counter.add(1, { policy: 'application.AuthenticatedUser', outcome: 'challenge' })
  counter.add(1, { outcome: 'challenge', policy: 'application.AuthenticatedUser' })
  counter.add(2, { policy: 'application.AuthenticatedUser', outcome: 'forbid' })
  // Values that would run together in a key without a separator stay apart.
  counter.add(1, { policy: 'ab', outcome: 'c' })
  counter.add(1, { policy: 'a', outcome: 'bc' })
  assert.deepEqual(observed(counter), [
    [2, { policy: 'application.AuthenticatedUser', outcome: 'challenge' }],
    [2, { policy: 'application.AuthenticatedUser', outcome: 'forbid' }],
    [1, { policy: 'ab', outcome: 'c' }],
    [1, { policy: 'a', outcome: 'bc' }]
  ])
})

test('label sets beyond the limit are counted in one overflow point', () => {
  const counter = new TalliedCounter(['provider'])
  for (let index = 0; index < MAX_LABEL_SETS + 5; index++) counter.add(1, { provider: `p${index}` })
  counter.add(1, { provider: 'p0' })
  const points = observed(counter)
  assert.equal(points.length, MAX_LABEL_SETS + 1)
  assert.deepEqual(points[0], [2, { provider: 'p0' }])
  assert.deepEqual(points.at(-1), [5, { 'otel.metric.overflow': true }])
})
