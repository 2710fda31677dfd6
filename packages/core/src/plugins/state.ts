/**
 * The state store of this app (`ProjectTemplate:State`): created from configuration, or supplied
 * by the caller (tests, benchmarks), started when the app is built and closed with it. Connection
 * events are logged without the connection string, one line per change of state per connection
 * (down; still down every {@link STILL_DOWN_INTERVAL_MS} with a count; back, with the outage
 * length), never one per refused request; readiness reports the store (routes/health.ts).
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { StateConfiguration } from '../config/schema.js'
import type { ApplicationConfiguration } from '../providers/application-schema.js'
import { EmbeddedStateStore } from '../state/embedded-store.js'
import { loadSqlite, prepareStateFile, SqliteJournal } from '../state/sqlite-journal.js'
import type { RedisConnection, RedisStoreEvent } from '../state/redis-store.js'
import type { StateStore } from '../state/state-store.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Server-side state shared by sessions, sign-in flows and replay records. */
    state: StateStore
  }
}

export interface StatePluginOptions {
  readonly config: ApplicationConfiguration
  /** The app root, against which a relative `State:Embedded:DataDirectory` is resolved. */
  readonly contentRoot: string
  /** A store to use instead of the configured one; the caller closes it. */
  readonly store?: StateStore
  readonly now: () => number
  /** Wraps the store (telemetry's measured store, plugins/telemetry.ts). */
  readonly observe?: (store: StateStore) => StateStore
  /** The application's configuration root key, named in the log lines. */
  readonly rootKey: string
}

const CHARACTERS_PER_MEGABYTE = 1_048_576

/** The embedded store with the configured bounds (a session has up to three index entries: its subject, and with back-channel logout its provider sid and sub). */
export function createEmbeddedStore (embedded: StateConfiguration['Embedded'], now: () => number = Date.now, journal?: SqliteJournal): EmbeddedStateStore {
  return new EmbeddedStateStore({
    maxEntries: { session: embedded.MaxSessions, index: embedded.MaxSessions * 3, flow: embedded.MaxPendingSignIns, replay: embedded.MaxReplayRecords, lock: embedded.MaxSessions },
    maxCharacters: embedded.MaxMegabytes * CHARACTERS_PER_MEGABYTE
  }, now, journal)
}

/**
 * The embedded store as configured: with `Persist` (the default) on a Node.js that has
 * `node:sqlite`, written through to `<DataDirectory>/state.sqlite` and loaded from it; otherwise
 * in memory, with one warning (`state.embedded.not_persisted`) when persistence was asked for.
 * Throws {@link ConfigurationError} when the data directory is unusable or unsafe.
 */
export async function openEmbeddedStore (embedded: StateConfiguration['Embedded'], contentRoot: string, log: FastifyInstance['log'], now: () => number, rootKey: string): Promise<EmbeddedStateStore> {
  if (!embedded.Persist) return createEmbeddedStore(embedded, now)
  const sqlite = await loadSqlite()
  if (sqlite === undefined) {
    log.warn({ event: 'state.embedded.not_persisted', node: process.versions.node, key: `${rootKey}:State:Embedded:Persist` },
      'node:sqlite is not available on this Node.js (it needs 22.13 or later): the embedded state store is kept in memory only, so a restart signs every user out')
    return createEmbeddedStore(embedded, now)
  }
  const file = prepareStateFile(embedded.DataDirectory, contentRoot, rootKey)
  const { journal, records } = SqliteJournal.open(sqlite, file, now(), {
    onWriteFailed: (error) => { log.error({ event: 'state.embedded.write_failed', err: error, file }, 'the embedded state store cannot write its file; writes answer 503 until it can') },
    onWriteRecovered: () => { log.info({ event: 'state.embedded.write_recovered', file }, 'the embedded state store writes its file again') }
  }, rootKey)
  const store = createEmbeddedStore(embedded, now, journal)
  store.load(records)
  log.info({ event: 'state.embedded.persisted', file, loaded: store.counts() }, 'embedded state store loaded from its file')
  return store
}

/** While a connection stays down, one line this often says so, with the failures counted since it went down. */
export const STILL_DOWN_INTERVAL_MS = 30_000

/**
 * The Redis store's events as log lines: per connection, a warning when it goes down, a warning
 * every `intervalMs` while it stays down (with the failed attempts counted), an info line when it
 * is back (with the outage length); plus one line when the store as a whole is ready. Each
 * connection keeps its own state, so the subscriber's failures never hide the commands'.
 */
export function createOutageLog (log: FastifyInstance['log'], now: () => number = Date.now, intervalMs = STILL_DOWN_INTERVAL_MS): (event: RedisStoreEvent) => void {
  const outages = new Map<RedisConnection, { since: number, failures: number, reported: number, errorName: string, errorCode: string | undefined }>()
  return (event) => {
    const at = now()
    if (event.kind === 'ready') {
      log.info({ event: 'state.store.ready' }, 'state store connected')
      return
    }
    const outage = outages.get(event.connection)
    if (event.kind === 'connected') {
      if (outage === undefined) return
      outages.delete(event.connection)
      log.info({ event: 'state.store.recovered', connection: event.connection, outageMs: at - outage.since, failures: outage.failures }, 'state store connection back')
      return
    }
    if (outage === undefined) {
      outages.set(event.connection, { since: at, failures: 1, reported: at, errorName: event.errorName, errorCode: event.errorCode })
      log.warn({ event: 'state.store.unavailable', connection: event.connection, errorName: event.errorName, errorCode: event.errorCode }, 'state store unreachable; requests that need it answer 503 until it is back')
      return
    }
    outage.failures++
    if (at - outage.reported < intervalMs) return
    outage.reported = at
    log.warn({ event: 'state.store.still_unavailable', connection: event.connection, failures: outage.failures, outageMs: at - outage.since, errorName: event.errorName, errorCode: event.errorCode }, 'state store still unreachable')
  }
}

/**
 * The configured store. The Redis client is imported only when Redis is configured (as providers
 * are imported only when enabled), so an app on the embedded store does not load or hold it.
 */
export async function createStateStore (config: ApplicationConfiguration, contentRoot: string, log: FastifyInstance['log'], now: () => number, rootKey: string): Promise<StateStore> {
  const state = config.State
  if (state.Provider === 'Redis') {
    const { RedisStateStore, redisTopologyOf } = await import('../state/redis-store.js')
    return new RedisStateStore({
      connectionString: state.Redis.ConnectionString,
      topology: redisTopologyOf(state.Redis),
      keyPrefix: state.Redis.KeyPrefix,
      timeoutMs: state.Redis.TimeoutMilliseconds,
      // Wall-clock time for outage lengths (`now` may be a test's frozen clock for sessions).
      onEvent: createOutageLog(log.child({ stateStore: 'Redis' }))
    })
  }
  return await openEmbeddedStore(state.Embedded, contentRoot, log.child({ stateStore: 'Embedded' }), now, rootKey)
}

async function statePlugin (app: FastifyInstance, options: StatePluginOptions): Promise<void> {
  const created = options.store ?? await createStateStore(options.config, options.contentRoot, app.log, options.now, options.rootKey)
  const store = options.observe?.(created) ?? created
  app.decorate('state', store)
  store.start()
  if (options.store === undefined) app.addHook('onClose', async () => { await store.close() })
}

export default fp(statePlugin, { name: 'state' })
