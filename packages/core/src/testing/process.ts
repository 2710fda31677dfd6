/**
 * Child processes for an app's entry points (`npm start`, `node dist/server.js`, check-config): a
 * clean environment (nothing inherited under the app's root key), collected output, bounded waits.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { CLOSED_POSTURE, EPHEMERAL_STATE, settingsToEnv } from './app.js'
import { rootKeyOf } from '../application-name.js'

/**
 * A base environment: PATH and HOME only, user secrets pointed nowhere, the same closed posture
 * and in-memory state as {@link buildTestApp}, then `extra`; settings under `applicationName` (none:
 * the default application's root key, {@link rootKeyOf}).
 *
 * @public @experimental
 */
export function cleanEnv (extra: Record<string, string>, applicationName?: string): NodeJS.ProcessEnv {
  const rootKey = rootKeyOf(applicationName)
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    XDG_CONFIG_HOME: '/nonexistent-test-config',
    ...settingsToEnv(CLOSED_POSTURE, rootKey),
    ...settingsToEnv(EPHEMERAL_STATE, rootKey),
    ...extra
  }
}

/** A child process started by {@link runProcess}. @public @experimental */
export interface Running {
  readonly child: ChildProcess
  stdout: () => string
  stderr: () => string
  /** Resolves with the exit code (or the signal name), rejects after `timeoutMs`. */
  exited: (timeoutMs?: number) => Promise<number | string>
  /** Resolves with the first stdout JSON line for which `match` is true. */
  waitForLine: (match: (record: Record<string, unknown>) => boolean, timeoutMs?: number) => Promise<Record<string, unknown>>
  kill: () => void
}

/**
 * Any command, with its output collected. `detached` puts it in its own process
 * group (for `npm start`, whose shell and node child are then signalled together by `kill(-pid)`).
 *
 * @public @experimental
 */
export function runProcess (command: string, args: readonly string[], options: { cwd: string, env: NodeJS.ProcessEnv, detached?: boolean }): Running {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: options.detached === true, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  const listeners = new Set<() => void>()
  child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString('utf8'); for (const listener of listeners) listener() })
  child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString('utf8') })
  const exit = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => { resolve(code ?? signal ?? 'unknown') })
  })
  const records = (): Array<Record<string, unknown>> => out.split('\n').filter((line) => line.startsWith('{')).map((line) => {
    try { return JSON.parse(line) as Record<string, unknown> } catch { return {} }
  })
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited: async (timeoutMs = 20_000) => await Promise.race([
      exit,
      new Promise<never>((_resolve, reject) => setTimeout(() => { reject(new Error(`process did not exit within ${timeoutMs} ms; stdout: ${out} stderr: ${err}`)) }, timeoutMs).unref())
    ]),
    waitForLine: async (match, timeoutMs = 20_000) => await new Promise((resolve, reject) => {
      const check = (): void => {
        const found = records().find(match)
        if (found !== undefined) { listeners.delete(check); clearTimeout(timer); resolve(found) }
      }
      const timer = setTimeout(() => { listeners.delete(check); reject(new Error(`no matching log line within ${timeoutMs} ms; stdout: ${out} stderr: ${err}`)) }, timeoutMs)
      listeners.add(check)
      exit.then(() => { check(); if (listeners.has(check)) { listeners.delete(check); clearTimeout(timer); reject(new Error(`process exited; stdout: ${out} stderr: ${err}`)) } })
      check()
    }),
    kill: () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      if (options.detached === true && child.pid !== undefined) {
        try { process.kill(-child.pid, 'SIGKILL') } catch { child.kill('SIGKILL') }
      } else {
        child.kill('SIGKILL')
      }
    }
  }
}

/** stdout parsed as JSON lines; fails on a line that is not JSON. @public @experimental */
export function jsonLines (text: string): Array<Record<string, unknown>> {
  return text.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as Record<string, unknown>)
}
