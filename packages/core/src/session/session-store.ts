/**
 * Server-side sessions (the idea of ASP.NET Core's ITicketStore) on top of the state store:
 * the record (the sealed ticket) lives in the store under `session:<id>` until its expiry, the
 * session cookie carries only a sealed reference to it (ticket.ts), and an index per user
 * (`index:user:<user key>`, the user key a hash of scheme, issuer and subject: user-identity.ts)
 * lets "sign out everywhere" and `revokeUser` find every session of that user and of no other.
 *
 * Upgrade path: sessions created before the per-user index were listed under the bare subject
 * (`index:subject:<sha-256 of the subject>`, which merged users of different providers). They keep
 * working until they expire (AbsoluteExpireMinutes at most) and stay revocable: ending a user also
 * reads that legacy index and ends only the listed sessions whose own ticket names the same
 * scheme, issuer and subject. Nothing is written there any more.
 *
 * Per request, a session is checked against a local cache of opened records, so the hot path has
 * no store round trip. The cache stays correct because every deletion is published as an
 * invalidation (Redis pub/sub reaches every instance; the embedded store calls back at once), the
 * cache is emptied whenever invalidations may have been missed, and it is not consulted at all
 * while the store cannot vouch for its invalidations (then the request fails closed with 503).
 * Sliding renewal rewrites the record only if it still exists, so a renewal racing a sign-out
 * never brings the session back.
 */
import type { KeyRing } from '../data-protection/key-ring.js'
import type { AuthenticationTicket } from './principal.js'
import { identityOfTicket, sameIdentity, sessionAuditIdOf, userKeyOf, type UserIdentity } from './user-identity.js'
import { MAX_SEALED_LENGTH, openSessionReference, openTicket, SESSION_ID, sealSessionReference, sealTicket } from './ticket.js'
import { SESSION_INVALIDATION_PREFIX, StateStoreUnavailableError, type StateStore } from '../state/state-store.js'
import { providerSchemeIndexKey, providerSessionIndexKey as providerSessionIndexKeyOf, providerSubjectIndexKey as providerSubjectIndexKeyOf, sessionKey, subjectIndexKey as subjectIndexKeyOf, userIndexKey as userIndexKeyOf } from '../state/keys.js'
import { sha256Base64url } from '../sha256.js'

export const DEFAULT_SESSION_CACHE_ENTRIES = 4096
/** Sessions a listing returns at most by default (the newest); the total is counted anyway. */
export const DEFAULT_LISTED_SESSIONS = 50
/** Index entries a listing reads at most: a user's index beyond this is not opened (the count says "at least"). */
export const MAX_EXAMINED_SESSIONS = 5000
/** Records read from the store at once while listing. */
const LIST_BATCH = 50
/** About 8 MB of sealed records in the local cache (a 300-group principal is about 20 KB). */
export const DEFAULT_SESSION_CACHE_CHARACTERS = 8_000_000
const INVALIDATION_PREFIX = SESSION_INVALIDATION_PREFIX

/** Ends only the sessions `scheme` signed in (opened at `nowSeconds`). */
export interface SchemeScope {
  readonly scheme: string
  readonly nowSeconds: number
}

/** A least-recently-used map bounded by entries and by a size measure. */
class BoundedCache<V> {
  readonly #entries = new Map<string, { value: V, size: number }>()
  readonly #maxEntries: number
  readonly #maxSize: number
  #size = 0

  constructor (maxEntries: number, maxSize: number) {
    this.#maxEntries = maxEntries
    this.#maxSize = maxSize
  }

  get (key: string): V | undefined {
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    this.#entries.delete(key)
    this.#entries.set(key, entry)
    return entry.value
  }

