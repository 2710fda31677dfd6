/**
 * The embedded state store: in-process memory for a single instance, no service to run.
 *
 * Bounded per kind of record, and by characters of value overall, with a policy per kind when
 * full (after expired records are swept):
 * - `session`: the least recently written session goes (that user signs in again: fails closed).
 *   An evicted session takes its index entries with it and is announced as an invalidation, so no
 *   cache keeps serving it;
 * - `index`: sessions are evicted, oldest first, until the index has room (an index entry is only
 *   ever needed for a live session); refused only when no session is left to evict;
 * - `flow`, `replay`, `lock`: the write is refused with {@link StateStoreFullError}, because
 *   forgetting an unexpired replay record would let a replay through. The app answers "try again"
 *   (503). Anonymous requests write none of these (docs/security.md, "Resource exhaustion").
 *
 * With a {@link EmbeddedStoreJournal} (state/sqlite-journal.ts, `State:Embedded:Persist`) every
 * change is also written to disk, and a write resolves only once it is committed there; reads are
 * still served from memory, so the hot path never touches the disk. Without one, everything is
 * lost on restart: sessions end (users sign in again), which is the safe direction.
 */
import {
  SESSION_INVALIDATION_PREFIX, StateStoreFullError, kindOf, type StateKind, type StateStore, type StateStoreStatus
} from './state-store.js'
import { SESSION_KEY_PREFIX, STATE_KINDS } from './keys.js'

const SESSION_PREFIX = SESSION_KEY_PREFIX

export interface EmbeddedStoreLimits {
  /** Most records of each kind. */
  readonly maxEntries: Readonly<Record<StateKind, number>>
  /** Most characters of stored values (and set members) over every kind. */
  readonly maxCharacters: number
}

/**
 * Where an embedded store writes its changes through (state/sqlite-journal.ts). The store calls
 * these as its maps change, in order; expired records need no call (the journal sweeps them).
 */
export interface EmbeddedStoreJournal {
  /** A string record created or replaced (a newer write of the key: last in eviction order). */
  put: (key: string, kind: StateKind, value: string, expiresAt: number) => void
  /** The value of an existing string record swapped, its expiry and order kept. */
  replaceValue: (key: string, value: string) => void
  /** A member added to the set at `key`, which lives until `expiresAt` (every member with it). */
  addMember: (key: string, kind: StateKind, member: string, expiresAt: number) => void
  removeMember: (key: string, member: string) => void
  /** A record (string or set) gone. */
  delete: (key: string) => void
  /** Records expired at `now` may be removed. */
  sweep: (now: number) => void
  /** Resolves once every change so far is committed; rejects with {@link StateStoreUnavailableError} when it cannot be. */
  committed: () => Promise<void>
  status: () => StateStoreStatus
  close: () => Promise<void>
}

/** A record read back from a journal, in write order. */
export interface JournalRecord {
  readonly key: string
  readonly value: string | readonly string[]
  readonly expiresAt: number
}

interface Entry {
  value: string | Set<string>
  expiresAt: number
  size: number
}

const SWEEP_INTERVAL_MS = 60_000
/**
 * Most rate-limit counters held at once (about 150 bytes each): when full, the counter whose
 * window started first goes, so a flood from many addresses costs bounded memory and at worst
 * forgets an old counter (that client starts a fresh window).
 */
export const MAX_RATE_COUNTERS = 100_000
const AVAILABLE: StateStoreStatus = { available: true }

export class EmbeddedStateStore implements StateStore {
  readonly provider = 'Embedded'
  readonly #maps = new Map<StateKind, Map<string, Entry>>()
  readonly #limits: EmbeddedStoreLimits
  readonly #now: () => number
  readonly #listeners: Array<{ onInvalidate: (message: string) => void, onReset: () => void }> = []
  /** Index sets by member (a session id): the sets an evicted session must leave. */
  readonly #indexesOf = new Map<string, Set<string>>()
  readonly #journal: EmbeddedStoreJournal | undefined
  #characters = 0
  #timer: NodeJS.Timeout | undefined
  /** Rate-limit counters: memory only (never journaled), in window-start order. */
  readonly #counters = new Map<string, { count: number, endsAt: number }>()

  constructor (limits: EmbeddedStoreLimits, now: () => number = Date.now, journal?: EmbeddedStoreJournal) {
    this.#limits = limits
    this.#now = now
    this.#journal = journal
  }

  /** Whether changes are written through to disk. */
  get persisted (): boolean {
    return this.#journal !== undefined
  }

