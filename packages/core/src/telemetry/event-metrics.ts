/**
 * The instruments of {@link METRICS} on one OpenTelemetry meter, and the recorder that turns a
 * log event into a count (names.ts says which event counts into which metric, with which labels).
 */
import type { Attributes, Meter, ObservableResult } from '@opentelemetry/api'
import { BINDING_FIELDS, EVENT_METRICS, MAX_LABEL_LENGTH, METRICS, type MetricKey } from './names.js'
import type { StoreTally } from './store-tally.js'

/** The metrics the state store's tally produces instead of SDK instruments (store-tally.ts). */
const TALLIED: readonly MetricKey[] = ['stateOperations', 'stateDuration']

type CounterKey = Exclude<{ [K in MetricKey]: typeof METRICS[K]['kind'] extends 'counter' ? K : never }[MetricKey], 'stateOperations'>

/** Most label sets one counter keeps apart; further ones are counted in one overflow point, as the SDK does. */
export const MAX_LABEL_SETS = 2000

/**
 * A counter kept in plain numbers and read by the SDK when metrics are collected (an observable
 * counter, exported as a cumulative monotonic sum like a synchronous one): an `add` is a string
 * key and a map lookup, where the SDK's synchronous counter hashes its attribute set on every call
 * (about 1 µs: on every refused request while metrics are on; docs/performance.md, "Telemetry").
 */
export class TalliedCounter {
  readonly #labels: readonly string[]
  readonly #points = new Map<string, { readonly attributes: Attributes, value: number }>()

  constructor (labels: readonly string[]) {
    this.#labels = labels
  }

  add (value: number, attributes: Attributes = {}): void {
    let key = ''
    for (const label of this.#labels) key += `${String(attributes[label] ?? '')}\u0000`
    let point = this.#points.get(key)
    if (point === undefined) {
      const overflow = this.#points.size >= MAX_LABEL_SETS
      key = overflow ? '\u0001overflow' : key
      point = this.#points.get(key)
      if (point === undefined) this.#points.set(key, point = { attributes: overflow ? { 'otel.metric.overflow': true } : { ...attributes }, value: 0 })
    }
    point.value += value
  }

  /** Reports every label set counted so far (none before the first add: the metric is left out). */
  observe (result: ObservableResult): void {
    for (const point of this.#points.values()) result.observe(point.value, point.attributes)
  }
}

export interface Instruments {
  readonly counters: Readonly<Record<CounterKey, TalliedCounter>>
  readonly tally: StoreTally
  readonly meter: Meter
}

export function createInstruments (meter: Meter, tally: StoreTally): Instruments {
  const counters: Partial<Record<CounterKey, TalliedCounter>> = {}
  for (const [key, definition] of Object.entries(METRICS)) {
    if (definition.kind !== 'counter' || TALLIED.includes(key as MetricKey)) continue
    const counter = new TalliedCounter(definition.labels)
    meter.createObservableCounter(definition.name, { description: definition.description, unit: definition.unit }).addCallback((result) => { counter.observe(result) })
    counters[key as CounterKey] = counter
  }
  return { counters: counters as Record<CounterKey, TalliedCounter>, tally, meter }
}

/** A label value: a string as it is (cut at {@link MAX_LABEL_LENGTH}), a boolean or number as text, anything else empty. */
export function labelValue (value: unknown): string {
  if (typeof value === 'string') return value.length > MAX_LABEL_LENGTH ? value.slice(0, MAX_LABEL_LENGTH) : value
  if (typeof value === 'boolean' || typeof value === 'number') return String(value)
  return ''
}

/** The label-bearing fields of a logger's bindings (`{ provider: 'OpenIdConnect' }`), or undefined when it has none. */
export function bindingContext (bindings: unknown, parent: Readonly<Record<string, unknown>> | undefined): Readonly<Record<string, unknown>> | undefined {
  if (bindings === null || typeof bindings !== 'object') return parent
  let context = parent
  for (const field of BINDING_FIELDS) {
    if (field in bindings) context = { ...context, [field]: (bindings as Record<string, unknown>)[field] }
  }
  return context
}

/**
 * Counts one log line's event, if it is one that counts: the line's own fields win over the
 * logger's bindings (`context`). Lines without an `event`, and events not in EVENT_METRICS,
 * cost one property read and one map lookup.
 */
export function createEventRecorder (instruments: Instruments): (line: unknown, context: Readonly<Record<string, unknown>> | undefined) => void {
  return (line, context) => {
    if (line === null || typeof line !== 'object') return
    const event = (line as { event?: unknown }).event
    if (typeof event !== 'string') return
    const mapping = EVENT_METRICS[event]
    if (mapping === undefined) return
    const attributes: Attributes = { ...mapping.labels }
    for (const [label, field] of Object.entries(mapping.fields ?? {})) {
      const value = (line as Record<string, unknown>)[field] ?? context?.[field]
      attributes[label] = labelValue(value)
    }
    instruments.counters[mapping.metric as CounterKey].add(1, attributes)
  }
}
