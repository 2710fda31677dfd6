/**
 * `http.server.request.duration` (OpenTelemetry semantic conventions) kept in plain numbers, as
 * the state store's latencies are (store-tally.ts), and handed to the SDK when metrics are
 * collected (a second MetricProducer). A synchronous SDK histogram would sort and hash three
 * attributes on every response (about 2 µs; docs/performance.md, "Telemetry"). Here each route
 * gets a {@link RouteRequests} when it is registered (plugins/telemetry.ts, `onRoute`), and a
 * response costs two small map lookups (method, then status code) and a {@link HistogramTally}
 * record.
 *
 * Labels are bounded: a method from the HTTP method registry (anything else is `_OTHER`, as the
 * conventions say), the route template as registered (`/signin-:scheme`, never the request's
 * path; absent when no route matched) and the status code. At most {@link MAX_REQUEST_SERIES}
 * label sets; further ones count into one point labelled `otel.metric.overflow`, as the SDK does.
 */
import type { Attributes } from '@opentelemetry/api'
import { HTTP_DURATION_BUCKETS, METRICS } from './names.js'
import { HistogramTally, hrTime, type SdkEnums } from './store-tally.js'

/** Most label sets the histogram keeps apart (the event counters' bound, event-metrics.ts). */
export const MAX_REQUEST_SERIES = 2000

/** The methods the conventions name; any other is reported as `_OTHER`. */
const KNOWN_METHODS: ReadonlySet<string> = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE'])

/** One label set's histogram. */
class Series extends HistogramTally {
  readonly attributes: Attributes

  constructor (attributes: Attributes) {
    super(HTTP_DURATION_BUCKETS)
    this.attributes = attributes
  }
}

/** The responses of one route (or of no route), by method and status code. */
export class RouteRequests {
  readonly #route: string | undefined
  readonly #owner: RequestTally
  readonly #byMethod = new Map<string, Map<number, HistogramTally>>()

  constructor (route: string | undefined, owner: RequestTally) {
    this.#route = route
    this.#owner = owner
  }

  /** One response: the request's method, the reply's status code, the time taken in milliseconds. */
  record (method: string, statusCode: number, milliseconds: number): void {
    let byStatus = this.#byMethod.get(method)
    if (byStatus === undefined) this.#byMethod.set(method, byStatus = new Map())
    let series = byStatus.get(statusCode)
    if (series === undefined) byStatus.set(statusCode, series = this.#owner.open(this.#route, method, statusCode))
    series.record(milliseconds / 1000)
  }
}

export class RequestTally {
  readonly #series: Series[] = []
  #overflow: Series | undefined
  readonly #start = hrTime(Date.now())
  readonly #enums: SdkEnums

  constructor (enums: SdkEnums) {
    this.#enums = enums
  }

  /** The tally of one route template; undefined: requests that matched no route. */
  route (template: string | undefined): RouteRequests {
    return new RouteRequests(template, this)
  }

  /** A new label set's histogram, or the shared overflow one once {@link MAX_REQUEST_SERIES} are kept. */
  open (route: string | undefined, method: string, statusCode: number): HistogramTally {
    if (this.#series.length >= MAX_REQUEST_SERIES) {
      if (this.#overflow === undefined) this.#series.push(this.#overflow = new Series({ 'otel.metric.overflow': true }))
      return this.#overflow
    }
    const attributes: Attributes = {
      'http.request.method': KNOWN_METHODS.has(method) ? method : '_OTHER',
      ...(route === undefined ? {} : { 'http.route': route }),
      'http.response.status_code': statusCode
    }
    const series = new Series(attributes)
    this.#series.push(series)
    return series
  }

  /** The MetricProducer interface (sdk-metrics); the SDK adds its resource. */
  async collect (): Promise<{ resourceMetrics: { resource: never, scopeMetrics: unknown[] }, errors: unknown[] }> {
    const used = this.#series.filter((series) => series.count > 0)
    if (used.length === 0) return { resourceMetrics: { resource: undefined as never, scopeMetrics: [] }, errors: [] }
    const { dataPointType, cumulative, doubleValueType } = this.#enums
    const endTime = hrTime(Date.now())
    const metric = METRICS.httpServerDuration
    const dataPoints = used.map((series) => ({ startTime: this.#start, endTime, attributes: series.attributes, value: series.value() }))
    const metrics = [{
      descriptor: { name: metric.name, description: metric.description, unit: metric.unit, valueType: doubleValueType },
      aggregationTemporality: cumulative,
      dataPointType: dataPointType.HISTOGRAM,
      dataPoints
    }]
    return { resourceMetrics: { resource: undefined as never, scopeMetrics: [{ scope: { name: '@project-template/core' }, metrics }] }, errors: [] }
  }
}
