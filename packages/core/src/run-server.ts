/**
 * The process runner an app's `server.ts` calls: load and validate configuration (exit 1 before
 * listening when invalid), create the app (the core and the app's parts), wait (bounded) for the
 * state store, listen on HOST:PORT (default 127.0.0.1:5000), drain and close gracefully on
 * SIGTERM/SIGINT. With check-config.ts, the only module that reads process.env.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from 'pino'
import { createApp, type ApplicationParts } from './create-app.js'
import { PROVIDERS_DOCUMENT } from './documentation.js'
import { enabledProviderInstancesUnder } from './providers/provider-instances.js'
import { DOTENV_FILE } from './config/sources.js'
import { ConfigurationError } from './errors.js'
import { createProcessLogger } from './logger.js'
import { loadEntryPointConfiguration, reportConfiguration, reportConfigurationError } from './startup.js'

/** @public */
export const DEFAULT_HOST = '127.0.0.1'
/** @public */
export const DEFAULT_PORT = 5000
const STATE_WAIT_INTERVAL_MS = 25

function parsePort (value: string | undefined): number | undefined {
  if (value === undefined || value === '') return DEFAULT_PORT
  if (!/^\d{1,5}$/.test(value)) return undefined
  const port = Number(value)
  return port <= 65535 ? port : undefined
}

/** What {@link runServer} needs: where the app lives, and what it adds to the core. @public */
export interface RunServerOptions extends ApplicationParts {
  /** The app root: `appsettings*.json`, `package.json` (userSecretsId), `public/`, `.env`, the key directory. */
  readonly contentRoot: string
}

/**
 * Runs the app as a process: configuration → logger → create → listen → graceful shutdown.
 * Resolves once listening (or once it has given up: then `process.exitCode` is 1 and the reason
 * is logged, `server.start_failed` or `configuration.invalid`); never rejects.
 *
 * @public
 */
export async function runServer (options: RunServerOptions): Promise<void> {
  // The process's one logger once created (the catch below writes the fatal line through it, so
  // that line comes last, after everything logged before it, from the same buffer).
  const started: { logger?: Logger } = {}
  try {
    await main(options, started)
  } catch (error) {
    const logger = started.logger ?? await createProcessLogger('error', 'Production', false)
    logger.fatal({ err: error, event: 'server.start_failed', code: (error as { code?: unknown } | null)?.code }, 'the application failed to start')
    process.exitCode = 1
  }
}

