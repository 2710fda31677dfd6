/**
 * The logger as telemetry sees it: every call of a level method (`log.info({ event }, ...)`) is
 * shown to `observe` before pino handles it, on this logger and on every child made from it
 * (Fastify's request loggers included), whatever the configured level. That is why it is a
 * wrapper and not pino's `hooks.logMethod`: pino replaces a method below the level by a no-op,
 * so an app logging at `warn` would count no sign-in. The wrapper exists only when telemetry is
 * switched on; otherwise createApp hands Fastify the logger itself.
 */
import type { FastifyBaseLogger } from 'fastify'
import { bindingContext } from './event-metrics.js'

export type LineObserver = (line: unknown, context: Readonly<Record<string, unknown>> | undefined) => void

const LEVEL_METHODS = new Set<PropertyKey>(['fatal', 'error', 'warn', 'info', 'debug', 'trace'])

/**
 * A proxy of `logger` whose level methods call `observe(firstArgument, bindings)` first and whose
 * `child()` returns such a proxy too. Everything else (level, bindings, flush) is the logger's own.
 */
export function observeLogger<L extends FastifyBaseLogger> (logger: L, observe: LineObserver, context?: Readonly<Record<string, unknown>>): L {
  const levelMethods = new Map<PropertyKey, (...args: unknown[]) => void>()
  return new Proxy(logger, {
    get (target, property) {
      if (LEVEL_METHODS.has(property)) {
        let method = levelMethods.get(property)
        if (method === undefined) {
          // Looked up on each call: pino replaces its level methods when the level changes.
          method = function observedLog (...args: unknown[]): void {
            observe(args[0], context)
            ;(Reflect.get(target, property, target) as (...args: unknown[]) => void).apply(target, args)
          }
          levelMethods.set(property, method)
        }
        return method
      }
      const value = Reflect.get(target, property, target) as unknown
      if (typeof value !== 'function') return value
      if (property === 'child') {
        const child = value as (bindings: unknown, options?: unknown) => L
        return function observedChild (bindings: unknown, options?: unknown): L {
          return observeLogger(child.call(target, bindings, options), observe, bindingContext(bindings, context))
        }
      }
      return (value as (...args: unknown[]) => unknown).bind(target)
    }
  })
}
