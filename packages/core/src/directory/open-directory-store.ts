/**
 * The directory store as configured (`<Root>:Provisioning:Store`, docs/provisioning.md):
 *
 * - `Embedded`: `directory.sqlite` in `State:Embedded:DataDirectory` (created 0700, the file
 *   0600, checked as the state store's file is) through `node:sqlite` when this Node.js has it
 *   (22.13 and later) and `State:Embedded:Persist` is true; otherwise in memory, with one warning
 *   (`directory.embedded.not_persisted`): a restart forgets the directory and its tokens.
 * - `PostgreSql`: the `pg` driver, imported only here, so an app on the embedded store never
 *   loads it.
 *
 * Plain inputs and a logger; the Fastify glue that decorates `app.directory` comes with the SCIM
 * endpoints.
 */
import { rootKeyOf } from '../application-name.js'
import type { ProvisioningConfiguration, StateConfiguration } from '../config/schema.js'
import { loadSqlite, prepareStateFile } from '../state/sqlite-journal.js'
import type { DirectoryStore } from './directory-store.js'
import { MemoryDirectoryStore } from './memory-directory-store.js'
import type { PostgresDirectoryOptions } from './postgres-directory-database.js'
import { SqlDirectoryStore } from './sql-directory-store.js'
import { DIRECTORY_FILE, SqliteDirectoryDatabase } from './sqlite-directory-database.js'

/** The log lines the store's opening writes (a pino logger fits). @public @experimental */
export interface DirectoryStoreLog {
  info: (data: object, message: string) => void
  warn: (data: object, message: string) => void
  error: (data: object, message: string) => void
}

/** Where the embedded directory store keeps its file. @public @experimental */
export interface EmbeddedDirectoryStoreOptions {
  /** The data directory (relative to `contentRoot`), or undefined for memory only. */
  readonly dataDirectory: string | undefined
  readonly contentRoot: string
  /** The root key a log line or refusal names a key under (none: the default application's, {@link rootKeyOf}). */
  readonly rootKey?: string
  readonly now?: () => number
  readonly log?: DirectoryStoreLog
}

/**
 * The embedded directory store: SQLite in `dataDirectory` on a Node.js with `node:sqlite`,
 * memory otherwise (or when `dataDirectory` is undefined).
 *
 * @public @experimental
 */
export async function openEmbeddedDirectoryStore (options: EmbeddedDirectoryStoreOptions): Promise<DirectoryStore> {
  const now = options.now ?? Date.now
  const rootKey = rootKeyOf(options.rootKey)
  if (options.dataDirectory === undefined) return new MemoryDirectoryStore({ now })
  const sqlite = await loadSqlite()
  if (sqlite === undefined) {
    options.log?.warn({ event: 'directory.embedded.not_persisted', node: process.versions.node, key: `${rootKey}:Provisioning:Store:Provider` },
      'node:sqlite is not available on this Node.js (it needs 22.13 or later): the embedded directory store is kept in memory, so a restart forgets provisioned users and connection tokens')
    return new MemoryDirectoryStore({ now })
  }
  const file = prepareStateFile(options.dataDirectory, options.contentRoot, rootKey, DIRECTORY_FILE)
  const store = new SqlDirectoryStore(SqliteDirectoryDatabase.open(sqlite, file, now(), rootKey), { now })
  options.log?.info({ event: 'directory.embedded.opened', file }, 'embedded directory store opened')
  return store
}

/**
 * The PostgreSQL directory store: connects, creates or migrates its tables, and returns it.
 * Rejects with a `DirectoryStoreUnavailableError` when the database cannot be reached.
 *
 * @public @experimental
 */
export async function openPostgresDirectoryStore (options: PostgresDirectoryOptions & { readonly now?: () => number }): Promise<DirectoryStore> {
  const now = options.now ?? Date.now
  const { PostgresDirectoryDatabase } = await import('./postgres-directory-database.js')
  return new SqlDirectoryStore(await PostgresDirectoryDatabase.open(options, now()), { now })
}

/**
 * The store `Provisioning:Store` configures (the embedded one persisted where `State:Embedded`
 * persists the state store). Keys are named under `rootKey` (none: the default application's,
 * {@link rootKeyOf}).
 *
 * @public @experimental
 */
export async function openDirectoryStore (provisioning: ProvisioningConfiguration, state: StateConfiguration, contentRoot: string, log: DirectoryStoreLog,
  now: () => number = Date.now, rootKey?: string): Promise<DirectoryStore> {
  const store = provisioning.Store
  if (store.Provider === 'PostgreSql') {
    return await openPostgresDirectoryStore({
      connectionString: store.PostgreSql.ConnectionString.reveal(),
      maxConnections: store.PostgreSql.MaxConnections,
      timeoutMs: store.PostgreSql.TimeoutMilliseconds,
      now,
      onError: (reason) => { log.warn({ event: 'directory.store.connection_failed', reason }, 'a pooled PostgreSQL connection of the directory store failed; it is replaced') }
    })
  }
  return await openEmbeddedDirectoryStore({ dataDirectory: state.Embedded.Persist ? state.Embedded.DataDirectory : undefined, contentRoot, rootKey: rootKeyOf(rootKey), now, log })
}
