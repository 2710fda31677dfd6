/**
 * The verified-token cache of a bearer scheme (issue 35, "Speed and memory"): a token verified
 * once is not verified again until it expires, so an API client sending the same token on every
 * call pays the signature check once. Keyed by SHA-256 of the token (the cache holds no token),
 * an entry lives until the token's `exp` (never longer: a cached answer cannot outlive the
 * token), and the cache is bounded twice: at most {@link MAX_CACHED_TOKENS} entries and at most
 * {@link MAX_CACHED_BYTES} of estimated heap, the oldest entry going first. A token from a flood
 * of forged ones never enters it (only verified tokens do). The estimate (bearer-schemes.ts
 * `bytesOf`: a fixed part per entry, an object per claim, its value's characters) stays above
 * the heap an entry keeps, as bench/token-cache-memory.ts measures across token shapes (issue 40,
 * item 6), so the cache keeps at most 16 MiB of heap; docs/performance.md. Plain data, no
 * Fastify types.
 */
import { sha256Base64url } from '../sha256.js'

/** Most tokens remembered at once, per app. */
export const MAX_CACHED_TOKENS = 10_000
/** Most heap the entries keep at once, per app, as estimated by {@link TokenCache.set}'s `bytes`. */
export const MAX_CACHED_BYTES = 16 * 1024 * 1024

interface Entry<T> {
  readonly value: T
  readonly expiresAtMs: number
  readonly bytes: number
}

/** The cache key of a token: base64url SHA-256 (43 characters). */
export function tokenCacheKeyOf (token: string): string {
  return sha256Base64url(token)
}

export class TokenCache<T> {
  readonly #entries = new Map<string, Entry<T>>()
  readonly #maxEntries: number
  readonly #maxBytes: number
  #bytes = 0

  constructor (limits: { readonly maxEntries?: number, readonly maxBytes?: number } = {}) {
    this.#maxEntries = limits.maxEntries ?? MAX_CACHED_TOKENS
    this.#maxBytes = limits.maxBytes ?? MAX_CACHED_BYTES
  }

  get size (): number {
    return this.#entries.size
  }

  /** The estimated bytes held now: the sum of the entries' `bytes`. */
  get bytes (): number {
    return this.#bytes
  }

  /** The value cached for `key` while `nowMs` is before its expiry; an expired entry is dropped. */
  get (key: string, nowMs: number): T | undefined {
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    if (nowMs < entry.expiresAtMs) return entry.value
    this.#delete(key, entry)
    return undefined
  }

  /** Remembers `value` until `expiresAtMs`; `bytes` is its estimated size. Too large for the cache: not kept. */
  set (key: string, value: T, expiresAtMs: number, bytes: number): void {
    if (bytes > this.#maxBytes) return
    const known = this.#entries.get(key)
    if (known !== undefined) this.#delete(key, known)
    while (this.#entries.size >= this.#maxEntries || this.#bytes + bytes > this.#maxBytes) {
      const oldest = this.#entries.entries().next().value
      if (oldest === undefined) break
      this.#delete(oldest[0], oldest[1])
    }
    this.#entries.set(key, { value, expiresAtMs, bytes })
    this.#bytes += bytes
  }

  clear (): void {
    this.#entries.clear()
    this.#bytes = 0
  }

  #delete (key: string, entry: Entry<T>): void {
    this.#entries.delete(key)
    this.#bytes -= entry.bytes
  }
}