async function main (options: RunServerOptions, started: { logger?: Logger }): Promise<void> {
  const CONTENT_ROOT = options.contentRoot
  // `.env` in the app root, Development only; the real environment wins (docs/configuration.md).
  const { loaded, dotenv } = await loadEntryPointConfiguration(process.env, CONTENT_ROOT, options.applicationName)
  const env: NodeJS.ProcessEnv = { ...dotenv, ...process.env }
  const level = loaded.config.Logging.Level
  // Logging:Level silent must not hide why the process refuses to start: a child at warn, same stream.
  const logger = await createProcessLogger(level, loaded.environmentName, process.stdout.isTTY === true)
  const startupLogger = level === 'silent' ? logger.child({}, { level: 'warn' }) : logger
  started.logger = startupLogger
  const port = parsePort(env.PORT)
  const host = env.HOST === undefined || env.HOST === '' ? DEFAULT_HOST : env.HOST
  const valid = reportConfiguration(loaded, startupLogger)
  if (port === undefined) {
    startupLogger.error({ event: 'configuration.invalid', code: 'APP_ERR_CONFIG_INVALID', errors: ['PORT must be an integer from 0 to 65535.'] }, 'configuration is invalid; the application will not start')
  }
  if (!valid || port === undefined) {
    process.exitCode = 1
    return
  }
  logger.info({ event: 'configuration.loaded', environment: loaded.environmentName, sources: loaded.sources }, 'configuration loaded')
  const enabledProviders = enabledProviderInstancesUnder(loaded.config, loaded.applicationName)
  if (loaded.config.Authentication.Enabled && enabledProviders.length === 0) {
    // The operator's hint; the login page only tells visitors that no provider is configured.
    logger.info({ event: 'authentication.no_provider', docs: PROVIDERS_DOCUMENT }, `no sign-in provider is enabled, so nobody can sign in; enable OpenID Connect, SAML2 or an OAuth vendor in configuration (${PROVIDERS_DOCUMENT})`)
  }
  if (dotenv !== undefined) logger.info({ event: 'configuration.dotenv', file: DOTENV_FILE, variables: Object.keys(dotenv).length }, 'variables read from .env (Development)')

  let app: Awaited<ReturnType<typeof createApp>>
  try {
    app = await createApp({
      config: loaded.config,
      environmentName: loaded.environmentName,
      contentRoot: CONTENT_ROOT,
      logger,
      ...(options.applicationName === undefined ? {} : { applicationName: options.applicationName }),
      ...(options.routes === undefined ? {} : { routes: options.routes }),
      ...(options.policies === undefined ? {} : { policies: options.policies }),
      ...(options.governance === undefined ? {} : { governance: options.governance }),
      ...(options.branding === undefined ? {} : { branding: options.branding }),
      ...(options.signInHook === undefined ? {} : { signInHook: options.signInHook }),
      ...(options.providerSource === undefined ? {} : { providerSource: options.providerSource })
    })
  } catch (error) {
    // A problem found only when a resource is opened (the key directory): reported like validation.
    if (!(error instanceof ConfigurationError)) throw error
    reportConfigurationError(error, loaded.environmentName, startupLogger)
    process.exitCode = 1
    return
  }
  const { ShutdownDelaySeconds, DrainTimeoutSeconds, StartupStateWaitSeconds } = loaded.config.Hosting
  let closing = false
  let listening = false
  /**
   * Graceful drain (docs/deployment.md, "Rolling restarts"): readiness fails at once; on SIGTERM
   * the app keeps serving for ShutdownDelaySeconds so that the proxy or orchestrator notices;
   * then it stops accepting, lets in-flight requests finish within DrainTimeoutSeconds, and exits.
   */
  const shutdown = (signal: string): void => {
    if (closing) return
    closing = true
    app.lifecycle.draining = true
    const delayMs = signal === 'SIGTERM' && listening ? ShutdownDelaySeconds * 1000 : 0
    logger.info({ event: 'server.draining', signal, delaySeconds: delayMs / 1000 }, 'shutting down; readiness fails from now on')
    // Not unref'd: the process must stay up (and serving) for the delay.
    setTimeout(() => { close(signal) }, delayMs)
  }
  const close = (signal: string): void => {
    logger.info({ event: 'server.closing', signal }, 'shutting down; finishing in-flight requests')
    const timer = setTimeout(() => {
      logger.error({ event: 'server.close_timeout', drainTimeoutSeconds: DrainTimeoutSeconds }, 'graceful shutdown timed out')
      app.server.closeAllConnections()
      process.exit(1)
    }, DrainTimeoutSeconds * 1000)
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

  // No request before the state store can answer it (a Redis connection takes a moment): wait,
  // bounded, then listen anyway and let readiness report the store (routes/health.ts).
  await app.ready()
  if (!await stateStoreReady(app, StartupStateWaitSeconds * 1000, () => closing)) {
    logger.warn({ event: 'state.store.not_ready', waitedSeconds: StartupStateWaitSeconds, reason: app.state.status().reason }, 'state store not ready; listening anyway, readiness answers 503 until it is')
  }
  if (closing) return
  await app.listen({ host, port })
  listening = true
}

/** Resolves true once the state store is available, false after `timeoutMs` or when `stop()` turns true. */
async function stateStoreReady (app: Awaited<ReturnType<typeof createApp>>, timeoutMs: number, stop: () => boolean): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  for (let check = 0; check <= Math.ceil(timeoutMs / STATE_WAIT_INTERVAL_MS); check++) {
    if (app.state.status().available) return true
    if (stop() || Date.now() >= deadline) return false
    await sleep(STATE_WAIT_INTERVAL_MS)
  }
  return app.state.status().available
}
