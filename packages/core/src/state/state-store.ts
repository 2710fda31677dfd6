/**
 * The state store: everything the app must remember on the server (session records, pending
 * sign-in flows, replay records), behind one small interface with two implementations:
 * - `Embedded` (embedded-store.ts): in-process memory, bounded per kind, TTLs; one instance only.
 * - `Redis` (redis-store.ts): Redis or Valkey, shared by every instance, with invalidations pushed
 *   over pub/sub so each instance may keep a local cache of what it read.
 *
 * Keys are `<kind>:<id>`; the kind decides the embedded store's bounds and its policy when full
 * (docs/scale-out.md). Values are opaque strings: callers seal what they store (the store never
 * sees claims or tokens in the clear).
 */

import { CoreError, type ErrorCode } from '../errors.js'
import { SESSION_INVALIDATION_PREFIX, STATE_KINDS } from './keys.js'

export { SESSION_INVALIDATION_PREFIX, STATE_KINDS }
/** @public */
export type StateKind = typeof STATE_KINDS[number]

/** @public */
export interface StateStoreStatus {
  readonly available: boolean
  /** Failure class when unavailable (`unreachable`, `connecting`...), never a connection string. */
  readonly reason?: string
}

/**
 * What the app asks of a store. Every method rejects with {@link StateStoreUnavailableError} when
 * the store cannot answer (never with the client's own error, whose message may name the host),
 * and `add`/`set` of a kind that refuses when full reject with {@link StateStoreFullError}.
 *
 * @public
 */
export interface StateStore {
  readonly provider: 'Embedded' | 'Redis'
  /** Whether answers, and pushed invalidations, can be trusted right now. */
  status: () => StateStoreStatus
  get: (key: string) => Promise<string | undefined>
  /** Stores `value` for `ttlMs`, replacing any value. */
  set: (key: string, value: string, ttlMs: number) => Promise<void>
  /** Stores `value` only when `key` is absent (or expired): true when stored, false when present. */
  add: (key: string, value: string, ttlMs: number) => Promise<boolean>
  /** Stores `value` for `ttlMs` only when `key` exists: true when stored (never resurrects a deleted key). */
  update: (key: string, value: string, ttlMs: number) => Promise<boolean>
  /**
   * Atomically replaces the value of an existing key, keeping its TTL, and returns the old value;
   * undefined (and nothing stored) when the key is absent. One-time records use it to mark a
   * value used while telling "used before" apart from "never existed".
   */
  replace: (key: string, value: string) => Promise<string | undefined>
  delete: (keys: readonly string[]) => Promise<void>
  /** Adds `member` to the set at `key`; the set lives at least `ttlMs` from now. */
  addMember: (key: string, member: string, ttlMs: number) => Promise<void>
  members: (key: string) => Promise<string[]>
  removeMember: (key: string, member: string) => Promise<void>
  /**
   * Counts one event in the fixed window of `windowMs` at `key` (a rate-limit counter,
   * `rateLimitKey` in keys.ts): the count so far in this window and the milliseconds until it ends. The
   * first event of a window starts it; the counter expires with it. Optional for stores written
   * outside the core; `RateLimits:Enabled` needs it (plugins/rate-limits.ts).
   */
  increment?: (key: string, windowMs: number) => Promise<{ readonly count: number, readonly ttlMs: number }>
  /** Sends an invalidation to every instance, this one included. */
  publish: (message: string) => Promise<void>
  /**
   * `onInvalidate` receives each published message; `onReset` is called whenever messages may
   * have been missed (the subscription was lost and is back), so local caches must be emptied.
   */
  subscribe: (listeners: { onInvalidate: (message: string) => void, onReset: () => void }) => void
  /** Connects (Redis) without waiting; failures show in {@link status} and the log. */
  start: () => void
  close: () => Promise<void>
}

/** The store cannot answer: requests that need it fail closed with 503. */
export class StateStoreUnavailableError extends CoreError {
  readonly code = 'APP_ERR_STATE_UNAVAILABLE' satisfies ErrorCode
  readonly reason: string

  constructor (reason: string, options?: ErrorOptions) {
    super(`The state store is unavailable (${reason}).`, options)
    this.name = 'StateStoreUnavailableError'
    this.reason = reason
  }
}

/**
 * What each kind holds, in words, and the setting that bounds it in the embedded store: the
 * `APP_ERR_STATE_FULL` response names the former, the `state.full` log line both.
 */
export const STATE_KIND_BOUNDS: Readonly<Record<StateKind, { readonly holds: string, readonly setting: string }>> = {
  session: { holds: 'sessions', setting: 'State:Embedded:MaxSessions' },
  index: { holds: 'session index entries', setting: 'State:Embedded:MaxSessions' },
  flow: { holds: 'pending SAML2 sign-outs', setting: 'State:Embedded:MaxPendingSignIns' },
  replay: { holds: 'replay records', setting: 'State:Embedded:MaxReplayRecords' },
  lock: { holds: 'token refreshes in progress', setting: 'State:Embedded:MaxSessions' }
}

/**
 * The store holds as many records of this kind (`bound` entries) or as many characters overall
 * (`bound` characters: State:Embedded:MaxMegabytes) as it may: refuse rather than forget one.
 */
export class StateStoreFullError extends CoreError {
  readonly code = 'APP_ERR_STATE_FULL' satisfies ErrorCode
  readonly kind: StateKind
  readonly bound: 'entries' | 'characters'

  constructor (kind: StateKind, bound: 'entries' | 'characters' = 'entries') {
    super(bound === 'entries' ? `The state store holds the maximum number of ${kind} records.` : 'The state store holds the maximum number of characters.')
    this.name = 'StateStoreFullError'
    this.kind = kind
    this.bound = bound
  }

  /** The setting that bounds what is full. */
  get setting (): string {
    return this.bound === 'entries' ? STATE_KIND_BOUNDS[this.kind].setting : 'State:Embedded:MaxMegabytes'
  }
}

export function kindOf (key: string): StateKind {
  const kind = key.slice(0, key.indexOf(':'))
  if (!(STATE_KINDS as readonly string[]).includes(kind)) throw new RangeError(`State key ${key} has no known kind.`)
  return kind as StateKind
}
