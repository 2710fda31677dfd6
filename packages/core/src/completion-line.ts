/**
 * The request completion line, written without pino's generic object walk. pino serializes a log
 * object key by key (own-property check, serializer and redaction lookups, string escaping per
 * key and value) on every line; the completion line has the same five fields on every request,
 * so its JSON is one concatenation of precomputed parts and the request's values. The line is
 * exactly the one `log.info(fields, 'request completed')` writes: the logger's own level label,
 * time function, bindings (the request id), message key and line end are used, and
 * {@link completionLineWriter} checks at startup, by rendering a probe line both ways, that the
 * two agree for this logger (serializers, redaction, formatters, message key); where they do not,
 * or where a logger could write differently per request (a mixin, hooks, a stream that wants
 * metadata, a child with its own serializers, formatters, redaction or prefix), it returns
 * nothing and the caller logs through pino as before. docs/performance.md has the measurements.
 */
import { pino, type Logger } from 'pino'

/** The fields of one completion line. */
export interface CompletionFields {
  readonly method: string
  readonly path: string
  readonly statusCode: number
  readonly durationMs: number
}

export const COMPLETION_EVENT = 'request.completed'
export const COMPLETION_MESSAGE = 'request completed'

/** Writes `fields` as `log`'s completion line; false when this logger must go through pino. */
export type CompletionLineWriter = (log: unknown, fields: CompletionFields) => boolean

const INFO = 30
const symbols = pino.symbols as unknown as Record<string, symbol | undefined>
const [LS_CACHE, TIME, CHINDINGS, END, STREAM, AS_JSON, SERIALIZERS, STRINGIFIERS, FORMATTERS, MIXIN, HOOKS, MESSAGE_KEY, NESTED_KEY, MSG_PREFIX, NEEDS_METADATA] =
  ['lsCacheSym', 'timeSym', 'chindingsSym', 'endSym', 'streamSym', 'asJsonSym', 'serializersSym', 'stringifiersSym', 'formattersSym',
    'mixinSym', 'hooksSym', 'messageKeySym', 'nestedKeySym', 'msgPrefixSym', 'needsMetadataGsym'].map((name) => symbols[name])

type Internals = Record<symbol, unknown> & Logger

/** A number as pino writes it: non-finite numbers are null. */
function jsonNumber (value: number): string {
  return Number.isFinite(value) ? String(value) : 'null'
}

/** The completion fields as pino would append them after the bindings (`,"event":...` up to the message). */
function fieldsJson (fields: CompletionFields, head: string): string {
  return head + JSON.stringify(fields.method) + ',"path":' + JSON.stringify(fields.path) +
    ',"statusCode":' + jsonNumber(fields.statusCode) + ',"durationMs":' + jsonNumber(fields.durationMs)
}

/**
 * A writer of completion lines for `reference` (the app's logger) and its per-request children,
 * or undefined when this logger's lines cannot be built here exactly as pino builds them.
 */
export function completionLineWriter (reference: Logger): CompletionLineWriter | undefined {
  const root = reference as Internals
  if ([LS_CACHE, TIME, CHINDINGS, END, STREAM, AS_JSON, SERIALIZERS, STRINGIFIERS, FORMATTERS, MIXIN, HOOKS, MESSAGE_KEY, NESTED_KEY, MSG_PREFIX, NEEDS_METADATA]
    .some((symbol) => symbol === undefined)) return undefined
  const at = (logger: Internals, symbol: symbol | undefined): unknown => logger[symbol as symbol]
  const hooks = at(root, HOOKS) as { logMethod?: unknown, streamWrite?: unknown } | undefined
  const stream = at(root, STREAM) as { write?: unknown, [key: symbol]: unknown } | undefined
  if (typeof at(root, AS_JSON) !== 'function' || typeof at(root, TIME) !== 'function' || typeof stream?.write !== 'function') return undefined
  if (at(root, MIXIN) !== undefined || hooks?.logMethod !== undefined || hooks?.streamWrite !== undefined) return undefined
  if (stream[NEEDS_METADATA as symbol] === true || at(root, NESTED_KEY) != null) return undefined

  const serializers = at(root, SERIALIZERS)
  const stringifiers = at(root, STRINGIFIERS)
  const formatLog = (at(root, FORMATTERS) as { log?: unknown } | undefined)?.log
  const prefix = at(root, MSG_PREFIX)
  const messageKey = at(root, MESSAGE_KEY)
  if (typeof messageKey !== 'string') return undefined
  const head = `,"event":${JSON.stringify(COMPLETION_EVENT)},"method":`
  const tail = `,${JSON.stringify(messageKey)}:${JSON.stringify(COMPLETION_MESSAGE)}`

  // The probe: pino's own serialization of a completion line against this one, with a fixed time.
  const probe: CompletionFields = { method: 'GET', path: '/probe/"quoted"\\and\u00e9', statusCode: 200, durationMs: 1.25 }
  const asJson = at(root, AS_JSON) as (obj: object, msg: string, level: number, time: string) => string
  const expected = asJson.call(root, { event: COMPLETION_EVENT, ...probe }, COMPLETION_MESSAGE, INFO, ',"time":0')
  const built = (at(root, LS_CACHE) as Record<number, string>)[INFO] + ',"time":0' + String(at(root, CHINDINGS)) + fieldsJson(probe, head) + tail + String(at(root, END))
  if (expected !== built) return undefined

  return function writeCompletionLine (log: unknown, fields: CompletionFields): boolean {
    const logger = log as Internals
    // A child made with its own serializers, redaction, formatters or prefix writes through pino.
    if (logger[SERIALIZERS as symbol] !== serializers || logger[STRINGIFIERS as symbol] !== stringifiers ||
      (logger[FORMATTERS as symbol] as { log?: unknown }).log !== formatLog || logger[MSG_PREFIX as symbol] !== prefix) return false
    if (!logger.isLevelEnabled('info')) return true
    const time = (logger[TIME as symbol] as () => string)()
    const line = (logger[LS_CACHE as symbol] as Record<number, string>)[INFO] + time + (logger[CHINDINGS as symbol] as string) +
      fieldsJson(fields, head) + tail + (logger[END as symbol] as string)
    ;(logger[STREAM as symbol] as { write: (line: string) => void }).write(line)
    return true
  }
}
