/**
 * The embedded directory store's database: `directory.sqlite` beside the embedded state store's
 * file (`State:Embedded:DataDirectory`), through `node:sqlite` (Node.js 22.13 and later; where it
 * is missing the embedded directory store is kept in memory, memory-directory-store.ts).
 *
 * Unlike the state store, nothing is cached in memory: every read is a query on an index, so
 * the file itself is the truth (WAL, `synchronous=NORMAL`, foreign keys on). `node:sqlite` is
 * synchronous, so this process runs one operation at a time on its connection (a queue): a
 * transaction is never interleaved with another call, and a read never sees another call's
 * uncommitted writes.
 */
import { ConfigurationError } from '../errors.js'
import type { SqliteModule } from '../state/sqlite-journal.js'
import { DirectoryConflictError, DirectoryInvalidValueError, DirectoryStoreUnavailableError } from './directory-errors.js'
import { conflictingAttribute, type SqlDatabase, type SqlRow, type SqlSession, type SqlValue } from './sql-database.js'
import { migrations, MIGRATIONS_TABLE, SQLITE_TYPES } from './sql-schema.js'

/** The embedded directory store's file in `State:Embedded:DataDirectory`. @experimental */
export const DIRECTORY_FILE = 'directory.sqlite'

/** The part of a `node:sqlite` statement and connection used here. */
interface Statement {
  run: (...parameters: Array<string | number | null>) => { changes: number | bigint }
  all: (...parameters: Array<string | number | null>) => unknown[]
}
interface Connection {
  exec: (sql: string) => void
  prepare: (sql: string) => Statement
  close: () => void
}

const sqliteValue = (value: SqlValue): string | number | null => typeof value === 'boolean' ? (value ? 1 : 0) : value

/** A driver error as the directory's own: a constraint as a conflict or an invalid value, anything else as unavailable. */
function translate (error: unknown): Error {
  const message = error instanceof Error ? error.message : ''
  if (message.includes('UNIQUE constraint failed')) {
    const attribute = conflictingAttribute(message)
    return attribute === undefined ? new DirectoryInvalidValueError('id', 'an id in use') : new DirectoryConflictError(attribute, { cause: error })
  }
  if (message.includes('FOREIGN KEY constraint failed')) return new DirectoryInvalidValueError('members', 'a member is not a user of this connection')
  return new DirectoryStoreUnavailableError('sqlite_error', { cause: error })
}

export class SqliteDirectoryDatabase implements SqlDatabase {
  readonly provider = 'Embedded'
  readonly forUpdate = ''
  readonly #db: Connection
  readonly #statements = new Map<string, Statement>()
  #tail: Promise<unknown> = Promise.resolve()
  #closed = false

  private constructor (db: Connection) {
    this.#db = db
  }

  /**
   * Opens (creating when absent) the database in `file` and applies the missing migrations.
   * A file SQLite cannot open stops startup with a {@link ConfigurationError} naming
   * `State:Embedded:DataDirectory`; the file is left as it is.
   */
  static open (sqlite: SqliteModule, file: string, now: number, rootKey: string): SqliteDirectoryDatabase {
    let db: Connection | undefined
    try {
      db = new sqlite.DatabaseSync(file) as unknown as Connection
      db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON;')
      migrate(db, now)
      return new SqliteDirectoryDatabase(db)
    } catch (error) {
      try { db?.close() } catch {}
      const key = `${rootKey}:State:Embedded:DataDirectory`
      throw new ConfigurationError([{
        key,
        message: `${key}: the embedded directory store's file ${file} cannot be opened (SQLite: ${(error as Error).message.slice(0, 80)}); it was left untouched. ` +
          `Restore it from a backup, or set ${rootKey}:Provisioning:Store:Provider to PostgreSql.`
      }], { cause: error })
    }
  }

  #statement (sql: string): Statement {
    let statement = this.#statements.get(sql)
    if (statement === undefined) this.#statements.set(sql, statement = this.#db.prepare(sql))
    return statement
  }

  readonly #session: SqlSession = {
    query: async (sql, parameters = []) => {
      try {
        return this.#statement(sql).all(...parameters.map(sqliteValue)) as SqlRow[]
      } catch (error) {
        throw translate(error)
      }
    },
    execute: async (sql, parameters = []) => {
      try {
        return Number(this.#statement(sql).run(...parameters.map(sqliteValue)).changes)
      } catch (error) {
        throw translate(error)
      }
    }
  }

  /** Runs `work` after every earlier call has finished. */
  async #exclusive<T> (work: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(async () => {
      if (this.#closed) throw new DirectoryStoreUnavailableError('closed')
      return await work()
    })
    this.#tail = run.catch(() => {})
    return await run
  }

  async read<T> (work: (session: SqlSession) => Promise<T>): Promise<T> {
    return await this.#exclusive(async () => await work(this.#session))
  }

  async transaction<T> (work: (session: SqlSession) => Promise<T>): Promise<T> {
    return await this.#exclusive(async () => {
      try {
        this.#db.exec('BEGIN IMMEDIATE')
      } catch (error) {
        throw translate(error)
      }
      try {
        const result = await work(this.#session)
        this.#db.exec('COMMIT')
        return result
      } catch (error) {
        try { this.#db.exec('ROLLBACK') } catch {}
        throw error
      }
    })
  }

  /** Writers are serialised already (one connection, one call at a time). */
  async lockConnection (): Promise<void> {}

  async close (): Promise<void> {
    await this.#exclusive(async () => {
      this.#closed = true
      this.#db.close()
    }).catch(() => {})
  }
}

function migrate (db: Connection, now: number): void {
  db.exec('BEGIN IMMEDIATE')
  try {
    db.exec(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (version INTEGER PRIMARY KEY, applied_ms INTEGER NOT NULL)`)
    const applied = new Set((db.prepare(`SELECT version FROM ${MIGRATIONS_TABLE}`).all() as Array<{ version: number }>).map((row) => Number(row.version)))
    for (const { version, statements } of migrations(SQLITE_TYPES)) {
      if (applied.has(version)) continue
      for (const statement of statements) db.exec(statement)
      db.prepare(`INSERT INTO ${MIGRATIONS_TABLE} (version, applied_ms) VALUES (?, ?)`).run(version, now)
    }
    db.exec('COMMIT')
  } catch (error) {
    db.exec('ROLLBACK')
    throw error
  }
}
