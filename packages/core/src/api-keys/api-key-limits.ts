/**
 * The rate limits of API keys (issue 42, item 7), counted in the state store's shared counters so
 * every instance counts the same key and address (keys from state/keys.ts `rateLimitKey`):
 *
 * - **Requests per key** (`RateLimits:ApiKeyRequestsPerWindow`): every accepted call counts
 *   against its key id (`rate:api-key:<id>`, whatever address it comes from); over the limit the
 *   call is answered 429 with `Retry-After` until the key's window ends.
 * - **Failed look-ups per address** (`RateLimits:ApiKeyFailuresPerWindow`): a well-formed key the
 *   store refuses (unknown, revoked, expired, owner no longer valid) counts against the client's
 *   address (`rate:api-key-failed:<hash>`, state/rate-limit-store.ts `clientKeyOf`); an address over
 *   the limit is answered 429 before any look-up until its window ends. Only the address is held,
 *   never a key: a client replaying a real key's id with made-up secrets holds itself back, not
 *   the key's owner calling from elsewhere.
 *
 * A key verified within its cached second is admitted at once (no wait for the store: the bearer
 * handler's synchronous path) while its last count left room; the call is counted in the
 * background, and a count that reaches the limit sends the key's next calls back to the waiting
 * path ({@link ApiKeyLimits.admitKey}) until its window ends. Several instances, or calls still in
 * flight, may each let one call more through at the edge of a window.
 *
 * A store that cannot count lets the call pass, as every other rate limit does: the limits guard
 * against floods, they decide no access. Plain inputs, no Fastify types.
 */
import { RefusalLimit } from '../bearer/refusal-limit.js'
import { rateLimitKey } from '../state/keys.js'

/** The rate-limit group a key's requests count in (per key id). */
export const API_KEY_REQUEST_BUCKET = 'api-key'
/** The rate-limit group failed look-ups count in (per client address). */
export const API_KEY_FAILURE_BUCKET = 'api-key-failed'

/** What the limits are built with. */
export interface ApiKeyLimitsOptions {
  /** The state store's shared counter (state/state-store.ts `increment`). */
  readonly increment: (key: string, windowMs: number) => Promise<{ readonly count: number, readonly ttlMs: number }>
  /** `RateLimits:ApiKeyRequestsPerWindow`. */
  readonly requestsPerWindow: number
  /** `RateLimits:ApiKeyFailuresPerWindow`. */
  readonly failuresPerWindow: number
  readonly windowMs: number
  readonly now?: () => number
}

/** Keys remembered as having reached their limit, at most (a full map is emptied: those keys wait for the store). */
const MAX_AT_LIMIT = 10_000

export class ApiKeyLimits {
  readonly #options: ApiKeyLimitsOptions
  readonly #failures: RefusalLimit
  /** Key id → until when its calls wait for the store (its count reached the limit). */
  readonly #atLimit = new Map<string, number>()

  constructor (options: ApiKeyLimitsOptions) {
    this.#options = options
    this.#failures = new RefusalLimit({
      increment: options.increment,
      perWindow: options.failuresPerWindow,
      windowMs: options.windowMs,
      bucket: API_KEY_FAILURE_BUCKET,
      ...(options.now === undefined ? {} : { now: options.now })
    })
  }

  /** Seconds the address `client` must wait before its next key is looked up, or undefined. */
  heldAddress (client: string): number | undefined {
    return this.#failures.retryAfterSeconds(client)
  }

  /** Counts one failed look-up of `client`. */
  async countFailure (client: string): Promise<void> {
    await this.#failures.count(client)
  }

  /** Counts one call of the key `id`: undefined when it may be served, else the seconds until its window ends. */
  async admitKey (id: string): Promise<number | undefined> {
    let counted: { readonly count: number, readonly ttlMs: number }
    try {
      counted = await this.#options.increment(rateLimitKey(API_KEY_REQUEST_BUCKET, id), this.#options.windowMs)
    } catch {
      return undefined
    }
    this.#noteCount(id, counted)
    return counted.count <= this.#options.requestsPerWindow ? undefined : Math.max(1, Math.ceil(counted.ttlMs / 1000))
  }

  /** Whether a call of the key `id` may be admitted without waiting for the store: its last count left room. */
  admitsAtOnce (id: string): boolean {
    const until = this.#atLimit.get(id)
    if (until === undefined) return true
    if (until > this.#now()) return false
    this.#atLimit.delete(id)
    return true
  }

  /** Counts a call admitted at once, in the background. */
  countAdmitted (id: string): void {
    this.#options.increment(rateLimitKey(API_KEY_REQUEST_BUCKET, id), this.#options.windowMs).then((counted) => { this.#noteCount(id, counted) }, () => {})
  }

  #noteCount (id: string, counted: { readonly count: number, readonly ttlMs: number }): void {
    if (counted.count < this.#options.requestsPerWindow) return
    if (this.#atLimit.size >= MAX_AT_LIMIT) this.#atLimit.clear()
    this.#atLimit.set(id, this.#now() + counted.ttlMs)
  }

  #now (): number {
    return (this.#options.now ?? Date.now)()
  }
}
