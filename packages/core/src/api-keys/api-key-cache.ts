/**
 * The verified-key cache (issue 42, item 4 and "Speed and memory"): a key found valid is kept in
 * memory for at most {@link MAX_API_KEY_CACHE_MS}, keyed by its digest (never the key), so a burst
 * of calls with one key reads the store once. Bounded: past {@link API_KEY_CACHE_ENTRIES} the
 * oldest entry goes. A revocation anywhere reaches every instance within that second, or at once
 * through {@link ApiKeyCache.invalidate}, which the state store's pub/sub calls on each instance.
 * Plain data.
 */
import type { ApiKeyPrincipal } from './api-key-principal.js'
import type { ApiKeyRecord } from './api-key-store.js'

/** Longest time a verified key is reused without asking the store (issue 42: at most 1 s). */
export const MAX_API_KEY_CACHE_MS = 1000
/** Most keys cached per instance. */
export const API_KEY_CACHE_ENTRIES = 10_000

/** A verified key: its record, its principal (made once per verification) and its expiry in ms. */
export interface VerifiedApiKey {
  readonly record: ApiKeyRecord
  readonly principal: ApiKeyPrincipal
  readonly expiresAtMs: number
}

interface Entry {
  readonly key: VerifiedApiKey
  readonly until: number
}

export class ApiKeyCache {
  readonly #entries = new Map<string, Entry>()
  readonly #lifetimeMs: number
  readonly #capacity: number

  constructor (lifetimeMs: number = MAX_API_KEY_CACHE_MS, capacity: number = API_KEY_CACHE_ENTRIES) {
    if (!(lifetimeMs >= 0 && lifetimeMs <= MAX_API_KEY_CACHE_MS)) throw new RangeError(`the API key cache lifetime must be 0-${MAX_API_KEY_CACHE_MS} ms`)
    this.#lifetimeMs = lifetimeMs
    this.#capacity = Math.max(1, capacity)
  }

  get size (): number {
    return this.#entries.size
  }

  /** The key cached under `digest` at `now`, unless its time is up. */
  get (digest: string, now: number): VerifiedApiKey | undefined {
    const entry = this.#entries.get(digest)
    if (entry === undefined) return undefined
    if (entry.until <= now) {
      this.#entries.delete(digest)
      return undefined
    }
    return entry.key
  }

  set (digest: string, key: VerifiedApiKey, now: number): void {
    if (this.#lifetimeMs === 0) return
    this.#entries.delete(digest)
    if (this.#entries.size >= this.#capacity) {
      const oldest = this.#entries.keys().next().value
      if (oldest !== undefined) this.#entries.delete(oldest)
    }
    this.#entries.set(digest, { key, until: now + this.#lifetimeMs })
  }

  /** Forgets the keys `ids` (every key when none are given). */
  invalidate (ids?: readonly string[]): void {
    if (ids === undefined) {
      this.#entries.clear()
      return
    }
    const forget = new Set(ids)
    for (const [digest, entry] of this.#entries) if (forget.has(entry.key.record.id)) this.#entries.delete(digest)
  }
}
