/**
 * The Redis state store (Redis or Valkey): shared by every instance, through node-redis
 * (`@redis/client`, maintained by Redis; why this client: docs/scale-out.md).
 *
 * - Two connections: one for commands, one subscribed to the invalidation channel.
 * - Commands never queue while disconnected (`disableOfflineQueue`) and time out after the
 *   configured milliseconds, so a lost Redis turns into a prompt 503, not a hanging request.
 * - Both connections reconnect by themselves with capped backoff.
 * - Invalidations: after the subscriber (re)connects, the store publishes a token of its own and
 *   reports itself available only once that token comes back on the channel. Then every message
 *   published after that point is known to arrive, and `onReset` tells caches to drop what they
 *   hold (messages sent while the subscription was down are lost).
 * - Errors from the client are never passed on: their text may name the host. They become
 *   {@link StateStoreUnavailableError} with a failure class, and the event hook gets the error
 *   name and code only.
 */
import { randomBytes } from 'node:crypto'
import { createClient, type RedisClientOptions, type RedisClientType } from '@redis/client'
import type { Secret } from '../config/secret.js'
import { StateStoreUnavailableError, type StateStore, type StateStoreStatus } from './state-store.js'
import { invalidationChannel, RESET_MESSAGE_PREFIX } from './keys.js'

export interface RedisStoreOptions {
  /** `redis://`, `rediss://` URL or `unix:/path/to/socket`; a secret (it may hold a password). */
  readonly connectionString: Secret
  /** Prefix of every key and of the channel, so several apps can share one Redis. */
  readonly keyPrefix: string
  /** Connect and command timeout. */
  readonly timeoutMs: number
  /** Connection events for the log: no connection string, no error message. */
  readonly onEvent?: (event: RedisStoreEvent) => void
}

export type RedisConnection = 'commands' | 'subscriber'

export type RedisStoreEvent =
  /** Both connections up and the invalidation subscription proved: the store is available. */
  | { kind: 'ready' }
  /** One connection is (re)connected. */
  | { kind: 'connected', connection: RedisConnection }
  | { kind: 'error', connection: RedisConnection, errorName: string, errorCode?: string }

const RESET_PREFIX = RESET_MESSAGE_PREFIX
const MAX_RECONNECT_DELAY_MS = 5_000
const PROOF_INTERVAL_MS = 100
/**
 * One rate-limit event, atomically (one key, so valid on a cluster too): the first INCR of a
 * window sets its expiry; a counter found without one (never expected) gets it too.
 */
const INCREMENT_SCRIPT = `local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if count == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}`

/** node-redis options for a connection string, which was validated at startup (config/rules.ts). */
export function clientOptions (connectionString: string, timeoutMs: number): RedisClientOptions {
  const reconnectStrategy = (retries: number): number => Math.min(100 * 2 ** Math.min(retries, 6), MAX_RECONNECT_DELAY_MS) + Math.floor(Math.random() * 100)
  const common = { disableOfflineQueue: true, commandOptions: { timeout: timeoutMs } }
  if (connectionString.startsWith('unix:')) {
    const path = connectionString.slice('unix:'.length).replace(/^\/\/(?=\/)/, '')
    return { ...common, socket: { path, connectTimeout: timeoutMs, reconnectStrategy } }
  }
  return { ...common, url: connectionString, socket: { connectTimeout: timeoutMs, reconnectStrategy } }
}

function describe (error: unknown): { errorName: string, errorCode?: string } {
  const name = error instanceof Error ? error.name : typeof error
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? { errorName: name, errorCode: code } : { errorName: name }
}

export class RedisStateStore implements StateStore {
  readonly provider = 'Redis'
  readonly #commands: RedisClientType
  readonly #subscriber: RedisClientType
  readonly #prefix: string
  readonly #channel: string
  readonly #onEvent: (event: RedisStoreEvent) => void
  readonly #listeners: Array<{ onInvalidate: (message: string) => void, onReset: () => void }> = []
  #subscribed = false
  #resetToken: string | undefined
  #reason = 'connecting'
  #started = false
  #proofTimer: NodeJS.Timeout | undefined
  #closed = false

