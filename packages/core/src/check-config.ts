/**
 * The `check-config` command an app's `check-config.ts` runs ({@link runCheckConfig}):
 * `npm run check-config [-- --json]` (built: `node dist/check-config.js`) loads and validates the
 * configuration exactly as startup does (`.env` included in Development), prints a readable
 * summary (or, with `--json`, one JSON document for machines) and exits 0 (valid) or 1 (invalid)
 * without starting the server. Exit 2: an unknown argument. Never prints a configured value.
 */
import { isDevelopment } from './config/environment.js'
import { environmentNameFrom, loadConfiguration } from './config/load.js'
import { readDotEnv } from './config/sources.js'
import { formatSummary, summarizeConfiguration } from './config/summary.js'

const USAGE = 'Usage: npm run check-config [-- --json]\n'

/** What {@link runCheckConfig} needs. */
export interface CheckConfigOptions {
  /** The app root, as for `runServer`. */
  readonly contentRoot: string
  /** The command's arguments; default `process.argv.slice(2)`. */
  readonly args?: readonly string[]
  /** The application name (configuration root key), as for `runServer`. Default `ProjectTemplate`. */
  readonly applicationName?: string
}

/** Validates the app's configuration and prints the summary; sets `process.exitCode` (0 valid, 1 invalid, 2 usage). */
export function runCheckConfig (options: CheckConfigOptions): void {
  const args = options.args ?? process.argv.slice(2)
  const unknown = args.filter((arg) => arg !== '--json')
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE)
  } else if (unknown.length > 0) {
    process.stderr.write(`check-config: unknown argument ${unknown[0] ?? ''}${/^-*js/i.test(unknown[0] ?? '') ? ' (did you mean --json?)' : ''}\n${USAGE}`)
    process.exitCode = 2
  } else {
    const dotenv = isDevelopment(environmentNameFrom(process.env.NODE_ENV)) ? readDotEnv(options.contentRoot) : undefined
    const loaded = loadConfiguration({ env: process.env, contentRoot: options.contentRoot, dotenv, applicationName: options.applicationName })
    const summary = summarizeConfiguration(loaded)
    process.stdout.write(args.includes('--json') ? `${JSON.stringify(summary, null, 2)}\n` : formatSummary(summary, loaded.applicationName))
    process.exitCode = summary.valid ? 0 : 1
  }
}
