/**
 * The `check-config` command an app's `check-config.ts` runs ({@link runCheckConfig}):
 * `npm run check-config [-- --json]` (built: `node dist/check-config.js`) loads and validates the
 * configuration exactly as startup does (the same loader, startup.ts: `.env` included in
 * Development, and the read-only checks of the files startup opens), checks that the packages
 * startup would import are there (with Telemetry:Enabled, the OpenTelemetry SDK: the same imports
 * and the same message as startup, telemetry/sdk.ts), prints a readable summary (or, with
 * `--json`, one JSON document for machines) and exits 0 (valid) or 1 (invalid) without starting
 * the server. Exit 2: an unknown argument. Never prints a configured value.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { DOTENV_FILE } from './config/sources.js'
import type { LoadedConfiguration } from './providers/application-schema.js'
import { formatSummary, summarizeConfiguration } from './configuration-summary.js'
import { loadEntryPointConfiguration } from './startup.js'

const USAGE = 'Usage: npm run check-config [-- --json]\n'

/** What {@link runCheckConfig} needs. @public */
export interface CheckConfigOptions {
  /** The app root, as for `runServer`. */
  readonly contentRoot: string
  /** The command's arguments; default `process.argv.slice(2)`. */
  readonly args?: readonly string[]
  /** The application name (configuration root key), as for `runServer`. Default `ProjectTemplate`. */
  readonly applicationName?: string
}

/** Validates the app's configuration and prints the summary; sets `process.exitCode` (0 valid, 1 invalid, 2 usage). @public */
export async function runCheckConfig (options: CheckConfigOptions): Promise<void> {
  const args = options.args ?? process.argv.slice(2)
  const unknown = args.filter((arg) => arg !== '--json')
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE)
  } else if (unknown.length > 0) {
    process.stderr.write(`check-config: unknown argument ${unknown[0] ?? ''}${/^-*js/i.test(unknown[0] ?? '') ? ' (did you mean --json?)' : ''}\n${USAGE}`)
    process.exitCode = 2
  } else {
    const { loaded: validated, dotenv, environmentFrom } = await loadEntryPointConfiguration(process.env, options.contentRoot, options.applicationName)
    const loaded = await withInstalledPackagesChecked(validated)
    const dotenvIgnored = dotenv === undefined && existsSync(join(options.contentRoot, DOTENV_FILE))
    const summary = summarizeConfiguration(loaded, { environmentFrom, dotenvIgnored })
    process.stdout.write(args.includes('--json') ? `${JSON.stringify(summary, null, 2)}\n` : formatSummary(summary, loaded.applicationName))
    process.exitCode = summary.valid ? 0 : 1
  }
}

/**
 * `loaded` with the problems startup would meet importing the packages its settings need: with
 * Telemetry:Enabled, the OpenTelemetry SDK packages, imported as startup imports them (the SDK
 * module is loaded only then, as at startup).
 */
async function withInstalledPackagesChecked (loaded: LoadedConfiguration): Promise<LoadedConfiguration> {
  if (loaded.config.Telemetry.Enabled !== true) return loaded
  const { missingSdkProblems } = await import('./telemetry/sdk.js')
  const problems = await missingSdkProblems(loaded.config.Telemetry, loaded.applicationName)
  return problems.length === 0 ? loaded : { ...loaded, errors: [...loaded.errors, ...problems] }
}
