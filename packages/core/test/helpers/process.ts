/**
 * Child processes for the starter app's entry points (template/src/server.ts and check-config.ts
 * run through tsx, cwd = the app's root), on `@project-template/core/testing`'s runProcess. Their
 * environment names the core's tsconfig.json (TSX_TSCONFIG_PATH), whose `paths` make
 * `@project-template/core` this package's src/, as in the tests themselves.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { APP_ROOT, CORE_ROOT } from './app.js'
import { waitFor } from './wait.js'
import { cleanEnv as cleanEnvOf, runProcess, type Running } from '../../src/testing/process.js'

export { jsonLines, runProcess } from '../../src/testing/process.js'
export type { Running } from '../../src/testing/process.js'

const CORE_TSCONFIG = join(CORE_ROOT, 'tsconfig.json')

/** A base environment: no configuration keys from the caller, user secrets pointed nowhere, the closed posture, the core from source. */
export function cleanEnv (extra: Record<string, string>): NodeJS.ProcessEnv {
  return { TSX_TSCONFIG_PATH: CORE_TSCONFIG, ...cleanEnvOf(extra) }
}

export function runEntryPoint (script: string, env: NodeJS.ProcessEnv, args: readonly string[] = []): Running {
  // `node --import tsx` is `tsx <script>` in one process, so signals reach the app itself.
  return runProcess(process.execPath, ['--import', 'tsx', script, ...args], { cwd: APP_ROOT, env: { TSX_TSCONFIG_PATH: CORE_TSCONFIG, ...env } })
}

/** test/soak/soak-server.ts running as its own process (see {@link startSoakServer}). */
export interface SoakServer {
  stdout: () => string
  stderr: () => string
  /** Waits until it prints its port (at most 30 s) and /health/ready answers 200 (at most `readyTimeoutMs`); its origin. */
  ready: (readyTimeoutMs: number) => Promise<string>
  /** SIGTERM, then SIGKILL if it has not exited within 10 s. */
  stop: () => Promise<void>
}

/** Starts test/soak/soak-server.ts in production mode with this process's environment plus `env` (SOAK_REDIS, SOAK_REDIS_SETTINGS). */
export function startSoakServer (env: Record<string, string>): SoakServer {
  const child = spawn(process.execPath, ['--import', 'tsx', join(CORE_ROOT, 'test/soak/soak-server.ts')], {
    cwd: APP_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_ENV: 'production', ...env }
  })
  let stderr = ''
  let stdout = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    async ready (readyTimeoutMs) {
      await waitFor(() => stdout.includes('"port"'), 'the app to listen', 30_000)
      const origin = `http://127.0.0.1:${(JSON.parse(stdout.split('\n')[0] ?? '{}') as { port: number }).port}`
      await waitFor(async () => (await fetch(`${origin}/health/ready`, { signal: AbortSignal.timeout(5_000) })).status === 200, 'the app to be ready', readyTimeoutMs)
      return origin
    },
    async stop () {
      child.kill('SIGTERM')
      const exited = await Promise.race([once(child, 'exit').then(([code]) => code as number | null), sleep(10_000).then(() => 'timeout')])
      if (exited === 'timeout') child.kill('SIGKILL')
    }
  }
}
