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
 * - Redis behind Sentinel and a Redis Cluster are reached through node-redis's own support
 *   (redis-topology.ts); the store's guarantees are the same in every shape, and each command
 *   also has a deadline of its own, so no shape's rediscovery can hold a request longer.
 * - Errors from the client are never passed on: their text may name the host. They become
 *   {@link StateStoreUnavailableError} with a failure class, and the event hook gets the error
 *   name and code only.
 */
import { randomBytes } from 'node:crypto'
import type { Secret } from '../config/secret.js'
import { StateStoreUnavailableError, type StateStore, type StateStoreStatus } from './state-store.js'
import { invalidationChannel, RESET_MESSAGE_PREFIX } from './keys.js'
import { clusterConnections, sentinelConnections, standaloneConnections, type RedisConnection, type RedisConnectionEvents, type RedisConnections, type RedisTopology } from './redis-topology.js'

export { clientOptions, redisTopologyOf, type RedisConnection, type RedisTopology } from './redis-topology.js'

export interface RedisStoreOptions {
  /** `redis://`, `rediss://` URL or `unix:/path/to/socket`; a secret (it may hold a password). Unused with `topology`. */
  readonly connectionString: Secret
  /** Redis behind Sentinel, or a Redis Cluster, instead of the connection string's single endpoint. */
  readonly topology?: RedisTopology
  /** Prefix of every key and of the channel, so several apps can share one Redis. */
  readonly keyPrefix: string
  /** Connect and command timeout. */
  readonly timeoutMs: number
  /** Connection events for the log: no connection string, no error message. */
  readonly onEvent?: (event: RedisStoreEvent) => void
}

export type RedisStoreEvent =
  /** Both connections up and the invalidation subscription proved: the store is available. */
  | { kind: 'ready' }
  /** One connection is (re)connected. */
  | { kind: 'connected', connection: RedisConnection }
  | { kind: 'error', connection: RedisConnection, errorName: string, errorCode?: string }

const RESET_PREFIX = RESET_MESSAGE_PREFIX
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

function describe (error: unknown): { errorName: string, errorCode?: string } {
  const name = error instanceof Error ? error.name : typeof error
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? { errorName: name, errorCode: code } : { errorName: name }
}

function connectionsFor (options: RedisStoreOptions, events: RedisConnectionEvents): RedisConnections {
  const topology = options.topology
  if (topology?.kind === 'Sentinel') return sentinelConnections(topology, options.timeoutMs, events)
  if (topology?.kind === 'Cluster') return clusterConnections(topology, options.timeoutMs, events)
  return standaloneConnections(options.connectionString.reveal().trim(), options.timeoutMs, events)
}

