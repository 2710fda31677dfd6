/**
 * A store for `@fastify/rate-limit` over the core's {@link StateStore} (its `increment`), so every
 * instance counts the same requests: embedded (memory, bounded: embedded-store.ts
 * `MAX_RATE_COUNTERS`) or Redis (one key per client and group of endpoints, expiring with its
 * window). Keys come from keys.ts `rateLimitKey`; the client part is a hash of the normalized
 * address, so the store holds no IP addresses. Plain data, no Fastify types.
 */
import { normalizeIP } from '@fastify/rate-limit'
import { rateLimitKey } from './keys.js'
import type { StateStore } from './state-store.js'
import { sha256Base64url } from '../sha256.js'

/**
 * The groups of rate-limited endpoints (plugins/rate-limits.ts, `config: { rateLimitBucket }`),
 * each counted apart under its own `RateLimits:*` limit. Declared here, at the bottom of the
 * import graph, so the provider interface can name it (providers/provider.ts).
 *
 * @public @experimental
 */
export type RateLimitBucket = 'challenge' | 'callback' | 'sign-out' | 'logout-receiver'

/** IPv6 clients count by their /64: one host usually holds a whole /64, and rotating within it must not help. */
export const IPV6_CLIENT_PREFIX = 64

/** The client part of a counter's key: 22 base64url characters of SHA-256 over the normalized address. */
export function clientKeyOf (address: string): string {
  return sha256Base64url(`rate-limit\u0000${normalizeIP(address, IPV6_CLIENT_PREFIX)}`).slice(0, 22)
}

/** What @fastify/rate-limit passes to a store's constructor and `child`: the merged limit settings. */
interface LimitSettings {
  /** The group of endpoints the route belongs to (its `config.rateLimit.bucket`). */
  readonly bucket?: string
}

type Callback = (error: Error | null, result?: { current: number, ttl: number }) => void

/** The store class @fastify/rate-limit instantiates (`store` option), counting in `state`. */
export function rateLimitStoreOver (state: StateStore): new (settings: LimitSettings) => object {
  if (state.increment === undefined) throw new TypeError('The state store has no increment operation.')
  const increment = state.increment.bind(state)
  class StateRateLimitStore {
    readonly #bucket: string

    constructor (settings: LimitSettings) {
      this.#bucket = settings.bucket ?? 'default'
    }

    incr (key: string, callback: Callback, timeWindow: number): void {
      increment(rateLimitKey(this.#bucket, key), timeWindow).then(
        (counted) => { callback(null, { current: counted.count, ttl: counted.ttlMs }) },
        (error: unknown) => { callback(error instanceof Error ? error : new Error(String(error))) })
    }

    child (settings: LimitSettings): StateRateLimitStore {
      return new StateRateLimitStore(settings)
    }
  }
  return StateRateLimitStore
}
