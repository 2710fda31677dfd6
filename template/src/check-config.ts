/**
 * `npm run check-config`: loads and validates the configuration exactly as startup does, prints
 * the findings, and exits 0 (valid) or 1 (invalid) without starting the server.
 */
import { loadConfiguration } from './config/load.js'
import { createLogger } from './logger.js'
import { CONTENT_ROOT, reportConfiguration } from './startup.js'

const loaded = loadConfiguration({ env: process.env, contentRoot: CONTENT_ROOT })
const logger = createLogger(loaded.config.Logging.Level === 'silent' ? 'info' : loaded.config.Logging.Level)
if (reportConfiguration(loaded, logger)) {
  logger.info({ event: 'configuration.valid', environment: loaded.environmentName, sources: loaded.sources }, 'configuration is valid')
} else {
  process.exitCode = 1
}
