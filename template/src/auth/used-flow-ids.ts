/**
 * Flow ids (OAuth `state`) already redeemed by this instance, kept until their correlation cookie
 * would have expired, so a replayed callback that carries a copied correlation cookie is refused
 * before its code reaches the token endpoint (where single-use codes refuse it again, on every
 * instance). Bounded: when full, the entry closest to expiry is dropped first.
 */
export class UsedFlowIds {
  readonly #entries = new Map<string, number>()
  readonly #capacity: number

  constructor (capacity = 10_000) {
    this.#capacity = capacity
  }

  /** Records `flowId` (valid until `expiresAt`, seconds since the epoch); false when already used. */
  claim (flowId: string, expiresAt: number, now = Math.floor(Date.now() / 1000)): boolean {
    const known = this.#entries.get(flowId)
    if (known !== undefined && known > now) return false
    this.#prune(now)
    if (this.#entries.size >= this.#capacity) {
      // Insertion order roughly follows expiry (every flow lives the same 10 minutes).
      const oldest = this.#entries.keys().next().value
      if (oldest !== undefined) this.#entries.delete(oldest)
    }
    this.#entries.set(flowId, expiresAt)
    return true
  }

  #prune (now: number): void {
    for (const [flowId, expiresAt] of this.#entries) {
      if (expiresAt > now) break
      this.#entries.delete(flowId)
    }
  }
}
