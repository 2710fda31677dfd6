/**
 * A real redis-server (Debian's package, installed by scripts/install-test-dependencies.sh) for
 * the tests: started on a unix socket in a temporary directory (no port to collide with), without
 * persistence, stopped or killed by the test, restartable on the same socket. Bounded waits.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

export const REDIS_SERVER = process.env.REDIS_SERVER ?? '/usr/bin/redis-server'

export interface RedisServerOptions {
  /** requirepass: clients must authenticate (the connection string then carries it). */
  readonly password?: string
  /** Also listen on this loopback TCP port; the connection string then uses it (redis://). */
  readonly port?: number
}

/**
 * One redis-server or redis-sentinel child process, shared by {@link RedisServer} and the
 * topologies' nodes (redis-topologies.ts): its output collected across restarts, a start that
 * waits (bounded) for it to answer, a stop by signal that ends in SIGKILL.
 */
export class RedisProcess {
  readonly #binary: string
  #process: ChildProcess | undefined
  #output = ''

  constructor (binary: string) {
    this.#binary = binary
  }

  get output (): string {
    return this.#output
  }

  get running (): boolean {
    return this.#process !== undefined && this.#process.exitCode === null
  }

  /** Spawns the binary with `args`; resolves once `answers()` holds, polled every 25 ms for at most `timeoutMs`. */
  async start (args: readonly string[], answers: () => boolean, where: string, timeoutMs: number): Promise<void> {
    if (!existsSync(this.#binary)) throw new Error(`${this.#binary} is missing: run npm run test:setup (installs Debian's redis-server and redis-sentinel)`)
    const child = spawn(this.#binary, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout?.on('data', (chunk: Buffer) => { this.#output += chunk.toString('utf8') })
    child.stderr?.on('data', (chunk: Buffer) => { this.#output += chunk.toString('utf8') })
    this.#process = child
    const deadline = Date.now() + timeoutMs
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`${this.#binary} exited: ${this.#output}`)
      if (answers()) return
      await sleep(25)
    }
    throw new Error(`${this.#binary} did not answer on ${where} within ${timeoutMs} ms: ${this.#output}`)
  }

  /** Signals the process and waits for it at most 5 s, then SIGKILLs it if it is still there. */
  async stop (signal: NodeJS.Signals): Promise<void> {
    const child = this.#process
    this.#process = undefined
    if (child === undefined || child.exitCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill(signal)
    await Promise.race([exited, sleep(5000, undefined, { ref: false })])
    if (child.exitCode === null) child.kill('SIGKILL')
  }
}

export class RedisServer {
  readonly directory = mkdtempSync(join(tmpdir(), 'pt-redis-'))
  readonly socket = join(this.directory, 'redis.sock')
  readonly #options: RedisServerOptions
  readonly #process = new RedisProcess(REDIS_SERVER)

  constructor (options: RedisServerOptions = {}) {
    this.#options = options
  }

  /** The connection string the app is configured with. */
  get connectionString (): string {
    const { password, port } = this.#options
    if (port !== undefined) return `redis://${password === undefined ? '' : `:${encodeURIComponent(password)}@`}127.0.0.1:${port}`
    return `unix:${this.socket}`
  }

  /** redis-cli's arguments to reach and authenticate to this server. */
  get #cliArgs (): string[] {
    return ['-s', this.socket, ...(this.#options.password === undefined ? [] : ['--no-auth-warning', '-a', this.#options.password])]
  }

  get output (): string {
    return this.#process.output
  }

  async start (timeoutMs = 10_000): Promise<void> {
    rmSync(this.socket, { force: true })
    await this.#process.start([
      '--port', String(this.#options.port ?? 0), '--bind', '127.0.0.1', '--unixsocket', this.socket, '--unixsocketperm', '700',
      ...(this.#options.password === undefined ? [] : ['--requirepass', this.#options.password]),
      '--save', '', '--appendonly', 'no', '--dir', this.directory, '--loglevel', 'warning'
    ], () => existsSync(this.socket) && this.#ping(), this.socket, timeoutMs)
  }

  #ping (): boolean {
    const result = spawnSync('redis-cli', [...this.#cliArgs, 'ping'], { encoding: 'utf8', timeout: 2000 })
    return result.stdout?.trim() === 'PONG'
  }

  /** Runs a redis-cli command against the server (test inspection only). */
  cli (...args: string[]): string {
    const result = spawnSync('redis-cli', [...this.#cliArgs, ...args], { encoding: 'utf8', timeout: 5000 })
    return result.stdout?.trim() ?? ''
  }

  /** Ends the server abruptly (SIGKILL), as a crash or a lost host would. */
  async kill (): Promise<void> {
    await this.#process.stop('SIGKILL')
  }

  async stop (): Promise<void> {
    await this.#process.stop('SIGTERM')
  }

  async dispose (): Promise<void> {
    await this.stop()
    rmSync(this.directory, { recursive: true, force: true })
  }
}