  constructor (options: RedisStoreOptions) {
    const clientSettings = clientOptions(options.connectionString.reveal().trim(), options.timeoutMs)
    this.#commands = createClient(clientSettings) as RedisClientType
    this.#subscriber = this.#commands.duplicate() as RedisClientType
    this.#prefix = options.keyPrefix
    this.#channel = invalidationChannel(options.keyPrefix)
    this.#onEvent = options.onEvent ?? (() => {})

    this.#commands.on('error', (error: unknown) => { this.#failed('commands', error) })
    this.#subscriber.on('error', (error: unknown) => { this.#failed('subscriber', error) })
    this.#subscriber.on('end', () => { this.#subscribed = false; this.#proveSubscription() })
    this.#subscriber.on('reconnecting', () => { this.#subscribed = false; this.#proveSubscription() })
    // Each (re)connection of either side re-proves the subscription before caches are trusted.
    this.#subscriber.on('ready', () => { this.#subscribed = false; this.#onEvent({ kind: 'connected', connection: 'subscriber' }); this.#proveSubscription() })
    this.#commands.on('ready', () => { this.#onEvent({ kind: 'connected', connection: 'commands' }); if (!this.#subscribed) this.#proveSubscription() })
  }

  #failed (connection: RedisConnection, error: unknown): void {
    if (connection === 'subscriber') this.#subscribed = false
    const details = describe(error)
    this.#reason = details.errorCode === 'ECONNREFUSED' || details.errorCode === 'ENOENT' || details.errorCode === 'ENOTFOUND' ? 'unreachable' : 'connection_failed'
    this.#onEvent({ kind: 'error', connection, ...details })
  }

  /**
   * Publishes a token every {@link PROOF_INTERVAL_MS} until it comes back on the channel: only then
   * is the subscription known to be live (a resubscription after a reconnect may land after the
   * 'ready' event).
   */
  #proveSubscription (): void {
    if (this.#closed || this.#proofTimer !== undefined) return
    const attempt = (): void => {
      if (this.#closed || this.#subscribed) {
        clearInterval(this.#proofTimer)
        this.#proofTimer = undefined
        return
      }
      if (!this.#commands.isReady || !this.#subscriber.isReady) return
      const token = randomBytes(12).toString('base64url')
      this.#resetToken = token
      this.#commands.publish(this.#channel, `${RESET_PREFIX}${token}`).catch(() => {
        // The commands connection dropped in between; the next attempt tries again.
      })
    }
    this.#proofTimer = setInterval(attempt, PROOF_INTERVAL_MS)
    this.#proofTimer.unref()
    attempt()
  }

  #message (message: string): void {
    if (message.startsWith(RESET_PREFIX)) {
      if (message.slice(RESET_PREFIX.length) !== this.#resetToken || this.#subscribed) return
      this.#subscribed = true
      this.#reason = 'ready'
      for (const listener of this.#listeners) listener.onReset()
      this.#onEvent({ kind: 'ready' })
      return
    }
    for (const listener of this.#listeners) listener.onInvalidate(message)
  }

  status (): StateStoreStatus {
    if (this.#subscribed && this.#commands.isReady && this.#subscriber.isReady) return { available: true }
    return { available: false, reason: this.#closed ? 'closed' : this.#reason === 'ready' ? 'reconnecting' : this.#reason }
  }

  start (): void {
    if (this.#started) return
    this.#started = true
    // Neither connect() is awaited: startup never waits for Redis; readiness reports it instead.
    // A first connection that fails keeps retrying under the reconnect strategy.
    this.#commands.connect().catch((error: unknown) => { this.#failed('commands', error) })
    this.#subscriber.connect()
      .then(async () => {
        await this.#subscriber.subscribe(this.#channel, (message) => { this.#message(message) })
        this.#proveSubscription()
      })
      .catch((error: unknown) => { this.#failed('subscriber', error) })
  }

  async close (): Promise<void> {
    this.#closed = true
    this.#subscribed = false
    clearInterval(this.#proofTimer)
    this.#proofTimer = undefined
    await Promise.allSettled([this.#commands, this.#subscriber].map(async (client) => { if (client.isOpen) await client.close() }))
  }

  async #run<T>(command: () => Promise<T>): Promise<T> {
    if (!this.#commands.isReady) throw new StateStoreUnavailableError(this.status().reason ?? 'unreachable')
    try {
      return await command()
    } catch (error) {
      const details = describe(error)
      throw new StateStoreUnavailableError(details.errorName === 'TimeoutError' ? 'timeout' : 'command_failed', { cause: error })
    }
  }

  async get (key: string): Promise<string | undefined> {
    const value = await this.#run(async () => await this.#commands.get(this.#prefix + key))
    return value ?? undefined
  }

  async set (key: string, value: string, ttlMs: number): Promise<void> {
    await this.#run(async () => await this.#commands.set(this.#prefix + key, value, { expiration: { type: 'PX', value: Math.max(1, Math.ceil(ttlMs)) } }))
  }

  async add (key: string, value: string, ttlMs: number): Promise<boolean> {
    const reply = await this.#run(async () => await this.#commands.set(this.#prefix + key, value, {
      expiration: { type: 'PX', value: Math.max(1, Math.ceil(ttlMs)) },
      condition: 'NX'
    }))
    return reply === 'OK'
  }

  async update (key: string, value: string, ttlMs: number): Promise<boolean> {
    const reply = await this.#run(async () => await this.#commands.set(this.#prefix + key, value, {
      expiration: { type: 'PX', value: Math.max(1, Math.ceil(ttlMs)) },
      condition: 'XX'
    }))
    return reply === 'OK'
  }

  async replace (key: string, value: string): Promise<string | undefined> {
    const old = await this.#run(async () => await this.#commands.set(this.#prefix + key, value, { condition: 'XX', expiration: 'KEEPTTL', GET: true }))
    return typeof old === 'string' ? old : undefined
  }

  async delete (keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return
    await this.#run(async () => await this.#commands.del(keys.map((key) => this.#prefix + key)))
  }

  async addMember (key: string, member: string, ttlMs: number): Promise<void> {
    const name = this.#prefix + key
    await this.#run(async () => await this.#commands.multi().sAdd(name, member).pExpire(name, Math.max(1, Math.ceil(ttlMs))).exec())
  }

  async members (key: string): Promise<string[]> {
    return await this.#run(async () => await this.#commands.sMembers(this.#prefix + key))
  }

  async removeMember (key: string, member: string): Promise<void> {
    await this.#run(async () => await this.#commands.sRem(this.#prefix + key, member))
  }

  async increment (key: string, windowMs: number): Promise<{ count: number, ttlMs: number }> {
    const reply = await this.#run(async () => await this.#commands.eval(INCREMENT_SCRIPT, { keys: [this.#prefix + key], arguments: [String(Math.max(1, Math.ceil(windowMs)))] }))
    const [count, ttlMs] = Array.isArray(reply) ? reply.map(Number) : []
    if (count === undefined || ttlMs === undefined || !Number.isFinite(count) || !Number.isFinite(ttlMs)) throw new StateStoreUnavailableError('command_failed')
    return { count, ttlMs: Math.max(0, ttlMs) }
  }

  async publish (message: string): Promise<void> {
    await this.#run(async () => await this.#commands.publish(this.#channel, message))
  }

  subscribe (listeners: { onInvalidate: (message: string) => void, onReset: () => void }): void {
    this.#listeners.push(listeners)
  }
}
