/**
 * The embedded store on disk (`State:Embedded:Persist`, docs/scale-out.md): every change of the
 * in-memory store written through to one SQLite table through `node:sqlite` (Node.js 22.13 and
 * later; absent or behind a flag on Node.js 20 and early 22, where {@link loadSqlite} answers
 * undefined and the store stays in memory).
 *
 * One table holds every kind of record (sessions, index sets, pending sign-outs, replay records,
 * locks), so a revocation or a replay record is carried exactly as faithfully as a session: a
 * string record is one row `(key, '')` with its value, a set is one row per member `(key, member)`
 * with a NULL value, a deletion is a deleted row, `seq` keeps the write order (the session
 * eviction order). Values are what the store is given: sealed strings.
 *
 * Writes are batched: the changes of one turn of the event loop are committed in one transaction
 * (WAL, `synchronous=NORMAL`) from a `setImmediate`, and each write of the store resolves only
 * after its transaction commits, so an answered request's writes are in the file's WAL. A process
 * killed (SIGKILL) loses only writes whose requests were not yet answered; a power loss or an OS
 * crash may also lose the transactions since the last checkpoint (at most about
 * {@link CHECKPOINT_INTERVAL_MS}), which a worker thread runs so that no fsync blocks the loop.
 */
import { chmodSync, closeSync, mkdirSync, openSync, statSync, type Stats } from 'node:fs'
import { isAbsolute, join, resolve } from 'node:path'
import { Worker } from 'node:worker_threads'
import type { ConfigurationProblem } from '../config/bind.js'
import { creationProblem, writeProblem } from '../config/directory-access.js'
import { ConfigurationError } from '../errors.js'
import type { EmbeddedStoreJournal, JournalRecord } from './embedded-store.js'
import { StateFileLock, stateFileProblem } from './state-file-lock.js'
import { StateStoreUnavailableError, type StateKind, type StateStoreStatus } from './state-store.js'

/** The store's file in `State:Embedded:DataDirectory` (with SQLite's `-wal` and `-shm` beside it). */
export const STATE_FILE = 'state.sqlite'

/** The part of `node:sqlite` used here (its types are not in @types/node 20). */
interface Statement {
  run: (...parameters: Array<string | number | null>) => unknown
  all: (...parameters: Array<string | number | null>) => unknown[]
}
interface Database {
  exec: (sql: string) => void
  prepare: (sql: string) => Statement
  close: () => void
}
export interface SqliteModule {
  DatabaseSync: new (path: string) => Database
}

/**
 * `node:sqlite`, or undefined where this Node.js has none (Node.js 20; 22 before 22.13 without
 * `--experimental-sqlite`). Imported dynamically so that a runtime without it still starts.
 */
export async function loadSqlite (): Promise<SqliteModule | undefined> {
  // A variable specifier: TypeScript (with Node 20 types) must not resolve it.
  const specifier = 'node:sqlite'
  try {
    const module = await import(specifier) as Partial<SqliteModule>
    return typeof module.DatabaseSync === 'function' ? module as SqliteModule : undefined
  } catch {
    return undefined
  }
}

/** The problems of the data directory, named under the application's root key. */
function directoryProblems (rootKey: string): { problem: (message: string) => ConfigurationProblem, accessProblem: (what: string, code: string) => ConfigurationProblem } {
  const key = `${rootKey}:State:Embedded:DataDirectory`
  const problem = (message: string): ConfigurationProblem => ({ key, message: `${key} ${message}` })
  return {
    problem,
    /** The next step after a data directory the process cannot create, read or write (errno `code`). */
    accessProblem: (what, code) => problem(`${what} (${code}). ` +
      `Make it a directory (mode 0700) the user running the application may write, point ${key} at one, ` +
      `or set ${rootKey}:State:Embedded:Persist to false (the store is then kept in memory: a restart signs every user out).`)
  }
}

const modeOf = (stats: Stats): string => `0${(stats.mode & 0o777).toString(8).padStart(3, '0')}`

function statOrCode (path: string): Stats | undefined | string {
  try {
    return statSync(path)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    // ENOTDIR: a file stands where a parent directory should; creationProblem reports it.
    return code === 'ENOENT' || code === 'ENOTDIR' ? undefined : code ?? 'error'
  }
}

const stateDirectoryOf = (dataDirectory: string, contentRoot: string): string =>
  isAbsolute(dataDirectory) ? dataDirectory : resolve(contentRoot, dataDirectory)

