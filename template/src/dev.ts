/**
 * `npm run dev`: runs src/server.ts (through tsx, with the environment `npm run dev` sets:
 * NODE_ENV=development) and starts it again when the app's inputs change: any file under src/,
 * `.env` and `appsettings*.json` in the app root (what startup reads; docs/configuration.md).
 *
 * Why not `tsx watch`: it ignores every dot-file, `.env` included even when named with
 * `--include`; it restarts with SIGTERM, which the server answers with the production drain
 * (Hosting:ShutdownDelaySeconds, 5 s) until tsx kills it after 5 s; and it watches only the
 * modules the last run loaded. Here:
 * - the server is stopped with SIGINT, which it answers without the shutdown delay (run-server:
 *   the delay is for SIGTERM from an orchestrator), so a save is served again as soon as the
 *   new process listens (1.4-1.6 s measured on a busy two-core machine, against 6.6-7.0 s before);
 * - a server that exits on its own (a refused configuration) is started again at the next change
 *   of any watched file;
 * - changes within {@link SETTLE_MS} are one restart (editors write a file in several steps).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { watch, type FSWatcher } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { CONTENT_ROOT } from './content-root.js'

/** Milliseconds of quiet after a change before the server is started again. */
export const SETTLE_MS = 100
/** Milliseconds a stopping server is given before it is killed (it answers SIGINT at once unless a request hangs). */
export const STOP_TIMEOUT_MS = 3_000
/** Milliseconds the runner waits, after Ctrl+C, for the server to stop on the SIGINT it got too before sending its own. */
const CTRL_C_GRACE_MS = 1_000

/** Files in the app root whose change starts the server again: `.env` and `appsettings*.json`. */
export function isWatchedRootFile (name: string): boolean {
  return name === '.env' || /^appsettings.*\.json$/.test(name)
}

export interface DevOptions {
  /** The app root: `src/` below it and its `.env` and `appsettings*.json` are watched. */
  readonly root: string
  /** The server command, run in `root`: default `node --import tsx src/server.ts`. */
  readonly command?: readonly [string, ...string[]]
  /** Where the runner says what it does; default stderr. */
  readonly say?: (line: string) => void
}

export interface DevRunner {
  /**
   * Stops watching, then stops the server (SIGINT; with `signalled`, Ctrl+C in the terminal reached
   * the server too, so only if it has not stopped within a second: a second SIGINT would cut its
   * shutdown short) and waits for it.
   */
  readonly close: (options?: { readonly signalled?: boolean }) => Promise<void>
}

export function runDev (options: DevOptions): DevRunner {
  const [program, ...args] = options.command ?? [process.execPath, '--import', 'tsx', 'src/server.ts']
  const say = options.say ?? ((line: string) => { process.stderr.write(`dev: ${line}\n`) })
  let server: ChildProcess | undefined
  // The server being stopped on purpose: its exit is not news.
  let stopping: ChildProcess | undefined
  let exited: Promise<void> = Promise.resolve()
  let settle: NodeJS.Timeout | undefined
  let closed = false
  // One restart at a time; a change during a restart runs one more after it.
  let restarting: Promise<void> | undefined
  let again = false

  const start = (): void => {
    const child = spawn(program, args, { cwd: options.root, env: process.env, stdio: 'inherit' })
    server = child
    exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        if (server === child) server = undefined
        if (!closed && child !== stopping) say(`the server exited (${signal ?? `code ${code ?? 'none'}`}); it starts again when a file under src/, .env or appsettings*.json changes`)
        resolve()
      })
    })
  }
  const stop = async (signalled = false): Promise<void> => {
    const child = server
    if (child === undefined) return
    stopping = child
    const grace = signalled ? CTRL_C_GRACE_MS : 0
    const timers = [
      setTimeout(() => { child.kill('SIGINT') }, grace),
      setTimeout(() => { child.kill('SIGKILL') }, grace + STOP_TIMEOUT_MS)
    ]
    await exited
    for (const timer of timers) clearTimeout(timer)
  }
  const restart = async (): Promise<void> => {
    again = false
    await stop()
    if (!closed) start()
    restarting = again && !closed ? restart() : undefined
  }
  const changed = (what: string): void => {
    if (closed) return
    clearTimeout(settle)
    settle = setTimeout(() => {
      say(`${what} changed; starting the server again`)
      if (restarting !== undefined) again = true
      else restarting = restart()
    }, SETTLE_MS)
  }

  const watchers: FSWatcher[] = [
    watch(join(options.root, 'src'), { recursive: true }, (_event, name) => { changed(`src/${name ?? ''}`) }),
    watch(options.root, (_event, name) => { if (name !== null && isWatchedRootFile(name)) changed(name) })
  ]
  start()
  return {
    close: async ({ signalled = false } = {}) => {
      closed = true
      clearTimeout(settle)
      for (const watcher of watchers) watcher.close()
      await restarting
      await stop(signalled)
    }
  }
}

// `npm run dev` (tsx src/dev.ts); importing this module (the tests) starts nothing.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const runner = runDev({ root: CONTENT_ROOT })
  // Ctrl+C reaches the server too (one process group); SIGTERM from a tool does not.
  const quit = (signalled: boolean): void => { runner.close({ signalled }).then(() => process.exit(0), () => process.exit(1)) }
  process.once('SIGINT', () => { quit(true) })
  process.once('SIGTERM', () => { quit(false) })
}
