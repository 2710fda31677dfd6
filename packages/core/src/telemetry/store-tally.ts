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

/**
 * One histogram's cumulative data over fixed bucket boundaries, in plain numbers: what the store's
 * and the HTTP server's tallies (request-tally.ts) share. A record is a short bucket scan and five
 * field updates; nothing is hashed.
 */
export class HistogramTally {
  readonly boundaries: readonly number[]
  readonly counts: number[]
  sum = 0
  count = 0
  min = Number.POSITIVE_INFINITY
  max = 0

  constructor (boundaries: readonly number[]) {
    this.boundaries = boundaries
    this.counts = new Array<number>(boundaries.length + 1).fill(0)
  }

  record (seconds: number): void {
    const boundaries = this.boundaries
    let bucket = 0
    while (bucket < boundaries.length && seconds > (boundaries[bucket] as number)) bucket++
    this.counts[bucket] = (this.counts[bucket] as number) + 1
    this.sum += seconds
    this.count++
    if (seconds < this.min) this.min = seconds
    if (seconds > this.max) this.max = seconds
  }

  /** The SDK's histogram value (a copy: collection must not see later records half-applied). */
  value (): { buckets: { boundaries: number[], counts: number[] }, sum: number, count: number, min: number, max: number } {
    return { buckets: { boundaries: [...this.boundaries], counts: [...this.counts] }, sum: this.sum, count: this.count, min: this.min, max: this.max }
  }
}

/** One store operation's tally: outcomes counted, and its latency histogram. */
export class OperationTally extends HistogramTally {
  readonly attributes: Attributes
  readonly outcomes = new Map<string, number>()
  ok = 0

  constructor (store: string, operation: string) {
    super(STATE_DURATION_BUCKETS)
    this.attributes = { store, operation }
  }

  /** One operation of `seconds`; `outcome` undefined for ok. */
  override record (seconds: number, outcome?: string): void {
    if (outcome === undefined) this.ok++
    else this.outcomes.set(outcome, (this.outcomes.get(outcome) ?? 0) + 1)
    super.record(seconds)
  }
}

/** Milliseconds since the epoch as the SDK's [seconds, nanoseconds]. */
export function hrTime (milliseconds: number): HrTime {
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
      value: tally.value()
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
