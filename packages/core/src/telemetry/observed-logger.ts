/**
 * The logger as telemetry sees it: every call of a level method (`log.info({ event }, ...)`) is
 * shown to `observe` before the logger handles it, on this logger and on every child made from it
 * (Fastify's request loggers included), whatever the configured level. That is why it is a
 * wrapper and not pino's `hooks.logMethod`: pino replaces a method below the level by a no-op,
 * so an app logging at `warn` would count no sign-in. The wrapper exists only when telemetry is
 * switched on; otherwise createApp hands Fastify the logger itself.
 *
 * A pino logger (the core's own pino: its symbols match) is wrapped once. A pino child is an
 * object whose prototype is its parent, and it inherits its parent's level methods and `child`
 * unless it has a level of its own; so one object between the app's logger and Fastify's, holding
 * observing level methods, an observing `child` and an observing level setter, observes every
 * descendant. A request's child logger costs nothing more than without telemetry: no wrapper per
 * child, no trap per property read (docs/performance.md, "Telemetry"). Any other logger gets a
 * Proxy per logger and per child.
 */
import type { FastifyBaseLogger } from 'fastify'
import { pino } from 'pino'
import { bindingContext } from './event-metrics.js'

type Context = Readonly<Record<string, unknown>> | undefined

export type LineObserver = (line: unknown, context: Context) => void

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const
const LEVEL_METHODS = new Set<PropertyKey>(LEVELS)

type LevelMethod = (this: unknown, ...args: unknown[]) => void

/** The label-bearing bindings of a pino logger, set on a child whose bindings add some and inherited by its descendants. */
const CONTEXT = Symbol('telemetry.bindingContext')
/** pino's level setter (`logger.level = ...` and a child made with a level call it); undefined if pino ever stops exporting it. */
const SET_LEVEL = (pino.symbols as unknown as Record<string, symbol | undefined>).setLevelSym

type PinoLogger = Record<PropertyKey, unknown> & {
  [CONTEXT]?: Context
  child: (this: PinoLogger, bindings: unknown, options?: unknown) => PinoLogger
}

function isPino (logger: FastifyBaseLogger): boolean {
  return SET_LEVEL !== undefined && typeof (logger as unknown as PinoLogger)[SET_LEVEL] === 'function'
}

/**
 * `logger` with its level methods calling `observe(firstArgument, bindings)` first, on it and on
 * every child made from it; `context` is the binding context of `logger` itself. Everything else
 * (level, bindings, flush, pino's internals) is the logger's own.
 */
export function observeLogger<L extends FastifyBaseLogger> (logger: L, observe: LineObserver, context?: Context): L {
  return isPino(logger) ? observePino(logger, observe, context) : observeAny(logger, observe, context)
}

/** A level method that shows its first argument and the calling logger's binding context to `observe`, then calls `method`. */
function observing (observe: LineObserver, method: (logger: PinoLogger) => LevelMethod): LevelMethod {
  return function observedLog (this: unknown, ...args: unknown[]): void {
    const logger = this as PinoLogger
    observe(args[0], logger[CONTEXT])
    method(logger).apply(logger, args)
  }
}

function observePino<L extends FastifyBaseLogger> (logger: L, observe: LineObserver, context: Context): L {
  const base = logger as unknown as PinoLogger
  const setLevel = base[SET_LEVEL as symbol] as (this: PinoLogger, level: unknown) => void
  const child = base.child
  const observed = Object.create(base) as PinoLogger
  for (const level of LEVELS) {
    // Looked up on each call: the logger's level may still change, and with it its methods.
    observed[level] = observing(observe, () => base[level] as LevelMethod)
  }
  // Set here, so that a lookup from a request's logger ends one step up instead of at Object.prototype.
  observed[CONTEXT] = context
  observed.child = function observedChild (this: PinoLogger, bindings: unknown, options?: unknown): PinoLogger {
    const instance = child.call(this, bindings, options)
    const parent = this[CONTEXT]
    const own = bindingContext(bindings, parent)
    if (own !== parent) instance[CONTEXT] = own
    return instance
  }
  // pino gives a logger whose level is set (on it or, with a level option, on a new child) level
  // methods of its own, which hide the inherited observing ones: observe those too.
  observed[SET_LEVEL as symbol] = function observedSetLevel (this: PinoLogger, level: unknown): void {
    setLevel.call(this, level)
    for (const name of LEVELS) {
      const method = this[name] as LevelMethod
      this[name] = observing(observe, () => method)
    }
  }
  return observed as unknown as L
}

/** A proxy of `logger` whose level methods observe first and whose `child()` returns such a proxy too. */
function observeAny<L extends FastifyBaseLogger> (logger: L, observe: LineObserver, context: Context): L {
  const levelMethods = new Map<PropertyKey, (...args: unknown[]) => void>()
  return new Proxy(logger, {
    get (target, property) {
      if (LEVEL_METHODS.has(property)) {
        let method = levelMethods.get(property)
        if (method === undefined) {
          // Looked up on each call: the logger may replace its level methods when the level changes.
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
          return observeAny(child.call(target, bindings, options), observe, bindingContext(bindings, context))
        }
      }
      return (value as (...args: unknown[]) => unknown).bind(target)
    }
  })
}
