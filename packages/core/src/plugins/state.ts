/**
 * The state store of this app (`ProjectTemplate:State`): created from configuration, or supplied
 * by the caller (tests, benchmarks), started when the app is built and closed with it. Connection
 * events are logged without the connection string; readiness reports the store (routes/health.ts).
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { ApplicationConfiguration, StateConfiguration } from '../config/schema.js'
import { EmbeddedStateStore } from '../state/embedded-store.js'
import type { StateStore } from '../state/state-store.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Server-side state shared by sessions, sign-in flows and replay records. */
    state: StateStore
  }
}

export interface StatePluginOptions {
  readonly config: ApplicationConfiguration
  /** A store to use instead of the configured one; the caller closes it. */
  readonly store?: StateStore
  readonly now: () => number
}

const CHARACTERS_PER_MEGABYTE = 1_048_576

/** The embedded store with the configured bounds (a session has up to three index entries: its subject, and with back-channel logout its provider sid and sub). */
export function createEmbeddedStore (embedded: StateConfiguration['Embedded'], now: () => number = Date.now): EmbeddedStateStore {
  return new EmbeddedStateStore({
    maxEntries: { session: embedded.MaxSessions, index: embedded.MaxSessions * 3, flow: embedded.MaxPendingSignIns, replay: embedded.MaxReplayRecords, lock: embedded.MaxSessions },
    maxCharacters: embedded.MaxMegabytes * CHARACTERS_PER_MEGABYTE
  }, now)
}

/**
 * The configured store. The Redis client is imported only when Redis is configured (as providers
 * are imported only when enabled), so an app on the embedded store does not load or hold it.
 */
export async function createStateStore (config: ApplicationConfiguration, log: FastifyInstance['log'], now: () => number): Promise<StateStore> {
  const state = config.State
  if (state.Provider === 'Redis') {
    const { RedisStateStore } = await import('../state/redis-store.js')
    const redisLog = log.child({ stateStore: 'Redis' })
    let lastError = ''
    return new RedisStateStore({
      connectionString: state.Redis.ConnectionString,
      keyPrefix: state.Redis.KeyPrefix,
      timeoutMs: state.Redis.TimeoutMilliseconds,
      onEvent (event) {
        if (event.kind === 'ready') {
          lastError = ''
          redisLog.info({ event: 'state.store.ready' }, 'state store connected')
          return
        }
        // A reconnect loop repeats the same error: log it once until the store is ready again.
        const signature = `${event.connection}:${event.errorName}:${event.errorCode ?? ''}`
        if (signature === lastError) return
        lastError = signature
        redisLog.warn({ event: 'state.store.unavailable', connection: event.connection, errorName: event.errorName, errorCode: event.errorCode }, 'state store unreachable; requests that need it answer 503 until it is back')
      }
    })
  }
  return createEmbeddedStore(state.Embedded, now)
}

async function statePlugin (app: FastifyInstance, options: StatePluginOptions): Promise<void> {
  const store = options.store ?? await createStateStore(options.config, app.log, options.now)
  app.decorate('state', store)
  store.start()
  if (options.store === undefined) app.addHook('onClose', async () => { await store.close() })
}

export default fp(statePlugin, { name: 'state' })