  set (key: string, value: V, size: number): void {
    this.delete(key)
    if (this.#maxEntries === 0 || size > this.#maxSize) return
    while (this.#entries.size >= this.#maxEntries || this.#size + size > this.#maxSize) {
      const oldest = this.#entries.keys().next().value
      if (oldest === undefined) break
      this.delete(oldest)
    }
    this.#entries.set(key, { value, size })
    this.#size += size
  }

  delete (key: string): void {
    const entry = this.#entries.get(key)
    if (entry === undefined) return
    this.#entries.delete(key)
    this.#size -= entry.size
  }

  clear (): void {
    this.#entries.clear()
    this.#size = 0
  }
}

/** One live session of a user, as the sessions page and `app.session.list` show it. Times in seconds since the epoch. @public */
export interface SessionSummary {
  /** The session's identifier outside the cookie and the store (user-identity.ts `sessionAuditIdOf`); ends it with `revokeByAuditId`. */
  readonly sessionAuditId: string
  /** The scheme that signed the user in. */
  readonly provider: string
  /** When the user signed in (for sessions stored before this was recorded: their last renewal). */
  readonly startedAt: number
  /** The last renewal (sliding expiration renews once more than half of the idle lifetime passed), or the sign-in. */
  readonly lastSeenAt: number
  /** When the session ends unless renewed. */
  readonly expiresAt: number
  /** Browser family and operating system at sign-in ("Firefox on Windows"). */
  readonly device: string
}

/** A user's live sessions: the newest `limit`, and how many there are. @public */
export interface SessionList {
  /** Live sessions found (at least this many when `complete` is false). */
  readonly total: number
  /** False when the user's index held more entries than one listing reads ({@link MAX_EXAMINED_SESSIONS}). */
  readonly complete: boolean
  /** Newest first. */
  readonly sessions: readonly SessionSummary[]
}

export interface SessionStoreOptions {
  readonly store: StateStore
  readonly ring: KeyRing
  readonly cacheEntries?: number
  readonly cacheCharacters?: number
}

/** How long the store keeps a record: until its sliding or its absolute expiry, whichever is first. */
const recordTtlMs = (ticket: AuthenticationTicket, nowSeconds: number): number =>
  (Math.min(ticket.expiresAt, ticket.absoluteExpiresAt) - nowSeconds) * 1000

const hashed = sha256Base64url

/** The index key of a user (scheme, issuer, subject): hashed, so the store does not list user identifiers. */
export function userIndexKey (identity: UserIdentity): string {
  return userIndexKeyOf(userKeyOf(identity))
}

/**
 * Legacy: the index key of a bare subject, where sessions created before the per-user index are
 * listed (read for the upgrade, never written).
 */
export function legacySubjectIndexKey (subject: string): string {
  return subjectIndexKeyOf(hashed(subject))
}

/** The index key of the sessions signed in through a provider from the app's provider source (by scheme). */
export function providerIndexKeyOf (scheme: string): string {
  return providerSchemeIndexKey(hashed(scheme))
}

/**
 * The index key of an OpenID provider's session (`sid` of the ID token) at `issuer`, for
 * back-channel logout: the same sid at another issuer is another session.
 */
export function providerSessionIndexKey (issuer: string, sid: string): string {
  return providerSessionIndexKeyOf(hashed(`${issuer}\u0000${sid}`))
}

/**
 * The index key of an OpenID provider's subject (`sub` as the provider sent it, before any claim
 * mapping) at `issuer`, for back-channel logout tokens that name only a `sub`.
 */
export function providerSubjectIndexKey (issuer: string, sub: string): string {
  return providerSubjectIndexKeyOf(hashed(`${issuer}\u0000${sub}`))
}

function frozen (ticket: AuthenticationTicket): AuthenticationTicket {
  for (const claim of ticket.claims) Object.freeze(claim)
  Object.freeze(ticket.claims)
  if (ticket.tokens !== undefined) Object.freeze(ticket.tokens)
  return Object.freeze(ticket)
}

export class SessionStore {
  readonly #store: StateStore
  readonly #ring: KeyRing
  readonly #tickets: BoundedCache<AuthenticationTicket>
  /** Cookie value -> session id: a browser sends the same reference on every request. */
  readonly #references: BoundedCache<string>
  /** Counts invalidations; a load that saw it change may be stale and is not cached. */
  #epoch = 0

