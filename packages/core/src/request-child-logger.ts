/**
 * The per-request child logger (Fastify's `childLoggerFactory`). Fastify's default factory passes
 * pino an options object on every request, an empty one when the route sets no `logLevel` or
 * `logSerializers`, and pino then takes its slower child path (a new formatters object and more
 * properties per request; docs/performance.md). This one passes no options when there are none,
 * which gives the same child and the same lines, and passes them through as Fastify does when
 * there are.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Bindings, ChildLoggerOptions } from 'pino'

export function requestChildLogger (logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  for (const key in options) if (Object.hasOwn(options, key)) return logger.child(bindings, options)
  return logger.child(bindings)
}
