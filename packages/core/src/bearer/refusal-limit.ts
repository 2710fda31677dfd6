/**
 * The per-client limit on refused bearer tokens (issue 35, "Bad input": a flood of forged tokens
 * from one client is rate-limited like the other anonymous endpoints). Refusals are counted in
 * the state store's shared counters (every instance counts the same client, keys from
 * state/keys.ts `rateLimitKey`, the client as a hash: state/rate-limit-store.ts `clientKeyOf`);
 * a client over the limit is remembered locally until its window ends, so its next tokens are
 * answered 429 before any decoding or cryptography. A token already verified (in the cache) is
 * never held back. Bounded: at most {@link MAX_BLOCKED_CLIENTS} clients remembered, the list
 * starting over when full. Plain inputs, no Fastify types.
 */
import { rateLimitKey } from '../state/keys.js'

/** The rate-limit group refused bearer tokens count in. */
export const BEARER_REFUSAL_BUCKET = 'bearer-refused'
/** Most clients remembered as over the limit at once. */
export const MAX_BLOCKED_CLIENTS = 10_000

export interface RefusalLimitOptions {
  /** The state store's shared counter (state/state-store.ts `increment`). */
  readonly increment: (key: string, windowMs: number) => Promise<{ readonly count: number, readonly ttlMs: number }>
  /** Refused tokens a client may send per window before it is answered 429. */
  readonly perWindow: number
  readonly windowMs: number
  readonly now?: () => number
  /** The rate-limit group counted in (default {@link BEARER_REFUSAL_BUCKET}; API keys count failed look-ups apart). */
  readonly bucket?: string
}

export class RefusalLimit {
  readonly #options: RefusalLimitOptions
  readonly #blockedUntil = new Map<string, number>()

  constructor (options: RefusalLimitOptions) {
    this.#options = options
  }

  #now (): number {
    return this.#options.now?.() ?? Date.now()
  }

  /** Seconds `client` must wait before its next token is looked at, or undefined when it may send one. */
  retryAfterSeconds (client: string): number | undefined {
    const until = this.#blockedUntil.get(client)
    if (until === undefined) return undefined
    const left = until - this.#now()
    if (left > 0) return Math.max(1, Math.ceil(left / 1000))
    this.#blockedUntil.delete(client)
    return undefined
  }

  /**
   * Counts one refusal of `client`; true when it is now over the limit (it is then held back
   * until its window ends). A store that cannot count lets the refusal pass uncounted, as the
   * other rate limits do: the limit guards against floods, it decides no access.
   */
  async count (client: string): Promise<boolean> {
    let counted: { readonly count: number, readonly ttlMs: number }
    try {
      counted = await this.#options.increment(rateLimitKey(this.#options.bucket ?? BEARER_REFUSAL_BUCKET, client), this.#options.windowMs)
    } catch {
      return false
    }
    if (counted.count <= this.#options.perWindow) return false
    if (this.#blockedUntil.size >= MAX_BLOCKED_CLIENTS) this.#blockedUntil.clear()
    this.#blockedUntil.set(client, this.#now() + Math.max(1000, counted.ttlMs))
    return true
  }
}
