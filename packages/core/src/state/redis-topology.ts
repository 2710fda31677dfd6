/**
 * The connections of the Redis store for each shape Redis is run in, all through node-redis's own
 * support (no hand-written failover or slot routing):
 *
 * - **Standalone** (`createClient`): one `redis://`, `rediss://` or `unix:` endpoint; a command
 *   connection and a duplicate subscribed to the invalidation channel.
 * - **Sentinel** (`createSentinel`): the client asks the sentinels for the primary, listens to
 *   their `+switch-master`, and moves its command connection to the new primary after a failover;
 *   the subscriber (classic pub/sub on the primary) follows the primary that client names.
 * - **Cluster** (`createCluster`): keys are routed by slot (a multi-key DEL is split per slot by
 *   the client's request policy), and invalidations use **sharded pub/sub** (SPUBLISH/SSUBSCRIBE,
 *   Redis 7.0+): a message stays within the shard that owns the channel's slot instead of being
 *   broadcast to every node over the cluster bus, and the client moves the subscription when that
 *   slot moves or its primary fails over (docs/scale-out.md, "Sentinel and Cluster").
 *
 * Each shape reports the same events to the store: a connection (re)connected, an error (the
 * store keeps only its name and code), and "the subscription may have missed messages", after
 * which the store proves the subscription again before it trusts any cache (redis-store.ts).
 */
import { createClient, createCluster, createSentinel, type RedisClientOptions, type RedisClientType, type SetOptions } from '@redis/client'
import type { Secret } from '../config/secret.js'
import { parseRedisNode, type RedisNodeAddress } from './redis-node.js'

export type RedisConnection = 'commands' | 'subscriber'

/** Sentinel or Cluster; the standalone shape is given by a connection string instead. */
export type RedisTopology =
  | {
    readonly kind: 'Sentinel'
    readonly masterName: string
    readonly nodes: readonly RedisNodeAddress[]
    readonly username: string
    readonly password: Secret
    readonly sentinelUsername: string
    readonly sentinelPassword: Secret
    readonly tls: boolean
  }
  | {
    readonly kind: 'Cluster'
    readonly nodes: readonly RedisNodeAddress[]
    readonly username: string
    readonly password: Secret
    readonly tls: boolean
  }

export interface RedisConnectionEvents {
  readonly connected: (connection: RedisConnection) => void
  readonly error: (connection: RedisConnection, error: unknown) => void
  /** The subscription may have missed messages (lost, reconnected or moved): prove it again. */
  readonly subscriptionLost: () => void
}

/** The commands the store sends; every shape's client has them with these signatures. */
export interface RedisCommands {
  get: (key: string) => Promise<string | null>
  set: (key: string, value: string, options?: SetOptions) => Promise<string | null>
  del: (keys: string[]) => Promise<number>
  sMembers: (key: string) => Promise<string[]>
  sRem: (key: string, member: string) => Promise<number>
  /** A script over its keys (the rate-limit counter: one key, valid on a Cluster). */
  eval: (script: string, options: { keys: string[], arguments: string[] }) => Promise<unknown>
}

export interface RedisConnections {
  readonly commands: RedisCommands
  /** Commands can be sent now (never queued while they cannot). */
  readonly commandsReady: () => boolean
  /** The subscriber is connected (whether its subscription is live is for the store to prove). */
  readonly subscriberReady: () => boolean
  /** SADD and PEXPIRE of one set, in one transaction. */
  readonly addMember: (key: string, member: string, ttlMs: number) => Promise<unknown>
  readonly publish: (channel: string, message: string) => Promise<unknown>
  /** Connects and subscribes without waiting; failures go to the events, and it keeps trying. */
  readonly start: (channel: string, onMessage: (message: string) => void) => void
  readonly close: () => Promise<void>
}

const MAX_RECONNECT_DELAY_MS = 5_000

/**
 * PUBLISH, resolved once the subscribers' copies have been written: Redis answers the publisher
 * before it writes the copies it queued in the same pass (its pending writes go last in, first
 * out), so the answer alone can overtake them and another instance could still serve a request
 * from the cache the message was to clear. The answer to a second command on the same node comes
 * from a later pass, after those writes: the caller's next request then finds the message at every
 * instance (a revocation holds "from the next request", docs/scale-out.md).
 */
async function publishWritten (publish: () => Promise<unknown>, afterwards: () => Promise<unknown>): Promise<unknown> {
  const receivers = await publish()
  await afterwards()
  return receivers
}