export class RedisStateStore implements StateStore {
  readonly provider = 'Redis'
  readonly #redis: RedisConnections
  readonly #shape: 'Standalone' | 'Sentinel' | 'Cluster'
  readonly #timeoutMs: number
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
    this.#prefix = options.keyPrefix
    this.#channel = invalidationChannel(options.keyPrefix)
    this.#onEvent = options.onEvent ?? (() => {})
    this.#shape = options.topology?.kind ?? 'Standalone'
    this.#timeoutMs = options.timeoutMs
    this.#redis = connectionsFor(options, {
      connected: (connection) => {
        this.#onEvent({ kind: 'connected', connection })
        if (!this.#subscribed) this.#proveSubscription()
      },
      error: (connection, error) => { this.#failed(connection, error) },
      subscriptionLost: () => { this.#subscribed = false; this.#proveSubscription() }
    })
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
      if (!this.#redis.commandsReady() || !this.#redis.subscriberReady()) return
      const token = randomBytes(12).toString('base64url')
      this.#resetToken = token
      this.#redis.publish(this.#channel, `${RESET_PREFIX}${token}`).catch(() => {
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
      // Sentinel and Cluster clients reconnect a node without an event of their own: a proven
      // subscription says both connections are back (the outage log closes what it opened).
      if (this.#shape !== 'Standalone') for (const connection of ['commands', 'subscriber'] as const) this.#onEvent({ kind: 'connected', connection })
      this.#onEvent({ kind: 'ready' })
      return
    }
    for (const listener of this.#listeners) listener.onInvalidate(message)
  }

  status (): StateStoreStatus {
    if (this.#subscribed && this.#redis.commandsReady() && this.#redis.subscriberReady()) return { available: true }
    return { available: false, reason: this.#closed ? 'closed' : this.#reason === 'ready' ? 'reconnecting' : this.#reason }
  }

  start (): void {
    if (this.#started) return
    this.#started = true
    this.#redis.start(this.#channel, (message) => { this.#message(message) })
  }

  async close (): Promise<void> {
    this.#closed = true
    this.#subscribed = false
    clearInterval(this.#proofTimer)
    this.#proofTimer = undefined
    await this.#redis.close()
  }

  async #run<T>(command: () => Promise<T>): Promise<T> {
    if (!this.#redis.commandsReady()) throw new StateStoreUnavailableError(this.status().reason ?? 'unreachable')
    if (this.#shape === 'Standalone') return await this.#mapped(command)
    let timer: NodeJS.Timeout | undefined
    // The client's own timeout covers a command on a socket (all a single endpoint needs); this
    // one also covers a Sentinel or Cluster client that holds it while it rediscovers the topology.
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => { reject(new StateStoreUnavailableError('timeout')) }, this.#timeoutMs)
    })
    try {
      return await this.#mapped(async () => await Promise.race([command(), deadline]))
    } finally {
      clearTimeout(timer)
    }
  }

  /** The command's result, or its failure as {@link StateStoreUnavailableError} with a failure class. */
  async #mapped<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command()
    } catch (error) {
      if (error instanceof StateStoreUnavailableError) throw error
      const details = describe(error)
      throw new StateStoreUnavailableError(details.errorName === 'TimeoutError' ? 'timeout' : 'command_failed', { cause: error })
    }
  }

  async get (key: string): Promise<string | undefined> {
    const value = await this.#run(async () => await this.#redis.commands.get(this.#prefix + key))
    return value ?? undefined
  }

  async set (key: string, value: string, ttlMs: number): Promise<void> {
    await this.#run(async () => await this.#redis.commands.set(this.#prefix + key, value, { expiration: { type: 'PX', value: Math.max(1, Math.ceil(ttlMs)) } }))
  }

  async add (key: string, value: string, ttlMs: number): Promise<boolean> {
    const reply = await this.#run(async () => await this.#redis.commands.set(this.#prefix + key, value, {
      expiration: { type: 'PX', value: Math.max(1, Math.ceil(ttlMs)) },
      condition: 'NX'
    }))
    return reply === 'OK'
  }

  async update (key: string, value: string, ttlMs: number): Promise<boolean> {
    const reply = await this.#run(async () => await this.#redis.commands.set(this.#prefix + key, value, {
      expiration: { type: 'PX', value: Math.max(1, Math.ceil(ttlMs)) },
      condition: 'XX'
    }))
    return reply === 'OK'
  }

  async replace (key: string, value: string): Promise<string | undefined> {
    const old = await this.#run(async () => await this.#redis.commands.set(this.#prefix + key, value, { condition: 'XX', expiration: 'KEEPTTL', GET: true }))
    return typeof old === 'string' ? old : undefined
  }

  async delete (keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return
    await this.#run(async () => await this.#redis.commands.del(keys.map((key) => this.#prefix + key)))
  }

  async addMember (key: string, member: string, ttlMs: number): Promise<void> {
    const name = this.#prefix + key
    await this.#run(async () => await this.#redis.addMember(name, member, Math.max(1, Math.ceil(ttlMs))))
  }

  async members (key: string): Promise<string[]> {
    return await this.#run(async () => await this.#redis.commands.sMembers(this.#prefix + key))
  }

  async removeMember (key: string, member: string): Promise<void> {
    await this.#run(async () => await this.#redis.commands.sRem(this.#prefix + key, member))
  }

  async increment (key: string, windowMs: number): Promise<{ count: number, ttlMs: number }> {
    const reply = await this.#run(async () => await this.#redis.commands.eval(INCREMENT_SCRIPT, { keys: [this.#prefix + key], arguments: [String(Math.max(1, Math.ceil(windowMs)))] }))
    const [count, ttlMs] = Array.isArray(reply) ? reply.map(Number) : []
    if (count === undefined || ttlMs === undefined || !Number.isFinite(count) || !Number.isFinite(ttlMs)) throw new StateStoreUnavailableError('command_failed')
    return { count, ttlMs: Math.max(0, ttlMs) }
  }

  async publish (message: string): Promise<void> {
    await this.#run(async () => await this.#redis.publish(this.#channel, message))
  }

  subscribe (listeners: { onInvalidate: (message: string) => void, onReset: () => void }): void {
    this.#listeners.push(listeners)
  }
}