/**
 * The data directory as startup will find it, read-only (`npm run check-config` runs it; startup
 * runs it in {@link prepareStateFile} before creating anything): a directory that cannot be
 * created, read or written, a file in its place, a directory or store file open to group or
 * others. Each problem names `State:Embedded:DataDirectory` and the next step. `fileName`: another
 * store's file in the same directory (the embedded directory store's `directory.sqlite`).
 */
export function inspectStateDirectory (dataDirectory: string, contentRoot: string, rootKey: string, fileName: string = STATE_FILE): ConfigurationProblem[] {
  const { problem, accessProblem } = directoryProblems(rootKey)
  const directory = stateDirectoryOf(dataDirectory, contentRoot)
  const stats = statOrCode(directory)
  if (typeof stats === 'string') return [accessProblem('cannot be read', stats)]
  if (stats === undefined) {
    const reason = creationProblem(directory)
    return reason === undefined ? [] : [accessProblem('does not exist and cannot be created', reason)]
  }
  if (!stats.isDirectory()) return [problem('must name a directory; a file is in its place.')]
  if ((stats.mode & 0o077) !== 0) return [problem(`must be accessible to its owner only (mode 0700); it has mode ${modeOf(stats)}. Run chmod 700 on it.`)]
  const file = join(directory, fileName)
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    const fileStats = statOrCode(path)
    if (typeof fileStats === 'string') return [accessProblem(`holds a ${path.slice(directory.length + 1)} that cannot be read`, fileStats)]
    if (fileStats !== undefined && (fileStats.mode & 0o077) !== 0) {
      return [problem(`holds a ${path.slice(directory.length + 1)} readable or writable by others (mode ${modeOf(fileStats)}; required 0600). Run chmod 600 on it.`)]
    }
  }
  // SQLite writes the file and creates its -wal and -shm beside it.
  const reason = writeProblem(directory)
  return reason === undefined ? [] : [accessProblem('cannot be written', reason)]
}

/**
 * The store's file, with its directory created (0700) or checked: a directory or file open to
 * group or others is refused, as the key directory is (data-protection/key-ring.ts). The file is
 * created 0600 before SQLite opens it; SQLite gives its `-wal` and `-shm` files the same mode.
 */
export function prepareStateFile (dataDirectory: string, contentRoot: string, rootKey: string, fileName: string = STATE_FILE): string {
  const problems = inspectStateDirectory(dataDirectory, contentRoot, rootKey, fileName)
  const { accessProblem } = directoryProblems(rootKey)
  if (problems.length > 0) throw new ConfigurationError(problems)
  const directory = stateDirectoryOf(dataDirectory, contentRoot)
  if (statOrCode(directory) === undefined) {
    try {
      mkdirSync(directory, { recursive: true, mode: 0o700 })
      chmodSync(directory, 0o700)
    } catch (error) {
      throw new ConfigurationError([accessProblem('does not exist and cannot be created', (error as NodeJS.ErrnoException).code ?? 'error')], { cause: error })
    }
  }
  const file = join(directory, fileName)
  if (statOrCode(file) === undefined) {
    try {
      closeSync(openSync(file, 'wx', 0o600))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new ConfigurationError([accessProblem('cannot be written', (error as NodeJS.ErrnoException).code ?? 'error')], { cause: error })
    }
  }
  return file
}

type Change =
  | { readonly op: 'put', readonly key: string, readonly kind: StateKind, readonly value: string, readonly expiresAt: number }
  | { readonly op: 'replace', readonly key: string, readonly value: string }
  | { readonly op: 'member', readonly key: string, readonly kind: StateKind, readonly member: string, readonly expiresAt: number }
  | { readonly op: 'unmember', readonly key: string, readonly member: string }
  | { readonly op: 'delete', readonly key: string }
  | { readonly op: 'sweep', readonly now: number }

const SCHEMA = `
CREATE TABLE IF NOT EXISTS state (
  key TEXT NOT NULL,
  member TEXT NOT NULL,
  kind TEXT NOT NULL,
  value TEXT,
  expires_at INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  PRIMARY KEY (key, member)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS state_expiry ON state (expires_at);
`

export interface SqliteJournalEvents {
  /** A transaction failed (disk full, I/O error): writes answer 503 until one commits again. */
  readonly onWriteFailed?: (error: unknown) => void
  readonly onWriteRecovered?: () => void
}