/** Capped exponential backoff with jitter, for every connection and for a first connect that failed. */
export const reconnectDelay = (retries: number): number => Math.min(100 * 2 ** Math.min(retries, 6), MAX_RECONNECT_DELAY_MS) + Math.floor(Math.random() * 100)

/** node-redis options for a connection string, which was validated at startup (settings-rules.ts). */
export function clientOptions (connectionString: string, timeoutMs: number): RedisClientOptions {
  const common = { disableOfflineQueue: true, commandOptions: { timeout: timeoutMs } }
  if (connectionString.startsWith('unix:')) {
    const path = connectionString.slice('unix:'.length).replace(/^\/\/(?=\/)/, '')
    return { ...common, socket: { path, connectTimeout: timeoutMs, reconnectStrategy: reconnectDelay } }
  }
  return { ...common, url: connectionString, socket: { connectTimeout: timeoutMs, reconnectStrategy: reconnectDelay } }
}

const credentials = (username: string, password: Secret): { username?: string, password?: string } => ({
  ...(username.trim() === '' ? {} : { username: username.trim() }),
  ...(password.isEmpty || password.reveal() === '' ? {} : { password: password.reveal() })
})

/**
 * A cluster node's reconnect delay is capped at one second: its reconnection attempts are what make
 * the client ask the cluster for its topology again, so they bound how soon it finds a promoted replica.
 */
const clusterReconnectDelay = (retries: number): number => Math.min(reconnectDelay(retries), 1000)

/** The TCP socket options of a Sentinel or Cluster node. */
const nodeSocket = (timeoutMs: number, tls: boolean, reconnect: false | ((retries: number) => number)) => ({
  connectTimeout: timeoutMs,
  ...(reconnect === false ? {} : { reconnectStrategy: reconnect }),
  ...(tls ? { tls: true as const } : {})
})

/** Retries a first connect that failed (the client gave up on it), with the same backoff. */
function connectUntilClosed (connect: () => Promise<unknown>, isClosed: () => boolean, onError: (error: unknown) => void): void {
  let attempt = 0
  const run = (): void => {
    if (isClosed()) return
    connect().catch((error: unknown) => {
      onError(error)
      if (isClosed()) return
      setTimeout(run, reconnectDelay(attempt++)).unref()
    })
  }
  run()
}

export function standaloneConnections (connectionString: string, timeoutMs: number, events: RedisConnectionEvents): RedisConnections {
  const commands = createClient(clientOptions(connectionString, timeoutMs)) as RedisClientType
  const subscriber = commands.duplicate() as RedisClientType
  commands.on('error', (error: unknown) => { events.error('commands', error) })
  subscriber.on('error', (error: unknown) => { events.error('subscriber', error) })
  subscriber.on('end', events.subscriptionLost)
  subscriber.on('reconnecting', events.subscriptionLost)
  // Each (re)connection of either side re-proves the subscription before caches are trusted.
  subscriber.on('ready', () => { events.connected('subscriber'); events.subscriptionLost() })
  commands.on('ready', () => { events.connected('commands') })
  return {
    commands,
    commandsReady: () => commands.isReady,
    subscriberReady: () => subscriber.isReady,
    addMember: async (key, member, ttlMs) => await commands.multi().sAdd(key, member).pExpire(key, ttlMs).exec(),
    publish: async (channel, message) => await publishWritten(async () => await commands.publish(channel, message), async () => await commands.ping()),
    start: (channel, onMessage) => {
      // Neither connect() is awaited: startup never waits for Redis; readiness reports it instead.
      // A first connection that fails keeps retrying under the reconnect strategy.
      commands.connect().catch((error: unknown) => { events.error('commands', error) })
      subscriber.connect()
        .then(async () => {
          await subscriber.subscribe(channel, onMessage)
          events.subscriptionLost()
        })
        .catch((error: unknown) => { events.error('subscriber', error) })
    },
    close: async () => {
      await Promise.allSettled([commands, subscriber].map(async (client) => { if (client.isOpen) await client.close() }))
    }
  }
}

/**
 * Redis behind Sentinel: a node-redis sentinel client for the commands (it asks the sentinels for
 * the primary, listens to their `+switch-master` and moves to the promoted replica), and a plain
 * subscriber connection on the primary that client names, moved with it (MASTER_CHANGE). The
 * subscriber is our own, not the sentinel client's pub/sub proxy, because the proxy reconnects and
 * resubscribes without telling anyone, and the store must hear of every moment its subscription
 * was down; the sentinel client's own errors (a sentinel lost, discovery retried) then leave the
 * subscription, and every cache, trusted. Commands are sent only while the primary's connection is
 * up: during a failover they fail at once (503) instead of waiting in the client's rediscovery loop.
 */
