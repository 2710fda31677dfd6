/**
 * Redis in the shapes teams run it at scale, from Debian's redis-server and redis-sentinel
 * (scripts/install-test-dependencies.sh), on loopback TCP ports picked free by listening on port 0
 * first (cluster and sentinel announce addresses, so a unix socket will not do): a Redis Cluster
 * of three primaries (and a replica each, for failover), and a primary with a replica watched by
 * three sentinels. Temporary directories, no persistence, every wait bounded; `dispose` kills
 * whatever is left.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import assert from 'node:assert/strict'
import { after, before } from 'node:test'
import { Secret } from '../../src/config/secret.js'
import { parseRedisNode, type RedisNodeAddress } from '../../src/state/redis-node.js'
import { RedisStateStore, type RedisStoreOptions } from '../../src/state/redis-store.js'
import type { RedisTopology } from '../../src/state/redis-topology.js'
import { closedPort } from './ports.js'
import { REDIS_SERVER, RedisProcess } from './redis-server.js'

export const REDIS_SENTINEL = process.env.REDIS_SENTINEL ?? '/usr/bin/redis-sentinel'

/** One redis-server (or redis-sentinel) process on a loopback port. */
export class RedisNode {
  readonly port: number
  readonly #args: string[]
  readonly #password: string | undefined
  readonly #process: RedisProcess

  constructor (binary: string, port: number, args: string[], password?: string) {
    this.#process = new RedisProcess(binary)
    this.port = port
    this.#args = args
    this.#password = password
  }

  get address (): string {
    return `127.0.0.1:${this.port}`
  }

  get output (): string {
    return this.#process.output
  }

  get running (): boolean {
    return this.#process.running
  }

  async start (timeoutMs = 10_000): Promise<void> {
    await this.#process.start(this.#args, () => this.cli('ping') === 'PONG', this.address, timeoutMs)
  }

  /** redis-cli against this node (test set-up and inspection only). */
  cli (...args: string[]): string {
    const auth = this.#password === undefined ? [] : ['--no-auth-warning', '-a', this.#password]
    const result = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(this.port), ...auth, ...args], { encoding: 'utf8', timeout: 5000 })
    return result.stdout?.trim() ?? ''
  }

  /** Ends the process abruptly (SIGKILL), as a crash or a lost host would. */
  async kill (): Promise<void> {
    await this.#process.stop('SIGKILL')
  }

  async stop (): Promise<void> {
    await this.#process.stop('SIGTERM')
  }
}

