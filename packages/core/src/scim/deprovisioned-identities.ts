/**
 * Who has been deprovisioned (issue 41, item 4), as records in the state store, so that every
 * instance sees a deactivation from the next request: the SCIM endpoint marks a person when their
 * SCIM user is deactivated or deleted and clears the mark when it is reactivated; the bearer
 * handler's deny check (plugins/scim.ts) asks {@link DeprovisionedIdentities.denies} on every
 * bearer request, and API keys ask {@link DeprovisionedIdentities.isDeprovisioned}.
 *
 * No state-store round trip per request: each instance keeps the answer it read for a person for
 * at most {@link DEPROVISIONED_ANSWER_TTL_MS}, and a mark or a clear is published on the
 * invalidation channel (`deprovisioned:<hash>`, state/keys.ts) after it is stored, so every
 * instance drops that person's answer and reads the mark again on their next request. A read that
 * an invalidation overtook is not kept (an epoch counts invalidations); when the store cannot vouch
 * for its invalidations (status unavailable, a lost subscription) nothing is answered from memory,
 * and a lost subscription empties it. The short lifetime bounds what a missed message could cost.
 *
 * A person is their issuer and subject, not the scheme: a bearer token of the same person is
 * verified by a JwtBearer scheme of another name than the sign-in scheme the SCIM user is linked
 * to, with the same issuer and subject. A client (client credentials) is never a person here.
 */
import { DEPROVISIONED_INVALIDATION_PREFIX, deprovisionedKey } from '../state/keys.js'
import type { StateStore } from '../state/state-store.js'
import { sha256Base64url } from '../sha256.js'

/** How long a deprovisioned mark lives: a year (a bearer token or an API key issued before the deactivation cannot outlive it unnoticed). */
export const DEPROVISIONED_RECORD_TTL_MS = 365 * 24 * 3600 * 1000

/** The part of an identity a mark is kept for (a `UserIdentity` or a bearer principal's identity fits). @public @experimental */
export interface DeprovisionedIdentity {
  readonly issuer: string
  readonly subject: string
  /** `client` (client credentials): never a deprovisioned person. */
  readonly kind?: string
}

/** How long an instance keeps the answer it read for a person (an invalidation drops it sooner). */
export const DEPROVISIONED_ANSWER_TTL_MS = 1000

/** At most this many people's answers are kept per instance (then the oldest are dropped). */
const MAX_ANSWERS = 10_000

const hashOf = (identity: DeprovisionedIdentity): string => sha256Base64url(`${identity.issuer}\n${identity.subject}`)

/** What {@link DeprovisionedIdentities} remembers of one identity object. */
interface IdentityAnswer {
  readonly hash: string
  deprovisioned: boolean
  until: number
  epoch: number
}

const personOf = (identity: DeprovisionedIdentity): boolean => identity.kind !== 'client' && identity.issuer !== '' && identity.subject !== ''

/** The marks of deprovisioned people in one state store. */
export class DeprovisionedIdentities {
  readonly #store: StateStore
  readonly #ttlMs: number
  readonly #now: () => number
  /** hash -> the answer read and until when it may be used (insertion order: oldest first). */
  readonly #answers = new Map<string, { readonly deprovisioned: boolean, readonly until: number }>()
  /**
   * Per identity object (a cached caller's principal keeps one): its hash and the answer last read
   * for it, with the epoch it was read in. The deny check runs on every bearer call; this spares it
   * building and hashing the person's text and two map look-ups while nothing was invalidated.
   */
  readonly #byIdentity = new WeakMap<DeprovisionedIdentity, IdentityAnswer>()
  /** Counts invalidations: a read that saw it change may be stale and is not kept. */
  #epoch = 0

  constructor (store: StateStore, ttlMs: number = DEPROVISIONED_RECORD_TTL_MS, now: () => number = Date.now) {
    this.#store = store
    this.#ttlMs = ttlMs
    this.#now = now
    store.subscribe({
      onInvalidate: (message) => {
        if (!message.startsWith(DEPROVISIONED_INVALIDATION_PREFIX)) return
        this.#epoch++
        for (const hash of message.slice(DEPROVISIONED_INVALIDATION_PREFIX.length).split(' ')) this.#answers.delete(hash)
      },
      onReset: () => {
        this.#epoch++
        this.#answers.clear()
      }
    })
  }

  /** Marks the person deprovisioned on every instance sharing the store (stored, then announced). */
  async mark (identity: DeprovisionedIdentity): Promise<void> {
    const hash = hashOf(identity)
    await this.#store.set(deprovisionedKey(hash), '1', this.#ttlMs)
    await this.#store.publish(`${DEPROVISIONED_INVALIDATION_PREFIX}${hash}`)
  }

  /** Clears the mark (the SCIM user was reactivated), on every instance. */
  async clear (identity: DeprovisionedIdentity): Promise<void> {
    const hash = hashOf(identity)
    await this.#store.delete([deprovisionedKey(hash)])
    await this.#store.publish(`${DEPROVISIONED_INVALIDATION_PREFIX}${hash}`)
  }

  /**
   * Whether the person is deprovisioned: the bearer deny check. Synchronous while this instance
   * holds a fresh answer for them (no store round trip), else a promise of one state-store read,
   * which rejects when the store cannot answer (the caller fails closed).
   */
  denies (identity: DeprovisionedIdentity): boolean | Promise<boolean> {
    if (!personOf(identity)) return false
    let mine = this.#byIdentity.get(identity)
    if (mine === undefined) {
      mine = { hash: hashOf(identity), deprovisioned: false, until: 0, epoch: -1 }
      this.#byIdentity.set(identity, mine)
    }
    const now = this.#now()
    if (mine.epoch === this.#epoch && mine.until > now && this.#store.status().available) return mine.deprovisioned
    const known = this.#answers.get(mine.hash)
    if (known === undefined || known.until <= now || !this.#store.status().available) return this.#read(mine.hash)
    mine.deprovisioned = known.deprovisioned
    mine.until = known.until
    mine.epoch = this.#epoch
    return known.deprovisioned
  }

  /** {@link denies} as a promise: what `app.provisioning.isDeprovisioned` and the API keys call. */
  async isDeprovisioned (identity: DeprovisionedIdentity): Promise<boolean> {
    return await this.denies(identity)
  }

  async #read (hash: string): Promise<boolean> {
    const epoch = this.#epoch
    const deprovisioned = await this.#store.get(deprovisionedKey(hash)) !== undefined
    if (epoch === this.#epoch) {
      this.#answers.delete(hash)
      if (this.#answers.size >= MAX_ANSWERS) this.#answers.delete(this.#answers.keys().next().value as string)
      this.#answers.set(hash, { deprovisioned, until: this.#now() + DEPROVISIONED_ANSWER_TTL_MS })
    }
    return deprovisioned
  }
}