export function sentinelConnections (topology: Extract<RedisTopology, { kind: 'Sentinel' }>, timeoutMs: number, events: RedisConnectionEvents): RedisConnections {
  const nodeOptions = { ...credentials(topology.username, topology.password), disableOfflineQueue: true, socket: nodeSocket(timeoutMs, topology.tls, reconnectDelay) }
  const sentinel = createSentinel({
    name: topology.masterName,
    sentinelRootNodes: topology.nodes.map(({ host, port }) => ({ host, port })),
    nodeClientOptions: nodeOptions,
    sentinelClientOptions: { ...credentials(topology.sentinelUsername, topology.sentinelPassword), socket: nodeSocket(timeoutMs, topology.tls, false) },
    commandOptions: { timeout: timeoutMs },
    masterPoolSize: 1
  })
  let closed = false
  let subscription: { readonly channel: string, readonly onMessage: (message: string) => void } | undefined
  let subscriber: RedisClientType | undefined
  let subscriberAddress: string | undefined

  /** Moves the subscriber to `node` (the primary the sentinel client now uses), if it is elsewhere. */
  const follow = (node: { readonly host: string, readonly port: number } | undefined): void => {
    if (closed || node === undefined || subscription === undefined || `${node.host}:${node.port}` === subscriberAddress) return
    const { channel, onMessage } = subscription
    const previous = subscriber
    const client = createClient({ ...nodeOptions, socket: { ...nodeOptions.socket, host: node.host, port: node.port } }) as RedisClientType
    subscriber = client
    subscriberAddress = `${node.host}:${node.port}`
    client.on('error', (error: unknown) => { if (subscriber === client) events.error('subscriber', error) })
    client.on('end', events.subscriptionLost)
    client.on('reconnecting', events.subscriptionLost)
    client.on('ready', () => { events.connected('subscriber'); events.subscriptionLost() })
    events.subscriptionLost()
    if (previous?.isOpen === true) previous.destroy()
    client.connect()
      .then(async () => {
        await client.subscribe(channel, onMessage)
        events.subscriptionLost()
      })
      .catch((error: unknown) => { if (subscriber === client) events.error('subscriber', error) })
  }

  const commandsReady = (): boolean => sentinel.isReady && sentinel.getMasterNode() !== undefined
  // A lost sentinel while the primary answers is for Redis's monitoring, not an outage of the
  // store: its errors are reported only while commands cannot be sent.
  sentinel.on('error', (error: unknown) => { if (!commandsReady()) events.error('commands', error) })
  sentinel.on('client-error', (event: { type?: string, error?: unknown }) => { if (event.type !== 'SENTINEL' || !commandsReady()) events.error('commands', event.error) })
  sentinel.on('topology-change', (event: { type?: string, node?: { host: string, port: number } }) => {
    if (event.type === 'MASTER_CHANGE') follow(event.node)
  })
  sentinel.on('ready', () => { events.connected('commands'); follow(sentinel.getMasterNode()) })
  return {
    commands: sentinel as unknown as RedisCommands,
    commandsReady,
    subscriberReady: () => subscriber?.isReady === true,
    addMember: async (key, member, ttlMs) => await sentinel.multi().sAdd(key, member).pExpire(key, ttlMs).exec(),
    publish: async (channel, message) => await publishWritten(async () => await sentinel.publish(channel, message), async () => await sentinel.ping()),
    start: (channel, onMessage) => {
      subscription = { channel, onMessage }
      connectUntilClosed(async () => {
        if (!sentinel.isOpen) await sentinel.connect()
        follow(sentinel.getMasterNode())
      }, () => closed, (error) => { events.error('commands', error) })
    },
    close: async () => {
      closed = true
      const client = subscriber
      subscriber = undefined
      await Promise.allSettled([
        (async () => { if (client?.isOpen === true) await client.close() })(),
        (async () => { if (sentinel.isOpen) await sentinel.close().catch(async () => { await sentinel.destroy() }) })()
      ])
    }
  }
}

interface ClusterNodeInfo { readonly host?: string, readonly port?: number }

/**
 * A Redis Cluster: node-redis routes each key to its slot's primary and follows MOVED replies and
 * failovers (topology refreshed while a node is reconnecting). The invalidation channel is a
 * sharded channel: only the events of the node that holds it touch the subscription, so a failover
 * of another shard does not make every instance distrust its caches.
 */
