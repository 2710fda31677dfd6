/**
 * The embedded store's file is one process's (docs/security/keys-and-storage.md, "The embedded store on disk";
 * issue 26, items 3 and 5).
 *
 * - **One process.** Two processes on one `state.sqlite` would each serve from their own memory:
 *   a logout on one would leave the cookie valid on the other. So the journal holds an exclusive
 *   SQLite lock on `state.sqlite.lock` beside it for as long as it is open (a connection in
 *   `locking_mode=EXCLUSIVE` inside `BEGIN EXCLUSIVE`, never committed). SQLite's lock is a POSIX
 *   advisory lock, which the operating system drops when the process ends, SIGKILL included, so
 *   a restart is never blocked by a stale lock, and a PID file's pitfalls (PID 1 in every
 *   container) do not arise. A second process refuses to start, naming `State:Provider` Redis.
 * - **A file SQLite cannot read** (corrupt, truncated, not a database) stops startup with one
 *   configuration message naming the file, the setting and the choices; the file is left as it is.
 *
 * Both are {@link ConfigurationError}s keyed `<Root>:State:Embedded:DataDirectory` under the app's
 * root key (the store is opened with it), reported as `configuration.invalid`, exit code 1.
 */
import { closeSync, openSync } from 'node:fs'
import { dirname } from 'node:path'
import { ConfigurationError } from '../errors.js'

/** The lock file beside the state file: `state.sqlite.lock`. */
export const LOCK_FILE_SUFFIX = '.lock'

/** The settings a lock or state file problem names, under the application's root key. */
const keysOf = (rootKey: string): { readonly dataDirectory: string, readonly provider: string, readonly persist: string } => ({
  dataDirectory: `${rootKey}:State:Embedded:DataDirectory`,
  provider: `${rootKey}:State:Provider`,
  persist: `${rootKey}:State:Embedded:Persist`
})

/** SQLite's primary result codes that mean "this file is not a sound database". */
const SQLITE_CORRUPT = 11
const SQLITE_NOTADB = 26
const SQLITE_BUSY = 5
const SQLITE_LOCKED = 6

/** The part of a `node:sqlite` connection the lock uses. */
interface LockConnection {
  exec: (sql: string) => void
  close: () => void
}
type OpenConnection = new (path: string) => LockConnection

/** SQLite's primary result code of a `node:sqlite` error, or undefined for any other error. */
function sqliteCodeOf (error: unknown): number | undefined {
  const { code, errcode } = (error ?? {}) as { code?: unknown, errcode?: unknown }
  return code === 'ERR_SQLITE_ERROR' && typeof errcode === 'number' ? errcode & 0xff : undefined
}

const problem = (rootKey: string, message: string, cause: unknown): ConfigurationError =>
  new ConfigurationError([{ key: keysOf(rootKey).dataDirectory, message }], { cause })

/** The exclusive lock of one state file, held until {@link release}. */
export class StateFileLock {
  readonly #connection: LockConnection
  #released = false

  private constructor (connection: LockConnection) {
    this.#connection = connection
  }

  /**
   * Takes the lock of `stateFile` without waiting. Throws a {@link ConfigurationError} when
   * another process (or another open store in this one) holds it.
   */
  static acquire (DatabaseSync: OpenConnection, stateFile: string, rootKey: string): StateFileLock {
    const path = `${stateFile}${LOCK_FILE_SUFFIX}`
    const keys = keysOf(rootKey)
    try {
      // Created owner-only before SQLite opens it, as the state file is.
      closeSync(openSync(path, 'a', 0o600))
    } catch (error) {
      throw problem(rootKey, `${keys.dataDirectory} cannot hold the state store's lock file ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`, error)
    }
    let connection: LockConnection | undefined
    try {
      connection = new DatabaseSync(path)
      connection.exec('PRAGMA busy_timeout = 0; PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE')
      return new StateFileLock(connection)
    } catch (error) {
      try { connection?.close() } catch {}
      const code = sqliteCodeOf(error)
      if (code === SQLITE_BUSY || code === SQLITE_LOCKED) {
        throw problem(rootKey, `${keys.dataDirectory} (${dirname(stateFile)}) is in use by another process: the embedded state store is for one process only. ` +
          `To run several instances, set ${keys.provider} to Redis (docs/scale-out.md); to run one, stop the other process or give this one its own ${keys.dataDirectory}.`, error)
      }
      throw problem(rootKey, `${keys.dataDirectory}: the state store's lock file ${path} cannot be locked (SQLite error ${code ?? 'unknown'}).`, error)
    }
  }

  /** Drops the lock (the store is closed). */
  release (): void {
    if (this.#released) return
    this.#released = true
    try { this.#connection.close() } catch {}
  }
}

/**
 * What opening the state file's SQLite database threw, as a configuration problem when SQLite
 * refused the file (the error as it is otherwise). Names the file, the setting and what to do;
 * never the file's content (SQLite's message is a fixed phrase such as "file is not a database").
 */
export function stateFileProblem (stateFile: string, error: unknown, rootKey: string): unknown {
  const code = sqliteCodeOf(error)
  if (code === undefined) return error
  const keys = keysOf(rootKey)
  const reason = (error as Error).message.slice(0, 80)
  if (code === SQLITE_CORRUPT || code === SQLITE_NOTADB) {
    return problem(rootKey, `${keys.dataDirectory}: the embedded state store's file ${stateFile} is corrupt or truncated (SQLite: ${reason}); it was left untouched. ` +
      `Restore it from a backup; or move it (with any ${stateFile.slice(dirname(stateFile).length + 1)}-wal and -shm beside it) aside to start with an empty store (every user signs in again); ` +
      `or set ${keys.persist} to false to keep state in memory only.`, error)
  }
  return problem(rootKey, `${keys.dataDirectory}: the embedded state store's file ${stateFile} cannot be opened (SQLite: ${reason}). ` +
    `Check the file and its directory, restore it from a backup, or set ${keys.persist} to false to keep state in memory only.`, error)
}