  /**
   * Puts records read back from the journal into memory, in their write order (the eviction
   * order), without a bound check: a record stored before a bound was lowered is never forgotten
   * on load; expired ones are skipped. Counts and index bookkeeping are as if each were written.
   */
  load (records: Iterable<JournalRecord>): void {
    const now = this.#now()
    for (const record of records) {
      if (record.expiresAt <= now) continue
      const map = this.#map(kindOf(record.key))
      if (typeof record.value === 'string') {
        const size = record.key.length + record.value.length
        map.set(record.key, { value: record.value, expiresAt: record.expiresAt, size })
        this.#characters += size
        continue
      }
      const members = new Set(record.value)
      let size = record.key.length
      for (const member of members) {
        size += member.length
        this.#rememberMembership(member, record.key)
      }
      map.set(record.key, { value: members, expiresAt: record.expiresAt, size })
      this.#characters += size
    }
  }

  /** Records of each kind held in memory (expired ones not yet swept included). */
  counts (): Record<StateKind, number> {
    const counts = {} as Record<StateKind, number>
    for (const kind of STATE_KINDS) counts[kind] = this.#maps.get(kind)?.size ?? 0
    return counts
  }

  /** Waits for the journal (if any) to commit what the caller just changed. */
  async #committed (): Promise<void> {
    if (this.#journal !== undefined) await this.#journal.committed()
  }

  get characters (): number {
    return this.#characters
  }

  status (): StateStoreStatus {
    return this.#journal?.status() ?? AVAILABLE
  }

  start (): void {
    if (this.#timer !== undefined) return
    this.#timer = setInterval(() => { this.sweep() }, SWEEP_INTERVAL_MS)
    this.#timer.unref()
  }

  async close (): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
    await this.#journal?.close()
  }

