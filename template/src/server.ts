/**
 * Process entry: load and validate configuration (exit 1 before listening when invalid), build the
 * app, listen on HOST:PORT (default 127.0.0.1:5000), close gracefully on SIGTERM/SIGINT.
 * The only module besides check-config.ts that reads process.env.
 */
import { buildApp } from './app.js'
import { loadConfiguration } from './config/load.js'
import { createLogger } from './logger.js'
import { ConfigurationError } from './errors.js'
import { CONTENT_ROOT, reportConfiguration, reportConfigurationError } from './startup.js'

export const DEFAULT_HOST = '127.0.0.1'
export const DEFAULT_PORT = 5000
const SHUTDOWN_TIMEOUT_MS = 10_000

function parsePort (value: string | undefined): number | undefined {
  if (value === undefined || value === '') return DEFAULT_PORT
  if (!/^\d{1,5}$/.test(value)) return undefined
  const port = Number(value)
  return port <= 65535 ? port : undefined
}

async function main (): Promise<void> {
  const loaded = loadConfiguration({ env: process.env, contentRoot: CONTENT_ROOT })
  const logger = createLogger(loaded.config.Logging.Level)
  // Logging:Level silent must not hide why the process refuses to start.
  const startupLogger = loaded.config.Logging.Level === 'silent' ? createLogger('warn') : logger
  const port = parsePort(process.env.PORT)
  const host = process.env.HOST === undefined || process.env.HOST === '' ? DEFAULT_HOST : process.env.HOST
  const valid = reportConfiguration(loaded, startupLogger)
  if (port === undefined) {
    startupLogger.error({ event: 'configuration.invalid', code: 'APP_ERR_CONFIG_INVALID', errors: ['PORT must be an integer from 0 to 65535.'] }, 'configuration is invalid; the application will not start')
  }
  if (!valid || port === undefined) {
    process.exitCode = 1
    return
  }
  logger.info({ event: 'configuration.loaded', environment: loaded.environmentName, sources: loaded.sources }, 'configuration loaded')

  let app: Awaited<ReturnType<typeof buildApp>>
  try {
    app = await buildApp({ config: loaded.config, environmentName: loaded.environmentName, contentRoot: CONTENT_ROOT, logger })
  } catch (error) {
    // A problem found only when a resource is opened (the key directory): reported like validation.
    if (!(error instanceof ConfigurationError)) throw error
    reportConfigurationError(error, loaded.environmentName, startupLogger)
    process.exitCode = 1
    return
  }
  let closing = false
  const shutdown = (signal: string): void => {
    if (closing) return
    closing = true
    logger.info({ event: 'server.closing', signal }, 'shutting down; finishing in-flight requests')
    const timer = setTimeout(() => {
      logger.error({ event: 'server.close_timeout' }, 'graceful shutdown timed out')
      process.exit(1)
    }, SHUTDOWN_TIMEOUT_MS)
    timer.unref()
    // close() drops connections idle at that moment; a keep-alive connection whose in-flight
    // request finishes afterwards would hold the server open until the timeout, so sweep again.
    const sweep = setInterval(() => { app.server.closeIdleConnections() }, 100)
    sweep.unref()
    app.close().then(() => {
      clearInterval(sweep)
      logger.info({ event: 'server.closed' }, 'server closed')
    }, (error: unknown) => {
      clearInterval(sweep)
      logger.error({ err: error, event: 'server.close_failed' }, 'graceful shutdown failed')
      process.exitCode = 1
    })
  }
  process.once('SIGTERM', () => { shutdown('SIGTERM') })
  process.once('SIGINT', () => { shutdown('SIGINT') })

  await app.listen({ host, port })
}

main().catch((error: unknown) => {
  createLogger('error').fatal({ err: error, event: 'server.start_failed' }, 'the application failed to start')
  process.exitCode = 1
})