export function clusterConnections (topology: Extract<RedisTopology, { kind: 'Cluster' }>, timeoutMs: number, events: RedisConnectionEvents): RedisConnections {
  const socket = nodeSocket(timeoutMs, topology.tls, clusterReconnectDelay)
  const cluster = createCluster({
    rootNodes: topology.nodes.map(({ host, port }) => ({ socket: { ...socket, host, port } })),
    defaults: { ...credentials(topology.username, topology.password), disableOfflineQueue: true, socket },
    commandOptions: { timeout: timeoutMs },
    // While a node is unreachable, ask the cluster for its topology again every second, so a
    // promoted replica takes over its slots soon after the cluster has failed over.
    topologyRefreshOnReconnectionAttemptStrategy: 1000
  })
  let closed = false
  /** The node that holds the sharded subscription, if it is known. */
  const subscriptionNode = (): ClusterNodeInfo | undefined => cluster.masters.find((master) => master.pubSub !== undefined)
  const touchesSubscription = (info: ClusterNodeInfo | undefined): boolean => {
    const node = subscriptionNode()
    return node === undefined || info === undefined || (node.host === info.host && node.port === info.port)
  }
  const nodeEvent = (info: ClusterNodeInfo | undefined): void => { if (touchesSubscription(info)) events.subscriptionLost() }
  cluster.on('error', (error: unknown) => { events.error('commands', error) })
  cluster.on('node-error', (error: unknown, info?: ClusterNodeInfo) => {
    const subscription = touchesSubscription(info)
    events.error(subscription ? 'subscriber' : 'commands', error)
    if (subscription) events.subscriptionLost()
  })
  cluster.on('node-reconnecting', nodeEvent)
  cluster.on('node-disconnect', nodeEvent)
  cluster.on('node-ready', (info?: ClusterNodeInfo) => {
    events.connected('commands')
    if (touchesSubscription(info)) { events.connected('subscriber'); events.subscriptionLost() }
  })
  cluster.on('sharded-channel-moved-error', (error: unknown) => { events.error('subscriber', error); events.subscriptionLost() })
  return {
    commands: cluster as unknown as RedisCommands,
    commandsReady: () => cluster.isReady,
    subscriberReady: () => cluster.isReady && subscriptionNode() !== undefined,
    addMember: async (key, member, ttlMs) => await cluster.multi().sAdd(key, member).pExpire(key, ttlMs).exec(),
    // PING routed by the channel's slot: the node that took the SPUBLISH.
    publish: async (channel, message) => await publishWritten(async () => await cluster.sPublish(channel, message), async () => await cluster.sendCommand(channel, false, ['PING'])),
    start: (channel, onMessage) => {
      connectUntilClosed(async () => {
        if (!cluster.isOpen) await cluster.connect()
        await cluster.sSubscribe(channel, onMessage)
        events.subscriptionLost()
      }, () => closed, (error) => { events.error('commands', error) })
    },
    close: async () => {
      closed = true
      if (cluster.isOpen) await cluster.close().catch(() => { cluster.destroy() })
    }
  }
}

/** The topology that `State:Redis:Sentinel` or `State:Redis:Cluster` describe, validated at startup; undefined for a connection string. */
export function redisTopologyOf (redis: {
  readonly Sentinel: { readonly MasterName: string, readonly Nodes: readonly string[], readonly Username: string, readonly Password: Secret, readonly SentinelUsername: string, readonly SentinelPassword: Secret, readonly Tls: boolean }
  readonly Cluster: { readonly Nodes: readonly string[], readonly Username: string, readonly Password: Secret, readonly Tls: boolean }
}): RedisTopology | undefined {
  const nodes = (values: readonly string[]): RedisNodeAddress[] => values.flatMap((value) => parseRedisNode(value) ?? [])
  const sentinel = redis.Sentinel
  if (sentinel.MasterName.trim() !== '' || sentinel.Nodes.length > 0) {
    return {
      kind: 'Sentinel',
      masterName: sentinel.MasterName.trim(),
      nodes: nodes(sentinel.Nodes),
      username: sentinel.Username,
      password: sentinel.Password,
      sentinelUsername: sentinel.SentinelUsername,
      sentinelPassword: sentinel.SentinelPassword,
      tls: sentinel.Tls
    }
  }
  const cluster = redis.Cluster
  if (cluster.Nodes.length > 0) return { kind: 'Cluster', nodes: nodes(cluster.Nodes), username: cluster.Username, password: cluster.Password, tls: cluster.Tls }
  return undefined
}
