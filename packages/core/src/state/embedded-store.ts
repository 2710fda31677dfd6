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
 * Everything is lost on restart: sessions end (users sign in again), which is the safe direction.
 */
import {
  SESSION_INVALIDATION_PREFIX, StateStoreFullError, kindOf, type StateKind, type StateStore, type StateStoreStatus
} from './state-store.js'
import { SESSION_KEY_PREFIX } from './keys.js'

const SESSION_PREFIX = SESSION_KEY_PREFIX

export interface EmbeddedStoreLimits {
  /** Most records of each kind. */
  readonly maxEntries: Readonly<Record<StateKind, number>>
  /** Most characters of stored values (and set members) over every kind. */
  readonly maxCharacters: number
}

interface Entry {
  value: string | Set<string>
  expiresAt: number
  size: number
}

const SWEEP_INTERVAL_MS = 60_000
const AVAILABLE: StateStoreStatus = { available: true }

export class EmbeddedStateStore implements StateStore {
  readonly provider = 'Embedded'
  readonly #maps = new Map<StateKind, Map<string, Entry>>()
  readonly #limits: EmbeddedStoreLimits
  readonly #now: () => number
  readonly #listeners: Array<{ onInvalidate: (message: string) => void, onReset: () => void }> = []
  /** Index sets by member (a session id): the sets an evicted session must leave. */
  readonly #indexesOf = new Map<string, Set<string>>()
  #characters = 0
  #timer: NodeJS.Timeout | undefined

  constructor (limits: EmbeddedStoreLimits, now: () => number = Date.now) {
    this.#limits = limits
    this.#now = now
  }

  get characters (): number {
    return this.#characters
  }

  status (): StateStoreStatus {
    return AVAILABLE
  }

  start (): void {
    if (this.#timer !== undefined) return
    this.#timer = setInterval(() => { this.sweep() }, SWEEP_INTERVAL_MS)
    this.#timer.unref()
  }

  async close (): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
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
    this.#remove(map, key, entry)
    return undefined
  }

  #remove (map: Map<string, Entry>, key: string, entry: Entry): void {
    map.delete(key)
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
      for (const [key, entry] of map) if (entry.expiresAt <= now) this.#remove(map, key, entry)
    }
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
    if (existing !== undefined) this.#remove(map, key, existing)
    this.#makeRoom(kind, size)
    map.set(key, { value, expiresAt: this.#now() + ttlMs, size })
    this.#characters += size
  }

  async get (key: string): Promise<string | undefined> {
    const value = this.#live(key)?.value
    return typeof value === 'string' ? value : undefined
  }

  async set (key: string, value: string, ttlMs: number): Promise<void> {
    this.#write(key, value, key.length + value.length, ttlMs)
  }

  async add (key: string, value: string, ttlMs: number): Promise<boolean> {
    if (this.#live(key) !== undefined) return false
    this.#write(key, value, key.length + value.length, ttlMs)
    return true
  }

  async update (key: string, value: string, ttlMs: number): Promise<boolean> {
    if (this.#live(key) === undefined) return false
    this.#write(key, value, key.length + value.length, ttlMs)
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
    return old
  }

  async delete (keys: readonly string[]): Promise<void> {
    for (const key of keys) {
      const map = this.#map(kindOf(key))
      const entry = map.get(key)
      if (entry !== undefined) this.#remove(map, key, entry)
    }
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
      return
    }
    this.#write(key, new Set([member]), key.length + member.length, ttlMs)
    this.#rememberMembership(member, key)
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
  }

  #removeMember (key: string, member: string): void {
    const map = this.#map(kindOf(key))
    const entry = map.get(key)
    if (entry === undefined || !(entry.value instanceof Set) || !entry.value.delete(member)) return
    entry.size -= member.length
    this.#characters -= member.length
    this.#forgetMembership(member, key)
    if (entry.value.size === 0) this.#remove(map, key, entry)
  }

  async publish (message: string): Promise<void> {
    for (const listener of this.#listeners) listener.onInvalidate(message)
  }

  subscribe (listeners: { onInvalidate: (message: string) => void, onReset: () => void }): void {
    this.#listeners.push(listeners)
  }
}