  constructor (options: SessionStoreOptions) {
    this.#store = options.store
    this.#ring = options.ring
    this.#tickets = new BoundedCache(options.cacheEntries ?? DEFAULT_SESSION_CACHE_ENTRIES, options.cacheCharacters ?? DEFAULT_SESSION_CACHE_CHARACTERS)
    this.#references = new BoundedCache(options.cacheEntries ?? DEFAULT_SESSION_CACHE_ENTRIES, Number.MAX_SAFE_INTEGER)
    this.#store.subscribe({
      onInvalidate: (message) => {
        if (!message.startsWith(INVALIDATION_PREFIX)) return
        this.#epoch++
        for (const sessionId of message.slice(INVALIDATION_PREFIX.length).split(' ')) this.#tickets.delete(sessionId)
      },
      onReset: () => {
        this.#epoch++
        this.#tickets.clear()
      }
    })
  }

  /** The session id a cookie value refers to; undefined for no cookie, an empty one, or anything not sealed by this key ring. */
  sessionIdOf (cookieValue: string | undefined): string | undefined {
    if (cookieValue === undefined || cookieValue === '') return undefined
    const known = this.#references.get(cookieValue)
    if (known !== undefined) return known
    const sessionId = openSessionReference(cookieValue, this.#ring)
    if (sessionId !== undefined) this.#references.set(cookieValue, sessionId, 1)
    return sessionId
  }

  /**
   * The session from the local cache, without a round trip: the ticket, or undefined when the
   * cache cannot answer (then {@link load}). Throws {@link StateStoreUnavailableError} when the
   * store cannot vouch for its invalidations, because a cached session may have been revoked.
   */
  cached (sessionId: string, nowSeconds: number): AuthenticationTicket | undefined {
    const status = this.#store.status()
    if (!status.available) throw new StateStoreUnavailableError(status.reason ?? 'unavailable')
    const ticket = this.#tickets.get(sessionId)
    if (ticket === undefined) return undefined
    // Another instance may have renewed it: an expired copy is read again, not trusted.
    if (!(ticket.expiresAt > nowSeconds) || !(ticket.absoluteExpiresAt > nowSeconds)) {
      this.#tickets.delete(sessionId)
      return undefined
    }
    return ticket
  }

  /** Reads the session from the store (and caches it); undefined when missing, expired or forged. */
  async load (sessionId: string, nowSeconds: number): Promise<AuthenticationTicket | undefined> {
    const epoch = this.#epoch
    const sealed = await this.#store.get(sessionKey(sessionId))
    if (sealed === undefined) return undefined
    const opened = openTicket(sealed, this.#ring, nowSeconds)
    if (opened === undefined || opened.sessionId !== sessionId) return undefined
    const ticket = frozen(opened)
    if (epoch === this.#epoch) this.#tickets.set(sessionId, ticket, sealed.length)
    return ticket
  }

  /**
   * Stores a new session and returns the session cookie's value. Indexes first (the user's and
   * any `indexKeys` such as {@link providerSessionIndexKey}), so revocation never misses it.
   */
  async create (ticket: AuthenticationTicket, nowSeconds: number, indexKeys: readonly string[] = []): Promise<string> {
    const sealed = this.#sealBounded(ticket)
    const identity = identityOfTicket(ticket)
    const indexTtlMs = (ticket.absoluteExpiresAt - nowSeconds) * 1000
    if (identity !== undefined) await this.#store.addMember(userIndexKey(identity), ticket.sessionId, indexTtlMs)
    for (const indexKey of indexKeys) await this.#store.addMember(indexKey, ticket.sessionId, indexTtlMs)
    await this.#store.set(sessionKey(ticket.sessionId), sealed, recordTtlMs(ticket, nowSeconds))
    this.#tickets.set(ticket.sessionId, frozen(ticket), sealed.length)
    return sealSessionReference(ticket.sessionId, this.#ring)
  }

  /** The sealed record of a ticket; a RangeError when it is larger than a record may be. */
  #sealBounded (ticket: AuthenticationTicket): string {
    const sealed = sealTicket(ticket, this.#ring)
    if (sealed.length > MAX_SEALED_LENGTH) throw new RangeError(`A session record may hold at most ${MAX_SEALED_LENGTH} characters.`)
    return sealed
  }

  /**
   * Writes a renewed ticket; false when the session is gone meanwhile (it stays gone). A ticket
   * with provider tokens keeps the tokens of the stored record: another instance may have refreshed
   * them since this copy was cached, and writing the old ones back would lose a rotated refresh token.
   */
  async renew (renewed: AuthenticationTicket, nowSeconds: number): Promise<boolean> {
    // A record that is gone (revoked, evicted) or a renewal the store refused (full, unreachable)
    // leaves no cached copy behind: the next request reads the store again, so a session whose
    // record disappeared stops working here too instead of living on until its idle expiry.
    try {
      let ticket = renewed
      if (renewed.tokens !== undefined) {
        const stored = await this.load(renewed.sessionId, nowSeconds)
        if (stored === undefined) {
          this.#tickets.delete(renewed.sessionId)
          return false
        }
        ticket = { ...renewed, ...(stored.tokens === undefined ? {} : { tokens: stored.tokens }) }
      }
      const sealed = sealTicket(ticket, this.#ring)
      const epoch = this.#epoch
      const stored = await this.#store.update(sessionKey(ticket.sessionId), sealed, recordTtlMs(ticket, nowSeconds))
      if (!stored) this.#tickets.delete(ticket.sessionId)
      else if (epoch === this.#epoch) this.#tickets.set(ticket.sessionId, frozen(ticket), sealed.length)
      return stored
    } catch (error) {
      this.#tickets.delete(renewed.sessionId)
      throw error
    }
  }

  /**
   * Writes `tokens` into the stored session (only if it still exists) and tells every instance to
   * drop its cached copy; the updated ticket, or undefined when the session is gone.
   */
  async replaceTokens (ticket: AuthenticationTicket, tokens: Readonly<Record<string, string>>, nowSeconds: number): Promise<AuthenticationTicket | undefined> {
    const updated: AuthenticationTicket = { ...ticket, tokens: { ...tokens } }
    const sealed = this.#sealBounded(updated)
    if (!await this.#store.update(sessionKey(ticket.sessionId), sealed, recordTtlMs(updated, nowSeconds))) return undefined
    this.#tickets.delete(ticket.sessionId)
    await this.#store.publish(`${INVALIDATION_PREFIX}${ticket.sessionId}`)
    return frozen(updated)
  }

  /** Ends one session on every instance. */
  async end (ticket: AuthenticationTicket): Promise<void> {
    await this.endById(ticket.sessionId)
    const identity = identityOfTicket(ticket)
    if (identity === undefined) return
    await this.#store.removeMember(userIndexKey(identity), ticket.sessionId)
    // A session from before the upgrade is listed in the legacy index instead.
    await this.#store.removeMember(legacySubjectIndexKey(identity.subject), ticket.sessionId)
  }

  /** Ends the session with this id on every instance (its index entry, if any, expires by itself). */
  async endById (sessionId: string): Promise<void> {
    this.#tickets.delete(sessionId)
    await this.#store.delete([sessionKey(sessionId)])
    await this.#store.publish(`${INVALIDATION_PREFIX}${sessionId}`)
  }

  /**
   * Ends every session of a user (scheme, issuer and subject) on every instance, and of no other
   * user; returns the ids of the sessions ended. Only the listed ids leave the index, so a sign-in
   * completing meanwhile keeps its entry. Sessions created before the per-user index (listed
   * under the bare subject) are opened and ended only when their ticket names the same identity.
   */
  async endUser (identity: UserIdentity, nowSeconds: number): Promise<string[]> {
    const ended = await this.endIndexedSessions(userIndexKey(identity))
    const legacyKey = legacySubjectIndexKey(identity.subject)
    const legacy = (await this.#store.members(legacyKey)).filter((id) => SESSION_ID.test(id) && !ended.includes(id))
    const matching: string[] = []
    for (const sessionId of legacy) {
      const ticket = await this.load(sessionId, nowSeconds)
      if (ticket === undefined) {
        // Gone or expired: the entry points at nothing.
        await this.#store.removeMember(legacyKey, sessionId)
        continue
      }
      const owner = identityOfTicket(ticket)
      if (owner !== undefined && sameIdentity(owner, identity)) matching.push(sessionId)
    }
    if (matching.length > 0) {
      await this.#endIds(matching)
      for (const sessionId of matching) await this.#store.removeMember(legacyKey, sessionId)
    }
    return [...ended, ...matching]
  }

  /**
   * Ends every session listed under an index key ({@link providerSessionIndexKey}...); returns how
   * many were still live (an index keeps the ids of sessions ended another way until it expires).
   * With `only`, a listed session ends only when that scheme signed it in ({@link endIndexedSessions}).
   */
  async endIndexed (indexKey: string, only?: SchemeScope): Promise<number> {
    return (await this.endIndexedSessions(indexKey, only)).length
  }

  /**
   * {@link endIndexed}, returning the ids of the sessions that were live (for audit lines and
   * counts): an index entry may outlive its session (signed out elsewhere, expired, replaced by a
   * new sign-in), and such an entry is dropped without being counted. With `only` (a provider's
   * logout message: issue 33, item 6), each listed session is opened and ended only when its
   * ticket's scheme is `only.scheme`: a message a provider received never ends a session another
   * provider signed in, whatever identifiers it names; other entries stay listed.
   */
  async endIndexedSessions (indexKey: string, only?: SchemeScope): Promise<string[]> {
    const listed = (await this.#store.members(indexKey)).filter((id) => SESSION_ID.test(id))
    if (listed.length === 0) return []
    const sessionIds: string[] = []
    const live: string[] = []
    for (const sessionId of listed) {
      if (only === undefined) {
        sessionIds.push(sessionId)
        if (await this.#store.get(sessionKey(sessionId)) !== undefined) live.push(sessionId)
        continue
      }
      const ticket = await this.#peek(sessionId, only.nowSeconds)
      // Gone: the entry points at nothing and is dropped; another scheme's session stays listed.
      if (ticket !== undefined && ticket.scheme !== only.scheme) continue
      sessionIds.push(sessionId)
      if (ticket !== undefined) live.push(sessionId)
    }
    if (sessionIds.length === 0) return live
    await this.#endIds(sessionIds)
    for (const sessionId of sessionIds) await this.#store.removeMember(indexKey, sessionId)
    return live
  }

  /** A live session record, read without caching it (listing must not crowd the request cache). */
  async #peek (sessionId: string, nowSeconds: number): Promise<AuthenticationTicket | undefined> {
    const sealed = await this.#store.get(sessionKey(sessionId))
    const ticket = sealed === undefined ? undefined : openTicket(sealed, this.#ring, nowSeconds)
    return ticket?.sessionId === sessionId ? ticket : undefined
  }

  /**
   * The live sessions of the user `userKey` (user-identity.ts `userKeyOf`), newest first, at most
   * `limit` of them, with the total. Reads the user's index and opens each record (in batches),
   * at most {@link MAX_EXAMINED_SESSIONS}; entries that point at nothing are dropped from the index.
   */
  async listUser (userKey: string, nowSeconds: number, limit = DEFAULT_LISTED_SESSIONS): Promise<SessionList> {
    const indexKey = userIndexKeyOf(userKey)
    const members = (await this.#store.members(indexKey)).filter((id) => SESSION_ID.test(id))
    const examined = members.slice(0, MAX_EXAMINED_SESSIONS)
    const live: AuthenticationTicket[] = []
    for (let start = 0; start < examined.length; start += LIST_BATCH) {
      const batch = examined.slice(start, start + LIST_BATCH)
      const tickets = await Promise.all(batch.map(async (sessionId) => await this.#peek(sessionId, nowSeconds)))
      for (const [index, ticket] of tickets.entries()) {
        if (ticket !== undefined) live.push(ticket)
        else await this.#store.removeMember(indexKey, batch[index] as string)
      }
    }
    // Sessions stored before sign-in times were recorded: their last renewal stands in.
    const startOf = (ticket: AuthenticationTicket): number => ticket.startedAt ?? ticket.issuedAt
    live.sort((a, b) => startOf(b) - startOf(a) || b.issuedAt - a.issuedAt)
    const listed = live.slice(0, Math.max(0, limit))
    return {
      total: live.length,
      complete: examined.length === members.length,
      sessions: listed.map((ticket) => ({
        sessionAuditId: sessionAuditIdOf(ticket.sessionId),
        provider: ticket.scheme,
        startedAt: startOf(ticket),
        lastSeenAt: ticket.issuedAt,
        expiresAt: Math.min(ticket.expiresAt, ticket.absoluteExpiresAt),
        device: ticket.device ?? 'Unknown device'
      }))
    }
  }

  /**
   * Ends the session of the user `userKey` whose audit id is `sessionAuditId`, on every instance;
   * false when the user has no such session (another user's audit id never matches: only this
   * user's index is searched).
   */
  async endUserSession (userKey: string, sessionAuditId: string): Promise<boolean> {
    const indexKey = userIndexKeyOf(userKey)
    const sessionId = (await this.#store.members(indexKey)).find((id) => SESSION_ID.test(id) && sessionAuditIdOf(id) === sessionAuditId)
    if (sessionId === undefined) return false
    const live = await this.#store.get(sessionKey(sessionId)) !== undefined
    await this.#endIds([sessionId])
    await this.#store.removeMember(indexKey, sessionId)
    return live
  }

  /** Ends every session of the user `userKey` except `keepSessionId`, on every instance; how many were live. */
  async endUserSessionsExcept (userKey: string, keepSessionId: string): Promise<number> {
    const indexKey = userIndexKeyOf(userKey)
    const others = (await this.#store.members(indexKey)).filter((id) => SESSION_ID.test(id) && id !== keepSessionId)
    if (others.length === 0) return 0
    let live = 0
    for (const sessionId of others) if (await this.#store.get(sessionKey(sessionId)) !== undefined) live++
    await this.#endIds(others)
    for (const sessionId of others) await this.#store.removeMember(indexKey, sessionId)
    return live
  }

  async #endIds (sessionIds: readonly string[]): Promise<void> {
    for (const sessionId of sessionIds) this.#tickets.delete(sessionId)
    await this.#store.delete(sessionIds.map(sessionKey))
    await this.#store.publish(`${INVALIDATION_PREFIX}${sessionIds.join(' ')}`)
  }
}