/** How long after a failed commit the journal tries again by itself. */
const RETRY_MS = 1000

/** How often the checkpointer copies the WAL into the file (and syncs it: the only fsync). */
export const CHECKPOINT_INTERVAL_MS = 1000

/**
 * The checkpointer, a worker thread with a connection of its own: it copies committed
 * transactions from the WAL into the database file every {@link CHECKPOINT_INTERVAL_MS}
 * (`wal_checkpoint(PASSIVE)`, which never blocks the writer), so the fsyncs of a checkpoint
 * (hundreds of milliseconds on a busy disk) never run on the event loop. Commits on the event loop
 * only append to the WAL (synchronous=NORMAL).
 */
const CHECKPOINTER = `
const { parentPort, workerData } = require('node:worker_threads')
const { DatabaseSync } = require('node:sqlite')
const db = new DatabaseSync(workerData.file)
db.exec('PRAGMA busy_timeout = 5000; PRAGMA synchronous = NORMAL;')
const timer = setInterval(() => { try { db.exec('PRAGMA wal_checkpoint(PASSIVE)') } catch {} }, workerData.intervalMs)
parentPort.on('message', () => { clearInterval(timer); db.close(); parentPort.close() })
`

function startCheckpointer (file: string): Worker {
  const worker = new Worker(CHECKPOINTER, { eval: true, workerData: { file, intervalMs: CHECKPOINT_INTERVAL_MS }, stdout: false, stderr: false })
  // A failed checkpointer only means checkpoints at close and at the next start.
  worker.on('error', () => {})
  worker.unref()
  return worker
}

/** The journal of one embedded store: the changes of each event-loop turn committed in one transaction. */
export class SqliteJournal implements EmbeddedStoreJournal {
  readonly #db: Database
  readonly #statements: Record<Change['op'] | 'extend', Statement>
  readonly #events: SqliteJournalEvents
  readonly #checkpointer: Worker
  readonly #lock: StateFileLock
  #pending: Change[] = []
  #waiters: Array<{ resolve: () => void, reject: (error: unknown) => void }> = []
  #scheduled = false
  #seq: number
  #failed = false
  #closed = false
  #retry: NodeJS.Timeout | undefined

