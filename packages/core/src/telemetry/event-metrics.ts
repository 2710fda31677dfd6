/**
 * The instruments of {@link METRICS} on one OpenTelemetry meter, and the recorder that turns a
 * log event into a count (names.ts says which event counts into which metric, with which labels).
 */
import type { Attributes, Counter, Meter } from '@opentelemetry/api'
import { BINDING_FIELDS, EVENT_METRICS, MAX_LABEL_LENGTH, METRICS, type MetricKey } from './names.js'
import type { StoreTally } from './store-tally.js'

/** The metrics the state store's tally produces instead of SDK instruments (store-tally.ts). */
const TALLIED: readonly MetricKey[] = ['stateOperations', 'stateDuration']

type CounterKey = Exclude<{ [K in MetricKey]: typeof METRICS[K]['kind'] extends 'counter' ? K : never }[MetricKey], 'stateOperations'>

export interface Instruments {
  readonly counters: Readonly<Record<CounterKey, Counter>>
  readonly tally: StoreTally
  readonly meter: Meter
}

export function createInstruments (meter: Meter, tally: StoreTally): Instruments {
  const counters: Partial<Record<CounterKey, Counter>> = {}
  for (const [key, definition] of Object.entries(METRICS)) {
    if (definition.kind !== 'counter' || TALLIED.includes(key as MetricKey)) continue
    counters[key as CounterKey] = meter.createCounter(definition.name, { description: definition.description, unit: definition.unit })
  }
  return { counters: counters as Record<CounterKey, Counter>, tally, meter }
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