  #map (kind: StateKind): Map<string, Entry> {
    let map = this.#maps.get(kind)
    if (map === undefined) this.#maps.set(kind, map = new Map())
    return map
  }

  /** The live entry, or undefined (an expired one is removed on the way). */
  #live (key: string): Entry | undefined {
    const map = this.#map(kindOf(key))
    const entry = map.get(key)
    if (entry === undefined) return undefined
    if (entry.expiresAt > this.#now()) return entry
    this.#remove(map, key, entry, true)
    return undefined
  }

  /** `expired`: the journal sweeps it by itself (so a read never writes). */
  #remove (map: Map<string, Entry>, key: string, entry: Entry, expired = false): void {
    map.delete(key)
    if (!expired) this.#journal?.delete(key)
    this.#characters -= entry.size
    if (entry.value instanceof Set) for (const member of entry.value) this.#forgetMembership(member, key)
  }

  #forgetMembership (member: string, key: string): void {
    const keys = this.#indexesOf.get(member)
    if (keys === undefined) return
    keys.delete(key)
    if (keys.size === 0) this.#indexesOf.delete(member)
  }

  /** Evicts the least recently written session, with its index entries; false when there is none. */
  #evictOldestSession (): boolean {
    const sessions = this.#map('session')
    const oldest = sessions.entries().next().value
    if (oldest === undefined) return false
    const [key, entry] = oldest
    this.#remove(sessions, key, entry)
    const sessionId = key.slice(SESSION_PREFIX.length)
    for (const indexKey of [...this.#indexesOf.get(sessionId) ?? []]) this.#removeMember(indexKey, sessionId)
    for (const listener of this.#listeners) listener.onInvalidate(`${SESSION_INVALIDATION_PREFIX}${sessionId}`)
    return true
  }

  /** Removes every expired record. */
  sweep (): void {
    const now = this.#now()
    for (const map of this.#maps.values()) {
      for (const [key, entry] of map) if (entry.expiresAt <= now) this.#remove(map, key, entry, true)
    }
    this.#journal?.sweep(now)
  }

  /** Makes room for one more record of `kind` with `size` characters, or throws. */
  #makeRoom (kind: StateKind, size: number): void {
    const map = this.#map(kind)
    const fits = (): boolean => map.size < this.#limits.maxEntries[kind] && this.#characters + size <= this.#limits.maxCharacters
    if (fits()) return
    this.sweep()
    if (kind === 'session' || kind === 'index') {
      while (!fits() && this.#evictOldestSession()) { /* one session (and its index entries) at a time */ }
    }
    if (!fits()) throw new StateStoreFullError(kind, map.size < this.#limits.maxEntries[kind] ? 'characters' : 'entries')
  }

  #write (key: string, value: string | Set<string>, size: number, ttlMs: number): void {
    const kind = kindOf(key)
    const map = this.#map(kind)
    const existing = map.get(key)
    // One journal deletion for whatever the key held, expired rows not yet swept included.
    if (existing !== undefined) this.#remove(map, key, existing, true)
    this.#journal?.delete(key)
    this.#makeRoom(kind, size)
    const expiresAt = this.#now() + ttlMs
    map.set(key, { value, expiresAt, size })
    this.#characters += size
    if (typeof value === 'string') this.#journal?.put(key, kind, value, expiresAt)
    else for (const member of value) this.#journal?.addMember(key, kind, member, expiresAt)
  }

  async get (key: string): Promise<string | undefined> {
    const value = this.#live(key)?.value
    return typeof value === 'string' ? value : undefined
  }

  async set (key: string, value: string, ttlMs: number): Promise<void> {
    this.#write(key, value, key.length + value.length, ttlMs)
    await this.#committed()
  }

  async add (key: string, value: string, ttlMs: number): Promise<boolean> {
    if (this.#live(key) !== undefined) return false
    this.#write(key, value, key.length + value.length, ttlMs)
    await this.#committed()
    return true
  }

  async update (key: string, value: string, ttlMs: number): Promise<boolean> {
    if (this.#live(key) === undefined) return false
    this.#write(key, value, key.length + value.length, ttlMs)
    await this.#committed()
    return true
  }

  async replace (key: string, value: string): Promise<string | undefined> {
    const entry = this.#live(key)
    if (entry === undefined || typeof entry.value !== 'string') return undefined
    const old = entry.value
    const size = key.length + value.length
    this.#characters += size - entry.size
    entry.value = value
    entry.size = size
    this.#journal?.replaceValue(key, value)
    await this.#committed()
    return old
  }

  async delete (keys: readonly string[]): Promise<void> {
    for (const key of keys) {
      const map = this.#map(kindOf(key))
      const entry = map.get(key)
      if (entry !== undefined) this.#remove(map, key, entry)
    }
    await this.#committed()
  }

  async addMember (key: string, member: string, ttlMs: number): Promise<void> {
    const entry = this.#live(key)
    const expiresAt = this.#now() + ttlMs
    if (entry !== undefined && entry.value instanceof Set) {
      if (!entry.value.has(member)) {
        entry.value.add(member)
        entry.size += member.length
        this.#characters += member.length
        this.#rememberMembership(member, key)
      }
      entry.expiresAt = Math.max(entry.expiresAt, expiresAt)
      this.#journal?.addMember(key, kindOf(key), member, entry.expiresAt)
      await this.#committed()
      return
    }
    this.#write(key, new Set([member]), key.length + member.length, ttlMs)
    this.#rememberMembership(member, key)
    await this.#committed()
  }

  #rememberMembership (member: string, key: string): void {
    let keys = this.#indexesOf.get(member)
    if (keys === undefined) this.#indexesOf.set(member, keys = new Set())
    keys.add(key)
  }

  async members (key: string): Promise<string[]> {
    const value = this.#live(key)?.value
    return value instanceof Set ? [...value] : []
  }

  async removeMember (key: string, member: string): Promise<void> {
    this.#removeMember(key, member)
    await this.#committed()
  }

  #removeMember (key: string, member: string): void {
    const map = this.#map(kindOf(key))
    const entry = map.get(key)
    if (entry === undefined || !(entry.value instanceof Set) || !entry.value.delete(member)) return
    entry.size -= member.length
    this.#characters -= member.length
    this.#forgetMembership(member, key)
    this.#journal?.removeMember(key, member)
    if (entry.value.size === 0) this.#remove(map, key, entry)
  }

  async increment (key: string, windowMs: number): Promise<{ count: number, ttlMs: number }> {
    const now = this.#now()
    let counter = this.#counters.get(key)
    if (counter === undefined || counter.endsAt <= now) {
      this.#counters.delete(key)
      // Full: the counter whose window started first goes (Map order is window-start order).
      const oldest = this.#counters.size >= MAX_RATE_COUNTERS ? this.#counters.keys().next().value : undefined
      if (oldest !== undefined) this.#counters.delete(oldest)
      counter = { count: 0, endsAt: now + windowMs }
      this.#counters.set(key, counter)
    }
    counter.count++
    return { count: counter.count, ttlMs: counter.endsAt - now }
  }

  /** Rate-limit counters held (expired ones not yet replaced included). */
  get rateCounters (): number {
    return this.#counters.size
  }

  async publish (message: string): Promise<void> {
    for (const listener of this.#listeners) listener.onInvalidate(message)
  }

  subscribe (listeners: { onInvalidate: (message: string) => void, onReset: () => void }): void {
    this.#listeners.push(listeners)
  }
}
