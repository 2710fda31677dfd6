/**
 * What both entry points (server.ts, check-config.ts) share: how the configuration is loaded
 * (`.env` in Development only, the checks startup makes when it opens its files) and how its
 * findings are reported. Sharing it is what keeps `npm run check-config` from passing what
 * startup refuses.
 */
import type { Logger } from 'pino'
import type { ConfigurationProblem } from './config/bind.js'
import { isDevelopment } from './config/environment.js'
import { environmentNameFrom } from './config/load.js'
import type { LoadedConfiguration } from './providers/application-schema.js'
import { loadConfiguration } from './configuration.js'
import { readDotEnv } from './config/sources.js'
import type { ConfigurationError } from './errors.js'
import { inspectStateDirectory, loadSqlite } from './state/sqlite-journal.js'

/** A process's configuration as both entry points load it. */
export interface EntryPointConfiguration {
  /** The configuration, its errors including {@link inspectResources}' findings. */
  readonly loaded: LoadedConfiguration
  /** `.env`'s variables when read (Development only), else undefined. */
  readonly dotenv: Readonly<Record<string, string>> | undefined
  /** Whether the environment name came from `NODE_ENV` or is the default (NODE_ENV unset or empty). */
  readonly environmentFrom: 'NODE_ENV' | 'default'
}

/**
 * Loads the configuration as startup does: the environment name from `NODE_ENV`, `.env` in the
 * app root in Development only (the real environment wins, docs/configuration.md), validation,
 * then the read-only checks of the files startup will open ({@link inspectResources}).
 */
export async function loadEntryPointConfiguration (env: NodeJS.ProcessEnv, contentRoot: string, applicationName: string | undefined): Promise<EntryPointConfiguration> {
  const dotenv = isDevelopment(environmentNameFrom(env.NODE_ENV)) ? readDotEnv(contentRoot) : undefined
  const loaded = loadConfiguration({ env, contentRoot, dotenv, applicationName })
  const resources = await inspectResources(loaded)
  return {
    loaded: resources.length === 0 ? loaded : { ...loaded, errors: [...loaded.errors, ...resources] },
    dotenv,
    environmentFrom: (env.NODE_ENV ?? '').trim() === '' ? 'default' : 'NODE_ENV'
  }
}

/**
 * The checks startup makes when it opens a file the configuration names and validation cannot
 * see from the values alone, run read-only: the embedded store's data directory (created,
 * readable, writable, owner-only), when the store is persisted on a Node.js with `node:sqlite`,
 * exactly as startup decides (plugins/state.ts). The key directory is checked by the validation
 * rules themselves (data-protection/settings-rules.ts).
 */
export async function inspectResources (loaded: LoadedConfiguration): Promise<ConfigurationProblem[]> {
  const state = loaded.config.State
  if (state.Provider !== 'Embedded' || !state.Embedded.Persist || await loadSqlite() === undefined) return []
  return inspectStateDirectory(state.Embedded.DataDirectory, loaded.contentRoot, loaded.applicationName)
}

/** Logs the warnings (unknown keys, secrets in settings files, insecure http) and the failures as one structured error; true when valid. */
export function reportConfiguration (loaded: LoadedConfiguration, logger: Logger): boolean {
  for (const warning of loaded.warnings) {
    logger.warn({ event: warning.event, key: warning.key, ...(warning.file === undefined ? {} : { file: warning.file }) }, warning.message)
  }
  if (loaded.errors.length === 0) return true
  logger.error({
    event: 'configuration.invalid',
    code: 'APP_ERR_CONFIG_INVALID',
    environment: loaded.environmentName,
    errors: loaded.errors.map((problem) => problem.message)
  }, 'configuration is invalid; the application will not start')
  return false
}

/** The same structured line for a configuration problem found while building the app. */
export function reportConfigurationError (error: ConfigurationError, environmentName: string, logger: Logger): void {
  logger.error({
    event: 'configuration.invalid',
    code: error.code,
    environment: environmentName,
    errors: error.problems.map((problem) => problem.message)
  }, 'configuration is invalid; the application will not start')
}
