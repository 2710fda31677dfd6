/**
 * The provider's signing keys (its `jwks_uri`) for ID token signatures, with the refetch a key
 * rotation without overlap needs (issue 23, item 4): an ID token whose `kid` (with its `alg`) is
 * not in the cached set triggers one immediate re-fetch of the set and a second verification, so
 * the first sign-in after the provider switched keys succeeds. Unknown-key refetches are limited
 * to one per {@link UNKNOWN_KEY_REFETCH_INTERVAL_MS} per provider (or the interval its options give), so tokens with invented `kid`s
 * cannot make the app hammer the provider; a `kid` still unknown is {@link UnknownSigningKeyError},
 * told apart from a signature that does not verify.
 *
 * Why not openid-client's own non-repudiation check: it refetches on an unknown `kid` only when its
 * cached set is at least 60 seconds old, and the code grant cannot be repeated once the token
 * endpoint has answered, so the first sign-in after a rotation within that minute failed like a
 * forged token. openid-client still validates every claim of the ID token; this module adds the
 * signature, with jose (the JOSE library openid-client uses) and the pinned algorithm.
 */
import { compactVerify, createLocalJWKSet, errors, type JSONWebKeySet } from 'jose'
import { CoreError, type LogCode } from '../errors.js'
import { fetchBounded } from '../http/bounded-fetch.js'
import type { Dispatcher } from '../http/outbound-address.js'

/** At most one unknown-key refetch per provider in this many milliseconds. */
export const UNKNOWN_KEY_REFETCH_INTERVAL_MS = 60_000
/** A cached key set older than this is fetched again before use (as oauth4webapi does). */
export const KEY_SET_MAX_AGE_MS = 300_000

/** The ID token names a key (`kid`, `alg`) the provider does not publish, even after a refetch. */
export class UnknownSigningKeyError extends CoreError {
  readonly code = 'ID_TOKEN_KEY_UNKNOWN' satisfies LogCode
  /** Whether the set was fetched again for this token (false: the refetch limit applied). */
  readonly refetched: boolean

  constructor (refetched: boolean) {
    super('no key of the provider\'s key set matches the token header')
    this.name = 'UnknownSigningKeyError'
    this.refetched = refetched
  }
}

/** The key set could not be fetched or read. */
export class KeySetUnavailableError extends CoreError {
  readonly code = 'JWKS_UNAVAILABLE' satisfies LogCode

  constructor (options?: ErrorOptions) {
    super('the provider\'s key set could not be loaded', options)
    this.name = 'KeySetUnavailableError'
  }
}

export interface ProviderKeysOptions {
  readonly jwksUri: string
  /** DANGEROUS: http to the provider (loopback in Development only, as for discovery). */
  readonly allowInsecureRequests: boolean
  readonly timeoutMs: number
  /** A provider from the provider source: its connections (public addresses only outside Development). */
  readonly dispatcher?: Dispatcher
  /** Milliseconds since the epoch; for tests. */
  readonly now?: () => number
  /**
   * At most one unknown-key refetch in this many milliseconds; default
   * {@link UNKNOWN_KEY_REFETCH_INTERVAL_MS} (ID tokens). Bearer schemes pass 30 s
   * (bearer/jwt-bearer-scheme.ts): API clients meet a rotation sooner than a sign-in does.
   */
  readonly unknownKeyRefetchIntervalMs?: number
  /** Called after every unknown-key refetch, with whether the key was then found. */
  readonly onUnknownKeyRefetch?: (found: boolean) => void
}

interface LoadedSet {
  readonly fetchedAt: number
  readonly getKey: ReturnType<typeof createLocalJWKSet>
}

export class ProviderKeys {
  readonly #options: ProviderKeysOptions
  #set: LoadedSet | undefined
  #loading: Promise<LoadedSet> | undefined
  #lastUnknownKeyRefetch = Number.NEGATIVE_INFINITY

  constructor (options: ProviderKeysOptions) {
    this.#options = options
  }

  get jwksUri (): string {
    return this.#options.jwksUri
  }

  #now (): number {
    return this.#options.now?.() ?? Date.now()
  }

  /** Fetches the set; concurrent callers share one request. */
  async #load (): Promise<LoadedSet> {
    this.#loading ??= (async () => {
      try {
        const url = new URL(this.#options.jwksUri)
        if (url.protocol !== 'https:' && !(this.#options.allowInsecureRequests && url.protocol === 'http:')) {
          throw new KeySetUnavailableError({ cause: new Error('jwks_uri must be https') })
        }
        const { dispatcher, timeoutMs } = this.#options
        const response = await fetchBounded(url, { headers: { accept: 'application/json, application/jwk-set+json' }, redirect: 'error' }, { kind: 'jwks', timeoutMs, ...(dispatcher === undefined ? {} : { dispatcher }) })
        if (!response.ok) throw new KeySetUnavailableError({ cause: new Error(`jwks_uri answered ${response.status}`) })
        const jwks = JSON.parse(await response.text()) as JSONWebKeySet
        const loaded = { fetchedAt: this.#now(), getKey: createLocalJWKSet(jwks) }
        this.#set = loaded
        return loaded
      } catch (error) {
        throw error instanceof KeySetUnavailableError ? error : new KeySetUnavailableError({ cause: error })
      } finally {
        this.#loading = undefined
      }
    })()
    return await this.#loading
  }

  async #current (): Promise<LoadedSet> {
    const set = this.#set
    if (set !== undefined && this.#now() - set.fetchedAt < KEY_SET_MAX_AGE_MS) return set
    return await this.#load()
  }

  /**
   * Verifies the compact JWS `token` with a key of the set and one of `algorithms`. Throws
   * {@link UnknownSigningKeyError} when no published key matches its header (after the one
   * refetch this token may cause), {@link KeySetUnavailableError}, or jose's error for a
   * signature or algorithm that does not verify.
   */
  async verify (token: string, algorithms: readonly string[]): Promise<void> {
    const cached = await this.#current()
    if (await verifyWith(token, cached, algorithms)) return
    // An unknown kid: the provider may have switched keys since the set was cached. A set that
    // another token's refetch loaded meanwhile is tried first.
    const newer = this.#set
    if (newer !== undefined && newer !== cached && await verifyWith(token, newer, algorithms)) return
    const now = this.#now()
    if (now - this.#lastUnknownKeyRefetch < (this.#options.unknownKeyRefetchIntervalMs ?? UNKNOWN_KEY_REFETCH_INTERVAL_MS)) throw new UnknownSigningKeyError(false)
    this.#lastUnknownKeyRefetch = now
    const found = await verifyWith(token, await this.#load(), algorithms)
    this.#options.onUnknownKeyRefetch?.(found)
    if (!found) throw new UnknownSigningKeyError(true)
  }
}

/**
 * True when verified; false when no key of the set matches the header; throws when the matching
 * key does not verify. A header that matches several keys (no `kid` while several keys fit) is
 * refused, as oauth4webapi refuses it: the token must name its key.
 */
async function verifyWith (token: string, set: LoadedSet, algorithms: readonly string[]): Promise<boolean> {
  try {
    await compactVerify(token, set.getKey, { algorithms: [...algorithms] })
    return true
  } catch (error) {
    if (error instanceof errors.JWKSNoMatchingKey) return false
    throw error
  }
}
