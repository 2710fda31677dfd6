/**
 * The per-client bound on DPoP proof records (issue 40, item 6): every accepted DPoP request
 * writes its proof's `jti` to the state store's replay cache (`replay:dpop:<hash>`, kept up to
 * two minutes), and the embedded store refuses every replay record, sign-ins included, once it
 * holds `State:Embedded:MaxReplayRecords`. So one client with a valid token and key could fill it
 * by sending fresh proofs. Each record a client is about to write is counted first in the state
 * store's shared counters (`rate:dpop-proofs:<client>`, the client as a hash: state/rate-limit-store.ts
 * `clientKeyOf`); over `RateLimits:DPoPProofsPerWindow` the request is answered 429 and nothing
 * is written. Plain inputs, no Fastify types.
 */
import { rateLimitKey } from '../state/keys.js'

/** The rate-limit group DPoP proof records count in. */
export const DPOP_PROOF_BUCKET = 'dpop-proofs'

export interface DPoPProofLimitOptions {
  /** The state store's shared counter (state/state-store.ts `increment`). */
  readonly increment: (key: string, windowMs: number) => Promise<{ readonly count: number, readonly ttlMs: number }>
  /** Proof records a client may write per window. */
  readonly perWindow: number
  readonly windowMs: number
}

export class DPoPProofLimit {
  readonly #options: DPoPProofLimitOptions

  constructor (options: DPoPProofLimitOptions) {
    this.#options = options
  }

  /**
   * Counts one proof record `client` is about to write: undefined when it may, else the seconds
   * until its window ends. A store that cannot count lets it pass, as the other rate limits do
   * (the record's own write then meets the same store).
   */
  async admit (client: string): Promise<number | undefined> {
    let counted: { readonly count: number, readonly ttlMs: number }
    try {
      counted = await this.#options.increment(rateLimitKey(DPOP_PROOF_BUCKET, client), this.#options.windowMs)
    } catch {
      return undefined
    }
    return counted.count <= this.#options.perWindow ? undefined : Math.max(1, Math.ceil(counted.ttlMs / 1000))
  }
}