async function waitUntil (check: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (check()) return
    await sleep(50)
  }
  throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`)
}

function nodesOf (addresses: readonly string[]): RedisNodeAddress[] {
  return addresses.map((address) => parseRedisNode(address) ?? assert.fail(address))
}

const commonArgs = (port: number, directory: string): string[] => [
  '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', directory, '--loglevel', 'warning'
]

const authArgs = (password: string | undefined): string[] => password === undefined ? [] : ['--requirepass', password, '--masterauth', password]

export interface ClusterOptions {
  /** One replica per primary (six processes), for failover tests. */
  readonly replicas?: boolean
  readonly password?: string
  /** cluster-node-timeout: how long a primary may be silent before it is failed over. */
  readonly nodeTimeoutMs?: number
}

/** A Redis Cluster of three primaries (and, with `replicas`, a replica each) on loopback. */
export class RedisClusterFixture {
  readonly directory = mkdtempSync(join(tmpdir(), 'pt-redis-cluster-'))
  readonly nodes: RedisNode[] = []
  readonly #options: ClusterOptions

  constructor (options: ClusterOptions = {}) {
    this.#options = options
  }

  /** The value of `State:Redis:Cluster:Nodes`. */
  get seedNodes (): string[] {
    return this.nodes.slice(0, 3).map((node) => node.address)
  }

  /** The store's topology as `State:Redis:Cluster` gives it: the seed nodes, no user name, the password, no TLS. */
  storeTopology (): RedisTopology {
    return { kind: 'Cluster', nodes: nodesOf(this.seedNodes), username: '', password: new Secret(this.#options.password ?? ''), tls: false }
  }

  async start (): Promise<void> {
    const count = this.#options.replicas === true ? 6 : 3
    for (let index = 0; index < count; index++) {
      const port = await closedPort()
      const directory = join(this.directory, String(port))
      spawnSync('mkdir', ['-p', directory])
      this.nodes.push(new RedisNode(REDIS_SERVER, port, [
        ...commonArgs(port, directory), ...authArgs(this.#options.password),
        '--cluster-enabled', 'yes', '--cluster-config-file', join(directory, 'nodes.conf'),
        '--cluster-node-timeout', String(this.#options.nodeTimeoutMs ?? 1000),
        // A replica takes over however long it was cut off: the test kills its primary on purpose.
        '--cluster-replica-validity-factor', '0'
      ], this.#options.password))
    }
    await Promise.all(this.nodes.map(async (node) => { await node.start() }))
    const auth = this.#options.password === undefined ? [] : ['--no-auth-warning', '-a', this.#options.password]
    const created = spawnSync('redis-cli', [...auth, '--cluster', 'create', ...this.nodes.map((node) => node.address), '--cluster-replicas', this.#options.replicas === true ? '1' : '0', '--cluster-yes'], { encoding: 'utf8', timeout: 30_000 })
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`)
    await waitUntil(() => this.nodes.every((node) => node.cli('cluster', 'info').includes('cluster_state:ok')), 'the cluster state to be ok on every node', 20_000)
    if (this.#options.replicas === true) {
      await waitUntil(() => this.nodes.filter((node) => node.cli('role').startsWith('slave')).every((node) => node.cli('info', 'replication').includes('master_link_status:up')), 'every replica to be in sync', 20_000)
    }
  }

  /** The node serving `key`'s slot as primary. */
  primaryOf (key: string): RedisNode {
    const slot = Number(this.nodes[0]?.cli('cluster', 'keyslot', key))
    const line = (this.nodes.find((node) => node.running)?.cli('cluster', 'nodes') ?? '').split('\n').find((entry) => {
      const fields = entry.split(' ')
      return (fields[2] ?? '').includes('master') && !(fields[2] ?? '').includes('fail') && fields.slice(8).some((range) => {
        const [from, to] = range.split('-').map(Number)
        return from !== undefined && slot >= from && slot <= (to ?? from)
      })
    })
    const port = Number(/:(\d+)@/.exec(line ?? '')?.[1])
    const node = this.nodes.find((candidate) => candidate.port === port)
    if (node === undefined) throw new Error(`no primary found for slot ${slot}`)
    return node
  }

  async dispose (): Promise<void> {
    await Promise.all(this.nodes.map(async (node) => { await node.kill() }))
    rmSync(this.directory, { recursive: true, force: true })
  }
}

export interface SentinelOptions {
  /** requirepass of the primary and the replica (and masterauth, and the sentinels' auth-pass). */
  readonly password?: string
  /** requirepass of the sentinels themselves. */
  readonly sentinelPassword?: string
  readonly masterName?: string
  /** down-after-milliseconds: how long the primary may be silent before it is failed over. */
  readonly downAfterMs?: number
}

/** A primary, one replica and three sentinels (quorum 2) on loopback. */
export class RedisSentinelFixture {
  readonly directory = mkdtempSync(join(tmpdir(), 'pt-redis-sentinel-'))
  readonly masterName: string
  readonly data: RedisNode[] = []
  readonly sentinels: RedisNode[] = []
  readonly #options: SentinelOptions

  constructor (options: SentinelOptions = {}) {
    this.#options = options
    this.masterName = options.masterName ?? 'pt-primary'
  }

  /** The value of `State:Redis:Sentinel:Nodes`. */
  get sentinelNodes (): string[] {
    return this.sentinels.map((node) => node.address)
  }

