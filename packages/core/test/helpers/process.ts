/**
 * Child processes for the starter app's entry points (template/src/server.ts and check-config.ts
 * run through tsx, cwd = the app's root), on `@project-template/core/testing`'s runProcess. Their
 * environment names the core's tsconfig.json (TSX_TSCONFIG_PATH), whose `paths` make
 * `@project-template/core` this package's src/, as in the tests themselves.
 */
import { join } from 'node:path'
import { APP_ROOT, CORE_ROOT } from './app.js'
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
