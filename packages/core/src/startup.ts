/**
 * What both entry points (server.ts, check-config.ts) share: how configuration findings are
 * reported.
 */
import type { Logger } from 'pino'
import type { LoadedConfiguration } from './config/load.js'
import type { ConfigurationError } from './errors.js'

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
