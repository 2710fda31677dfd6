/**
 * The PostgreSQL directory store's database, through `pg` (node-postgres): a pool shared by the
 * instance, parameterised statements only, a transaction per change (`SELECT ... FOR UPDATE` on
 * the row it changes; an advisory transaction lock per connection for its tokens), and the
 * migrations applied at open under an advisory lock, so instances starting together migrate
 * once. `pg` is imported when the store opens: an app on the embedded store never loads it.
 *
 * Driver errors become the directory's own: a unique violation (23505) a
 * {@link DirectoryConflictError}, a foreign-key violation (23503) an invalid member, anything
 * else (refused connection, timeout, a lost server) {@link DirectoryStoreUnavailableError} with a
 * failure class; the driver's message, which may name the host, only as the `cause`.
 */
import type { Pool, PoolClient, PoolConfig } from 'pg'
import { DirectoryConflictError, DirectoryInvalidValueError, DirectoryStoreUnavailableError } from './directory-errors.js'
import { conflictingAttribute, type SqlDatabase, type SqlRow, type SqlSession, type SqlValue } from './sql-database.js'
import { migrations, MIGRATIONS_TABLE, POSTGRES_TYPES } from './sql-schema.js'

/** The advisory lock key the migrations run under (any constant no other lock of the app uses). */
const MIGRATION_LOCK = 7_341_041

/** What the PostgreSQL store connects with. @public @experimental */
export interface PostgresDirectoryOptions {
  /** postgres://user:password@host:port/database?sslmode=... (a secret: never logged). */
  readonly connectionString: string
  /** Most connections of this instance's pool. */
  readonly maxConnections?: number
  /** Connect and statement timeout in milliseconds. */
  readonly timeoutMs?: number
  /** Called with the failure class when an idle pooled connection fails (the pool replaces it). */
  readonly onError?: (reason: string, error: unknown) => void
}

/** `?` placeholders as PostgreSQL's `$1, $2, ...` (the SQL of the store holds no other `?`). */
function numbered (sql: string): string {
  let index = 0
  return sql.replace(/\?/g, () => `$${++index}`)
}

/** The failure class of an error that is not a constraint violation. */
export function failureClassOf (error: unknown): string {
  const code = (error as { code?: unknown }).code
  if (code === '57014') return 'timeout'
  if (typeof code === 'string' && /^(08|57P)/.test(code)) return 'unreachable'
  if (typeof code === 'string' && /^28/.test(code)) return 'authentication_failed'
  if (typeof code === 'string' && /^3D/.test(code)) return 'database_missing'
  if (typeof code === 'string' && /^E[A-Z]+/.test(code)) return 'unreachable'
  if (error instanceof Error && /timeout|terminated|Connection terminated/i.test(error.message)) return 'timeout'
  return 'query_failed'
}

function translate (error: unknown): Error {
  const { code, constraint } = error as { code?: unknown, constraint?: unknown }
  if (code === '23505') {
    const attribute = conflictingAttribute(String(constraint ?? ''))
    return attribute === undefined ? new DirectoryInvalidValueError('id', 'an id in use') : new DirectoryConflictError(attribute, { cause: error })
  }
  if (code === '23503') return new DirectoryInvalidValueError('members', 'a member is not a user of this connection')
  return new DirectoryStoreUnavailableError(failureClassOf(error), { cause: error })
}

function sessionOf (client: Pool | PoolClient): SqlSession {
  return {
    query: async (sql, parameters = []) => {
      try {
        return (await client.query(numbered(sql), parameters as SqlValue[])).rows as SqlRow[]
      } catch (error) {
        throw translate(error)
      }
    },
    execute: async (sql, parameters = []) => {
      try {
        return (await client.query(numbered(sql), parameters as SqlValue[])).rowCount ?? 0
      } catch (error) {
        throw translate(error)
      }
    }
  }
}

async function inTransaction<T> (pool: Pool, work: (session: SqlSession, client: PoolClient) => Promise<T>): Promise<T> {
  let client: PoolClient
  try {
    client = await pool.connect()
  } catch (error) {
    throw translate(error)
  }
  let broken = false
  try {
    await sessionOf(client).execute('BEGIN')
    const result = await work(sessionOf(client), client)
    await sessionOf(client).execute('COMMIT')
    return result
  } catch (error) {
    try {
      await client.query('ROLLBACK')
    } catch {
      broken = true
    }
    throw error
  } finally {
    // A connection whose ROLLBACK failed is dropped, never handed out mid-transaction.
    client.release(broken)
  }
}

export class PostgresDirectoryDatabase implements SqlDatabase {
  readonly provider = 'PostgreSql'
  readonly forUpdate = ' FOR UPDATE'
  readonly #pool: Pool

  private constructor (pool: Pool) {
    this.#pool = pool
  }

  /** Connects, applies the missing migrations, and returns the database; rejects with {@link DirectoryStoreUnavailableError}. */
  static async open (options: PostgresDirectoryOptions, now: number): Promise<PostgresDirectoryDatabase> {
    const { default: pg } = await import('pg')
    const timeoutMs = options.timeoutMs ?? 5000
    const config: PoolConfig = {
      connectionString: options.connectionString,
      max: options.maxConnections ?? 10,
      connectionTimeoutMillis: timeoutMs,
      statement_timeout: timeoutMs,
      query_timeout: timeoutMs + 1000,
      idleTimeoutMillis: 30_000,
      application_name: 'directory-store'
    }
    const pool = new pg.Pool(config)
    // An idle connection's failure is reported, never thrown into the process.
    pool.on('error', (error) => { options.onError?.(failureClassOf(error), error) })
    const database = new PostgresDirectoryDatabase(pool)
    try {
      await database.#migrate(now)
    } catch (error) {
      await pool.end().catch(() => {})
      throw error
    }
    return database
  }

  async #migrate (now: number): Promise<void> {
    await inTransaction(this.#pool, async (session) => {
      await session.execute(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`)
      await session.execute(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (version integer PRIMARY KEY, applied_ms bigint NOT NULL)`)
      const applied = new Set((await session.query(`SELECT version FROM ${MIGRATIONS_TABLE}`)).map((row) => Number(row.version)))
      for (const { version, statements } of migrations(POSTGRES_TYPES)) {
        if (applied.has(version)) continue
        for (const statement of statements) await session.execute(statement)
        await session.execute(`INSERT INTO ${MIGRATIONS_TABLE} (version, applied_ms) VALUES (?, ?)`, [version, now])
      }
    })
  }

  async read<T> (work: (session: SqlSession) => Promise<T>): Promise<T> {
    return await work(sessionOf(this.#pool))
  }

  async transaction<T> (work: (session: SqlSession) => Promise<T>): Promise<T> {
    return await inTransaction(this.#pool, work)
  }

  async lockConnection (session: SqlSession, connection: string): Promise<void> {
    await session.query('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`directory:${connection}`])
  }

  async close (): Promise<void> {
    await this.#pool.end()
  }
}
