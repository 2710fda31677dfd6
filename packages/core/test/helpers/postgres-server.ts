/**
 * A real PostgreSQL server (Debian's `postgresql`, installed by scripts/install-test-dependencies.sh)
 * for the tests and the benchmark: a fresh cluster in a temporary directory (`initdb`, trust
 * authentication, no fsync), `postgres` on a loopback port and a unix socket in that directory,
 * stopped and removed by {@link PostgresServer.dispose}. PostgreSQL refuses to run as root, so as
 * root both run as the `postgres` user (the package creates it) and the directory is theirs.
 * Bounded waits; the package's own service is never used.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { closedPort } from './ports.js'

const ROOT = '/usr/lib/postgresql'

/** The bin directory of the newest installed PostgreSQL (POSTGRES_BIN overrides), or undefined. */
export function postgresBinaries (): string | undefined {
  if (process.env.POSTGRES_BIN !== undefined) return process.env.POSTGRES_BIN
  if (!existsSync(ROOT)) return undefined
  const versions = readdirSync(ROOT).filter((name) => /^\d+$/.test(name) && existsSync(join(ROOT, name, 'bin', 'postgres'))).sort((a, b) => Number(b) - Number(a))
  return versions[0] === undefined ? undefined : join(ROOT, versions[0], 'bin')
}

/** The uid and gid to run PostgreSQL as: the `postgres` user when this process is root. */
function runAs (): { uid: number, gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' })
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' })
  if (uid.status !== 0 || gid.status !== 0) throw new Error('running as root, but there is no postgres user to run PostgreSQL as: run npm run test:setup')
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) }
}

export class PostgresServer {
  readonly directory = mkdtempSync(join(tmpdir(), 'pt-postgres-'))
  readonly #bin: string
  readonly #user = runAs()
  #process: ChildProcess | undefined
  #output = ''
  #port = 0

  constructor () {
    const bin = postgresBinaries()
    if (bin === undefined) throw new Error(`PostgreSQL is missing under ${ROOT}: run npm run test:setup (installs Debian's postgresql)`)
    this.#bin = bin
  }

  get output (): string {
    return this.#output
  }

  /** The server's superuser on its loopback port, database `database`. */
  connectionString (database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.#port}/${database}`
  }

  /** Creates a cluster (initdb) and starts the server; resolves once it accepts connections. */
  async start (timeoutMs = 15_000): Promise<void> {
    const data = join(this.directory, 'data')
    mkdirSync(data, { mode: 0o700 })
    if (this.#user !== undefined) {
      chownSync(this.directory, this.#user.uid, this.#user.gid)
      chownSync(data, this.#user.uid, this.#user.gid)
    }
    const initdb = spawnSync(join(this.#bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C.UTF-8'], {
      encoding: 'utf8', timeout: timeoutMs, cwd: this.directory, ...this.#user
    })
    if (initdb.status !== 0) throw new Error(`initdb failed: ${initdb.stderr ?? ''}${initdb.stdout ?? ''}`)
    this.#port = await closedPort()
    const child = spawn(join(this.#bin, 'postgres'), [
      '-D', data, '-k', this.directory, '-h', '127.0.0.1', '-p', String(this.#port),
      '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=60'
    ], { stdio: ['ignore', 'pipe', 'pipe'], cwd: this.directory, ...this.#user })
    child.stdout?.on('data', (chunk: Buffer) => { this.#output += chunk.toString('utf8') })
    child.stderr?.on('data', (chunk: Buffer) => { this.#output += chunk.toString('utf8') })
    this.#process = child
    const { default: pg } = await import('pg')
    const deadline = Date.now() + timeoutMs
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`postgres exited: ${this.#output}`)
      const client = new pg.Client({ connectionString: this.connectionString(), connectionTimeoutMillis: 1000 })
      try {
        await client.connect()
        await client.end()
        return
      } catch {
        await client.end().catch(() => {})
        await sleep(50)
      }
    }
    throw new Error(`postgres did not accept connections within ${timeoutMs} ms: ${this.#output}`)
  }

  /** Runs SQL as the superuser (test set-up and inspection only). */
  async sql (text: string, parameters: unknown[] = [], database = 'postgres'): Promise<Array<Record<string, unknown>>> {
    const { default: pg } = await import('pg')
    const client = new pg.Client({ connectionString: this.connectionString(database) })
    await client.connect()
    try {
      return (await client.query(text, parameters)).rows as Array<Record<string, unknown>>
    } finally {
      await client.end()
    }
  }

  /** A new, empty database; its connection string. */
  async createDatabase (name: string): Promise<string> {
    if (!/^[a-z][a-z0-9_]{0,62}$/.test(name)) throw new Error('a database name of lower-case letters, digits and _')
    await this.sql(`CREATE DATABASE ${name}`)
    return this.connectionString(name)
  }

  /** Stops the server (fast shutdown, SIGINT), at most 5 s, then SIGKILL. */
  async stop (): Promise<void> {
    const child = this.#process
    this.#process = undefined
    if (child === undefined || child.exitCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGINT')
    await Promise.race([exited, sleep(5000, undefined, { ref: false })])
    if (child.exitCode === null) child.kill('SIGKILL')
  }

  async dispose (): Promise<void> {
    await this.stop()
    rmSync(this.directory, { recursive: true, force: true })
  }
}