  /** The store's topology as `State:Redis:Sentinel` gives it: the master name, the sentinels, no user names, both passwords, no TLS. */
  storeTopology (): RedisTopology {
    return {
      kind: 'Sentinel',
      masterName: this.masterName,
      nodes: nodesOf(this.sentinelNodes),
      username: '',
      password: new Secret(this.#options.password ?? ''),
      sentinelUsername: '',
      sentinelPassword: new Secret(this.#options.sentinelPassword ?? ''),
      tls: false
    }
  }

  async start (): Promise<void> {
    const { password, sentinelPassword } = this.#options
    const primaryPort = await closedPort()
    const replicaPort = await closedPort()
    for (const [port, extra] of [[primaryPort, []], [replicaPort, ['--replicaof', '127.0.0.1', String(primaryPort)]]] as const) {
      const directory = join(this.directory, String(port))
      spawnSync('mkdir', ['-p', directory])
      this.data.push(new RedisNode(REDIS_SERVER, port, [...commonArgs(port, directory), ...authArgs(password), ...extra], password))
    }
    for (const node of this.data) await node.start()
    await waitUntil(() => this.data[1]?.cli('info', 'replication').includes('master_link_status:up') === true, 'the replica to sync', 15_000)
    for (let index = 0; index < 3; index++) {
      const port = await closedPort()
      const file = join(this.directory, `sentinel-${port}.conf`)
      writeFileSync(file, [
        `port ${port}`, 'bind 127.0.0.1', `dir ${this.directory}`, 'loglevel warning',
        ...(sentinelPassword === undefined ? [] : [`requirepass "${sentinelPassword}"`]),
        `sentinel monitor ${this.masterName} 127.0.0.1 ${primaryPort} 2`,
        ...(password === undefined ? [] : [`sentinel auth-pass ${this.masterName} "${password}"`]),
        `sentinel down-after-milliseconds ${this.masterName} ${this.#options.downAfterMs ?? 1000}`,
        `sentinel failover-timeout ${this.masterName} 10000`,
        `sentinel parallel-syncs ${this.masterName} 1`,
        ''
      ].join('\n'), { mode: 0o600 })
      this.sentinels.push(new RedisNode(REDIS_SENTINEL, port, [file], sentinelPassword))
    }
    await Promise.all(this.sentinels.map(async (node) => { await node.start() }))
    // A failover needs the sentinels to know each other and the replica (hello messages, ~2 s).
    await waitUntil(() => this.sentinels.every((node) => {
      const master = node.cli('sentinel', 'master', this.masterName)
      return /num-other-sentinels\n2(\n|$)/.test(master) && /num-slaves\n1(\n|$)/.test(master)
    }), 'the sentinels to know each other and the replica', 20_000)
  }

  /** The primary's port as the sentinels report it. */
  primaryPort (): number {
    const reply = this.sentinels.find((node) => node.running)?.cli('sentinel', 'get-master-addr-by-name', this.masterName) ?? ''
    return Number(reply.split('\n')[1])
  }

  primary (): RedisNode {
    const port = this.primaryPort()
    const node = this.data.find((candidate) => candidate.port === port)
    if (node === undefined) throw new Error('no primary known to the sentinels')
    return node
  }

  /** SENTINEL FAILOVER: promotes the replica without waiting for the primary to fail. */
  forceFailover (): string {
    return this.sentinels[0]?.cli('sentinel', 'failover', this.masterName) ?? ''
  }

  async dispose (): Promise<void> {
    await Promise.all([...this.sentinels, ...this.data].map(async (node) => { await node.kill() }))
    rmSync(this.directory, { recursive: true, force: true })
  }
}

/** The stores a test file opens on a topology fixture (see {@link storesOn}). */
export interface TopologyStores {
  /** A started store on the fixture's topology (or on `topology`, when given); closed after the file's tests. */
  open: (options: Omit<RedisStoreOptions, 'connectionString' | 'topology'> & { readonly topology?: RedisTopology }) => RedisStateStore
}

/**
 * Registers before/after hooks for a test file: starts `fixture`; afterwards closes every store
 * opened through the result, then disposes of the fixture.
 */
export function storesOn (fixture: RedisClusterFixture | RedisSentinelFixture): TopologyStores {
  const stores: RedisStateStore[] = []
  before(async () => { await fixture.start() })
  after(async () => {
    await Promise.all(stores.map(async (store) => { await store.close() }))
    await fixture.dispose()
  })
  return {
    open: (options) => {
      const store = new RedisStateStore({ ...options, connectionString: new Secret(''), topology: options.topology ?? fixture.storeTopology() })
      stores.push(store)
      store.start()
      return store
    }
  }
}
