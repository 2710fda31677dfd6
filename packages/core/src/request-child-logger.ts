/**
 * The per-request child logger (Fastify's `childLoggerFactory`). Fastify's default factory passes
 * pino an options object on every request, an empty one when the route sets no `logLevel` or
 * `logSerializers`, and pino then takes its slower child path (a new formatters object and more
 * properties per request; docs/performance.md). This one passes no options when there are none,
 * which gives the same child and the same lines, and passes them through as Fastify does when
 * there are.
 *
 * **Bindings added later in the request** ({@link withRequestBindings}: an API key's `keyId` and
 * `keyPrefix`, issue 42). A pino child is an object whose prototype is its parent, so a child of
 * the request's child makes that short-lived logger a prototype: V8 re-shapes it, and every
 * look-up through the new child (each log line, the completion line) meets a new prototype per
 * request and goes the slow way. Measured on a 2-core machine, that one call took an API-key
 * request from ≈16,000 to ≈10,700 req/s; a sibling made from the same parent still cost ≈4 µs
 * of pino's child set-up per request. So a request's own logger (one this factory made, which no
 * other request shares) takes the extra bindings onto its own bindings text: the text pino
 * itself renders for them, made once per bindings object by a child of the same parent and
 * reused, so the lines are exactly a child's. Any other logger (a route with its own log options,
 * a logger that is not pino) gets a child, as before.
 */
import type { IncomingMessage } from 'node:http'
import type { FastifyBaseLogger } from 'fastify'
import { pino, type Bindings, type ChildLoggerOptions } from 'pino'

/** pino's own symbol for a logger's rendered bindings (`,"reqId":"..."`), exported by pino as `pino.symbols.chindingsSym`. */
const CHINDINGS = (pino.symbols as unknown as Record<string, symbol | undefined>).chindingsSym
/**
 * On the raw request: the logger this factory made for it without route options, the only kind
 * that takes bindings in place. Kept on the request, not on the logger: a property added to each
 * pino child cost about 4 % of a cookie request's CPU (bench/compare-apps.mjs).
 */
const REQUEST_LOGGER = Symbol('request logger')

type Logger = FastifyBaseLogger & { [key: symbol]: unknown }
type RawRequest = IncomingMessage & { [REQUEST_LOGGER]?: FastifyBaseLogger }

export function requestChildLogger (logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions, raw?: IncomingMessage): FastifyBaseLogger {
  for (const key in options) if (Object.hasOwn(options, key)) return logger.child(bindings, options)
  const child = logger.child(bindings)
  if (raw !== undefined) (raw as RawRequest)[REQUEST_LOGGER] = child
  return child
}

/** The rendered text of a bindings object under a parent, made once (a bindings object is reused for as long as its caller is cached). */
const rendered = new WeakMap<Bindings, { readonly parent: FastifyBaseLogger, readonly text: string }>()

function renderedBindings (parent: FastifyBaseLogger, extra: Bindings): string | undefined {
  const known = rendered.get(extra)
  if (known?.parent === parent) return known.text
  const base = (parent as Logger)[CHINDINGS as symbol]
  const probe = (parent.child(extra) as Logger)[CHINDINGS as symbol]
  if (typeof base !== 'string' || typeof probe !== 'string' || !probe.startsWith(base)) return undefined
  const text = probe.slice(base.length)
  rendered.set(extra, { parent, text })
  return text
}

/**
 * `log` with `extra` bindings on every line from now on. The logger {@link requestChildLogger}
 * made for `raw` (a pino child of the app's logger, which no other request shares) takes them in
 * place and is returned; any other logger gets a child.
 */
export function withRequestBindings (log: FastifyBaseLogger, extra: Bindings, raw: IncomingMessage): FastifyBaseLogger {
  const logger = log as Logger
  const own = CHINDINGS === undefined ? undefined : logger[CHINDINGS]
  const parent = (raw as RawRequest)[REQUEST_LOGGER] === log ? Object.getPrototypeOf(log) as FastifyBaseLogger | null : null
  const text = parent === null || typeof own !== 'string' ? undefined : renderedBindings(parent, extra)
  if (text === undefined) return log.child(extra)
  logger[CHINDINGS as symbol] = own + text
  return log
}
