/**
 * A bounded record of one-time values already redeemed on this instance, each kept until it could
 * no longer be accepted anyway:
 * - SAML2 assertion ids until their latest NotOnOrAfter plus clock skew (@node-saml/node-saml keeps
 *   no such record), so the same assertion never signs anyone in twice;
 * - OAuth/OpenID Connect flow ids (`state`) until their correlation cookie expires, so a callback
 *   replayed with a copied correlation cookie is refused before its code reaches the token
 *   endpoint (where single-use codes refuse it again, on every instance).
 *
 * Bounded: when full, expired entries are swept; if it is still full, the oldest entry goes. Per
 * process: several instances behind a balancer each keep their own (docs/providers.md).
 */
export const DEFAULT_REPLAY_CACHE_ENTRIES = 10_000

export class ReplayCache {
  readonly #entries = new Map<string, number>()
  readonly #maxEntries: number

  constructor (maxEntries = DEFAULT_REPLAY_CACHE_ENTRIES) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError('maxEntries must be a positive integer')
    this.#maxEntries = maxEntries
  }

  get size (): number {
    return this.#entries.size
  }

  /**
   * Records `id` until `expiresAtMs`. Returns false when the id is already recorded and not yet
   * expired (a replay), true when it is new.
   */
  remember (id: string, expiresAtMs: number, nowMs = Date.now()): boolean {
    const existing = this.#entries.get(id)
    if (existing !== undefined && existing > nowMs) return false
    this.#entries.delete(id)
    if (this.#entries.size >= this.#maxEntries) this.#sweep(nowMs)
    if (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next().value
      if (oldest !== undefined) this.#entries.delete(oldest)
    }
    this.#entries.set(id, expiresAtMs)
    return true
  }

  #sweep (nowMs: number): void {
    for (const [id, expiresAt] of this.#entries) if (expiresAt <= nowMs) this.#entries.delete(id)
  }
}