  private constructor (db: Database, file: string, events: SqliteJournalEvents, lock: StateFileLock) {
    this.#db = db
    this.#lock = lock
    this.#events = events
    this.#checkpointer = startCheckpointer(file)
    this.#statements = {
      put: db.prepare('INSERT OR REPLACE INTO state (key, member, kind, value, expires_at, seq) VALUES (?, \'\', ?, ?, ?, ?)'),
      replace: db.prepare('UPDATE state SET value = ? WHERE key = ? AND member = \'\''),
      member: db.prepare('INSERT INTO state (key, member, kind, value, expires_at, seq) VALUES (?, ?, ?, NULL, ?, ?) ON CONFLICT (key, member) DO UPDATE SET expires_at = excluded.expires_at'),
      extend: db.prepare('UPDATE state SET expires_at = ? WHERE key = ? AND expires_at < ?'),
      unmember: db.prepare('DELETE FROM state WHERE key = ? AND member = ?'),
      delete: db.prepare('DELETE FROM state WHERE key = ?'),
      sweep: db.prepare('DELETE FROM state WHERE expires_at <= ?')
    }
    const last = db.prepare('SELECT MAX(seq) AS seq FROM state').all()[0] as { seq: number | null } | undefined
    this.#seq = (last?.seq ?? 0) + 1
  }

  /**
   * Opens (creating when absent) the journal in `file` and reads back every record unexpired at
   * `now`, in write order, after deleting the expired ones. Holds the file's exclusive lock until
   * closed (state/state-file-lock.ts); a file in use by another process or one SQLite cannot
   * read throws a {@link ConfigurationError}.
   */
  static open (sqlite: SqliteModule, file: string, now: number, events: SqliteJournalEvents, rootKey: string): { journal: SqliteJournal, records: JournalRecord[] } {
    const lock = StateFileLock.acquire(sqlite.DatabaseSync, file, rootKey)
    let db: Database | undefined
    try {
      db = new sqlite.DatabaseSync(file)
      // Checkpoints run in the checkpointer thread, never in a commit on the event loop.
      db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA wal_autocheckpoint = 0;')
      db.exec(SCHEMA)
      db.prepare('DELETE FROM state WHERE expires_at <= ?').run(now)
      const rows = db.prepare('SELECT key, member, value, expires_at AS expiresAt FROM state ORDER BY seq').all() as Array<{ key: string, member: string, value: string | null, expiresAt: number }>
      const records = new Map<string, { key: string, value: string | string[], expiresAt: number }>()
      for (const row of rows) {
        const record = records.get(row.key)
        if (row.value !== null) records.set(row.key, { key: row.key, value: row.value, expiresAt: row.expiresAt })
        else if (record !== undefined && Array.isArray(record.value)) {
          record.value.push(row.member)
          record.expiresAt = Math.max(record.expiresAt, row.expiresAt)
        } else records.set(row.key, { key: row.key, value: [row.member], expiresAt: row.expiresAt })
      }
      return { journal: new SqliteJournal(db, file, events, lock), records: [...records.values()] }
    } catch (error) {
      db?.close()
      lock.release()
      throw stateFileProblem(file, error, rootKey)
    }
  }

  status (): StateStoreStatus {
    return this.#failed ? { available: false, reason: 'write_failed' } : { available: true }
  }

  #queue (change: Change): void {
    if (this.#closed) return
    this.#pending.push(change)
    if (this.#scheduled) return
    this.#scheduled = true
    setImmediate(() => { this.flush() })
  }

  put (key: string, kind: StateKind, value: string, expiresAt: number): void { this.#queue({ op: 'put', key, kind, value, expiresAt }) }
  replaceValue (key: string, value: string): void { this.#queue({ op: 'replace', key, value }) }
  addMember (key: string, kind: StateKind, member: string, expiresAt: number): void { this.#queue({ op: 'member', key, kind, member, expiresAt }) }
  removeMember (key: string, member: string): void { this.#queue({ op: 'unmember', key, member }) }
  delete (key: string): void { this.#queue({ op: 'delete', key }) }
  sweep (now: number): void { this.#queue({ op: 'sweep', now }) }

  async committed (): Promise<void> {
    if (this.#pending.length === 0 && !this.#failed) return
    await new Promise<void>((resolve, reject) => { this.#waiters.push({ resolve, reject }) })
  }

  #apply (change: Change): void {
    const statements = this.#statements
    switch (change.op) {
      case 'put': statements.put.run(change.key, change.kind, change.value, change.expiresAt, this.#seq++); break
      case 'replace': statements.replace.run(change.value, change.key); break
      case 'member':
        statements.member.run(change.key, change.member, change.kind, change.expiresAt, this.#seq++)
        statements.extend.run(change.expiresAt, change.key, change.expiresAt)
        break
      case 'unmember': statements.unmember.run(change.key, change.member); break
      case 'delete': statements.delete.run(change.key); break
      case 'sweep': statements.sweep.run(change.now); break
    }
  }

  /** Commits what is pending in one transaction and answers the waiting writes. */
  flush (): void {
    this.#scheduled = false
    if (this.#retry !== undefined) clearTimeout(this.#retry)
    this.#retry = undefined
    const changes = this.#pending
    const waiters = this.#waiters
    this.#waiters = []
    if (changes.length > 0) {
      try {
        this.#db.exec('BEGIN')
        try {
          for (const change of changes) this.#apply(change)
          this.#db.exec('COMMIT')
        } catch (error) {
          this.#db.exec('ROLLBACK')
          throw error
        }
      } catch (error) {
        // Kept, in order, for the next attempt; the writes waiting now fail closed (503).
        if (!this.#failed) this.#events.onWriteFailed?.(error)
        this.#failed = true
        const failure = new StateStoreUnavailableError('write_failed', { cause: error })
        for (const waiter of waiters) waiter.reject(failure)
        if (!this.#closed) {
          this.#retry = setTimeout(() => { this.flush() }, RETRY_MS)
          this.#retry.unref()
        }
        return
      }
      this.#pending = []
    }
    if (this.#failed) {
      this.#failed = false
      this.#events.onWriteRecovered?.()
    }
    for (const waiter of waiters) waiter.resolve()
  }

  /** Commits what is pending, checkpoints the WAL into the file, then closes it (a clean stop loses nothing). */
  async close (): Promise<void> {
    if (this.#closed) return
    this.flush()
    this.#closed = true
    if (this.#retry !== undefined) clearTimeout(this.#retry)
    await this.#checkpointer.terminate()
    try {
      this.#db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
    } finally {
      this.#db.close()
      this.#lock.release()
    }
  }
}
