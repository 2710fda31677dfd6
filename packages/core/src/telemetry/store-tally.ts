/**
 * The state store's operation counts and latencies, kept in plain numbers and handed to the SDK
 * only when metrics are collected (an OpenTelemetry MetricProducer given to each reader). A
 * synchronous SDK instrument hashes its attribute set on every record, about 2 µs per counter add
 * and per histogram record (docs/performance.md, "Telemetry"); every sign-in, sign-out and
 * session-cache miss makes several store operations. Here a record is an increment of fields of
 * an object found once, when the store is wrapped.
 */
import type { Attributes, HrTime } from '@opentelemetry/api'
import { METRICS, STATE_DURATION_BUCKETS } from './names.js'

/** The SDK enums the collected data is tagged with (passed in: the SDK is loaded by sdk.ts). */
export interface SdkEnums {
  readonly dataPointType: { readonly SUM: number, readonly HISTOGRAM: number }
  readonly cumulative: number
  readonly doubleValueType: number
}

/** One store operation's tally: outcomes counted, and its latency histogram. */
export class OperationTally {
  readonly attributes: Attributes
  readonly outcomes = new Map<string, number>()
  readonly counts: number[] = new Array<number>(STATE_DURATION_BUCKETS.length + 1).fill(0)
  sum = 0
  count = 0
  min = Number.POSITIVE_INFINITY
  max = 0
  ok = 0

  constructor (store: string, operation: string) {
    this.attributes = { store, operation }
  }

  /** One operation of `seconds`; `outcome` undefined for ok. */
  record (seconds: number, outcome?: string): void {
    if (outcome === undefined) this.ok++
    else this.outcomes.set(outcome, (this.outcomes.get(outcome) ?? 0) + 1)
    let bucket = 0
    while (bucket < STATE_DURATION_BUCKETS.length && seconds > (STATE_DURATION_BUCKETS[bucket] as number)) bucket++
    this.counts[bucket] = (this.counts[bucket] as number) + 1
    this.sum += seconds
    this.count++
    if (seconds < this.min) this.min = seconds
    if (seconds > this.max) this.max = seconds
  }
}

function hrTime (milliseconds: number): HrTime {
  const seconds = Math.floor(milliseconds / 1000)
  return [seconds, Math.round((milliseconds - seconds * 1000) * 1e6)]
}

/** Every tally of the app's store(s), collected as cumulative data in the core's scope. */
export class StoreTally {
  readonly #tallies: OperationTally[] = []
  readonly #start = hrTime(Date.now())
  readonly #enums: SdkEnums

  constructor (enums: SdkEnums) {
    this.#enums = enums
  }

  tally (store: string, operation: string): OperationTally {
    const tally = new OperationTally(store, operation)
    this.#tallies.push(tally)
    return tally
  }

  /** The MetricProducer interface (sdk-metrics); the SDK adds its resource. */
  async collect (): Promise<{ resourceMetrics: { resource: never, scopeMetrics: unknown[] }, errors: unknown[] }> {
    const { dataPointType, cumulative, doubleValueType } = this.#enums
    const endTime = hrTime(Date.now())
    const startTime = this.#start
    const used = this.#tallies.filter((tally) => tally.count > 0)
    const operations = used.flatMap((tally) => [
      ...(tally.ok > 0 ? [{ startTime, endTime, attributes: { ...tally.attributes, outcome: 'ok' }, value: tally.ok }] : []),
      ...[...tally.outcomes].map(([outcome, value]) => ({ startTime, endTime, attributes: { ...tally.attributes, outcome }, value }))
    ])
    const durations = used.map((tally) => ({
      startTime,
      endTime,
      attributes: tally.attributes,
      value: { buckets: { boundaries: [...STATE_DURATION_BUCKETS], counts: [...tally.counts] }, sum: tally.sum, count: tally.count, min: tally.min, max: tally.max }
    }))
    const descriptor = (metric: typeof METRICS.stateOperations | typeof METRICS.stateDuration): object =>
      ({ name: metric.name, description: metric.description, unit: metric.unit, valueType: doubleValueType })
    const metrics = used.length === 0
      ? []
      : [
          { descriptor: descriptor(METRICS.stateOperations), aggregationTemporality: cumulative, dataPointType: dataPointType.SUM, isMonotonic: true, dataPoints: operations },
          { descriptor: descriptor(METRICS.stateDuration), aggregationTemporality: cumulative, dataPointType: dataPointType.HISTOGRAM, dataPoints: durations }
        ]
    return { resourceMetrics: { resource: undefined as never, scopeMetrics: metrics.length === 0 ? [] : [{ scope: { name: '@project-template/core' }, metrics }] }, errors: [] }
  }
}
