/**
 * createApp: the core as a Fastify instance, not listening. Registration is explicit and
 * ordered as the security argument reads: branding, logging and error rendering, cookies and body
 * parsing, security headers, host filtering, static files (ahead of routing, outside
 * authorization), the state store, session, authentication schemes, anti-forgery, authorization
 * (fallback policy, not-found; then the app's named policies and governance evaluator), external
 * sign-in (correlation, completion) and the enabled providers, then the contract's baseline
 * endpoints (/Account, with an ApiKey scheme /Account/ApiKeys, /External/Challenge, /Home/Error,
 * /health) and last the app's own routes, which the fallback policy covers like every other route. It never reads process.env.
 */
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyPluginAsync } from 'fastify'
import cookie from '@fastify/cookie'
import formbody from '@fastify/formbody'
import { applicationDiscriminatorOf, loadKeyRing, type KeyRing } from './data-protection/key-ring.js'
import { environmentOf } from './config/environment.js'
import { applicationNaming, rootKeyOf, type ApplicationNaming } from './application-name.js'
import type { ApplicationConfiguration } from './providers/application-schema.js'
import { enabledProviderInstancesUnder } from './providers/provider-instances.js'
import authentication from './plugins/authentication.js'
import authorization from './plugins/authorization.js'
import apiKeys from './plugins/api-keys.js'
import bearer from './plugins/bearer.js'
import { createClientErrorHandler } from './plugins/client-errors.js'
import cors from './plugins/cors.js'
import csrf from './plugins/csrf.js'
import downstreamApis from './plugins/downstream-apis.js'
import dataProtection from './plugins/data-protection.js'
import directory, { provisioningRuntimeOf } from './plugins/directory.js'
import errorHandler, { renderError } from './plugins/error-handler.js'
import rateLimits from './plugins/rate-limits.js'
import externalProviders from './plugins/external-providers.js'
import type { ProviderSource } from './plugins/runtime-providers.js'
import externalSignIn from './plugins/external-sign-in.js'
import hostFiltering from './plugins/host-filtering.js'
import notFound, { type UnmatchedApiPaths } from './plugins/not-found.js'
import requestLogging from './plugins/request-logging.js'
import { requestChildLogger } from './request-child-logger.js'
import securityHeaders from './plugins/security-headers.js'
import session, { sessionCookieSettings } from './plugins/session.js'
import state from './plugins/state.js'
import staticFiles from './plugins/static-files.js'
import scim from './plugins/scim.js'
import branding from './plugins/branding.js'
import type { AuthorizationPolicy } from './authorization/policies.js'
import type { GovernanceEvaluator } from './plugins/authorization.js'
import accountRoutes from './routes/account.js'
import apiKeyRoutes from './routes/api-keys.js'
import errorRoutes from './routes/error.js'
import externalRoutes from './routes/external.js'
import healthRoutes from './routes/health.js'
import sessionRoutes from './routes/sessions.js'
import type { StateStore } from './state/state-store.js'
import type { Branding } from './views/pages.js'
import type { SignInHook } from './sign-in/sign-in-hook.js'

/**
 * What an app adds to the core: its routes, its named policies, its governance evaluator and its
 * page branding. The same object goes to {@link createApp} (tests, composition) and to
 * `runServer` (the process).
 *
 * @public
 */
export interface ApplicationParts {
  /**
   * The app's routes, registered after the core's. A route declares its authorization in its
   * `config` (`allowAnonymous`, `authorize`, `governance`); a route without it gets the fallback
   * policy.
   */
  readonly routes?: FastifyPluginAsync
  /** Named policies added before any route is registered (names must not repeat the core's). */
  readonly policies?: readonly AuthorizationPolicy[]
  /** The governance seam's evaluator; without one the seam does nothing. */
  readonly governance?: GovernanceEvaluator
  /**
   * The application's name (PascalCase letters and digits; default `ProjectTemplate`): the
   * configuration root key (`<Name>:Authentication:Enabled`, environment variables
   * `<Name>__Authentication__Enabled`), the cookie names (`__Host-<Name>.Web.Authentication`,
   * `__Host-<Name>.Antiforgery`, `__Host-<Name>.Correlation.*`), the key ring's purpose strings,
   * and the application name on the pages unless `branding` names another. Changing it changes
   * every one of them: existing sessions end and settings must move to the new root key.
   */
  readonly applicationName?: string
  /** Application name (default: {@link ApplicationParts.applicationName}) and layout of the pages. */
  readonly branding?: Branding
  /**
   * Runs for every verified external sign-in before its session is created: allow, allow with
   * claims added or replaced, or refuse (sign-in/sign-in-hook.ts; time limit
   * `Authentication:SignInHook:TimeoutSeconds`; a failure refuses).
   */
  readonly signInHook?: SignInHook
  /**
   * Providers the app owns (issue 28): an async function returning provider definitions (scheme,
   * the keys of `Authentication:Schemes:<Name>`, domains with their verification state, tenant),
   * read when the app is ready and on `app.authentication.reloadProviders()`. Each is validated
   * like configuration; configured schemes win over a definition of the same name.
   * docs/providers/runtime-providers.md.
   */
  readonly providerSource?: ProviderSource
}

/** @public */
export interface CreateAppOptions extends ApplicationParts {
  readonly config: ApplicationConfiguration
  readonly environmentName: string
  /** Directory with `public/` and the relative key directory. */
  readonly contentRoot: string
  readonly logger: FastifyBaseLogger
  /** Supply to skip loading/generating keys (tests, benchmarks). */
  readonly keyRing?: KeyRing
  /** Supply to use this state store instead of the configured one (tests, benchmarks); the caller closes it. */
  readonly stateStore?: StateStore
  /** Milliseconds since the epoch; injectable so session lifetimes can be tested. Default Date.now. */
  readonly now?: () => number
}

/** Largest accepted request header block. @public */
export const MAX_HEADER_BYTES = 32 * 1024

/**
 * The one-time warning logged when authentication is disabled (auth-contract.md, "States and
 * transitions" rule 2), naming the application's `<rootKey>:Authentication:Enabled` (none given:
 * the default application's, {@link rootKeyOf}).
 *
 * @public
 */
export function authenticationDisabledMessage (rootKey?: string): string {
  return `Application authentication is disabled (${rootKeyOf(rootKey)}:Authentication:Enabled is false). ` +
    'This posture is intentional and supported: routes without explicit authorization metadata are public. ' +
    'Review network exposure and the authorization expectations of every route before deploying.'
}

/** {@link authenticationDisabledMessage} of the default application (`ProjectTemplate`). @public */
export const AUTHENTICATION_DISABLED_MESSAGE = authenticationDisabledMessage()

function resolveKeyRing (options: CreateAppOptions, rootKey: string): KeyRing {
  if (options.keyRing !== undefined) return options.keyRing
  const { config, contentRoot, logger } = options
  const discriminator = applicationDiscriminatorOf(config.DataProtection.ApplicationDiscriminator, options.environmentName)
  const source = loadKeyRing(config.DataProtection.Keys, config.DataProtection.KeyDirectory, contentRoot, discriminator, rootKey)
  if (source.origin !== 'configuration') {
    logger.warn({
      event: 'data_protection.local_key',
      origin: source.origin,
      directory: source.directory,
      key: `${rootKey}:DataProtection:Keys`
    }, 'session keys are kept in a local key directory; multi-instance deployments must supply shared keys')
  }
  return source.ring
}

/**
 * Creates the app with the core registered (every security plugin, the baseline endpoints and,
 * when given, the app's own {@link ApplicationParts}). Call `ready()` (or `listen()`) after
 * registering anything else.
 *
 * @public
 */
export async function createApp (options: CreateAppOptions): Promise<FastifyInstance> {
  // The one place the core decides an app's root key: its applicationName, else the default's.
  return await composeApp(options, applicationNaming(rootKeyOf(options.applicationName)))
}

async function composeApp (options: CreateAppOptions, naming: ApplicationNaming): Promise<FastifyInstance> {
  const { config, environmentName, contentRoot, logger } = options
  const { rootKey, cookieNames } = naming
  // The environment facts, decided once here and passed down.
  const { development, insecureCookies } = environmentOf(config, environmentName)
  const keyRing = resolveKeyRing(options, rootKey)
  const now = options.now ?? Date.now
  const sessionCookie = sessionCookieSettings(insecureCookies, rootKey)
  const hosting = config.Hosting

  // Off (the default): nothing of OpenTelemetry is imported (docs/telemetry.md).
  const telemetry = config.Telemetry.Enabled ? await (await import('./plugins/telemetry.js')).startTelemetry(config.Telemetry, rootKey) : undefined

  const app = Fastify({
    loggerInstance: telemetry === undefined ? logger : telemetry.observeLogger(logger),
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => randomUUID(),
    childLoggerFactory: requestChildLogger,
    requestIdHeader: false,
    trustProxy: config.ForwardedHeaders.Enabled ? config.ForwardedHeaders.KnownProxies.map((value) => value.trim()).filter((value) => value !== '') : false,
    bodyLimit: 64 * 1024,
    // Fastify's defaults (0) remove Node's own limits: a client sending a body one byte at a time
    // would hold its connection for ever (docs/security.md, "Connections").
    requestTimeout: hosting.RequestTimeoutSeconds * 1000,
    connectionTimeout: hosting.IdleTimeoutSeconds * 1000,
    keepAliveTimeout: hosting.KeepAliveTimeoutSeconds * 1000,
    http: {
      maxHeaderSize: MAX_HEADER_BYTES,
      requestTimeout: hosting.RequestTimeoutSeconds * 1000,
      headersTimeout: hosting.HeadersTimeoutSeconds * 1000,
      // How often Node looks for requests past their deadline (its default is 30 s).
      connectionsCheckingInterval: Math.min(5000, hosting.HeadersTimeoutSeconds * 500),
      // A request without Host reaches the host check and gets the app's 400, not Node's bare one.
      requireHostHeader: false
    },
    clientErrorHandler: createClientErrorHandler(logger),
    frameworkErrors: (error, request, reply) => { renderError(development, error, request, reply, rootKey) }
  })

  if (!config.Authentication.Enabled) {
    logger.warn({ event: 'authentication.disabled', key: `${rootKey}:Authentication:Enabled` }, authenticationDisabledMessage(rootKey))
  }
  logger.info({
    event: 'authentication.providers',
    enabled: config.Authentication.Enabled ? enabledProviderInstancesUnder(config, rootKey).map((instance) => instance.scheme) : []
  }, 'authentication providers')

  if (telemetry !== undefined) await app.register(telemetry.instrumentation)
  // Readiness reads it (routes/health.ts); runServer sets it on SIGTERM to drain the instance.
  app.decorate('lifecycle', { draining: false })
  // The pages show the application's name unless the app brands them with another.
  await app.register(branding, { branding: { applicationName: rootKey, ...options.branding } })
  await app.register(requestLogging)
  await app.register(errorHandler, { development, rootKey })
  await app.register(cookie, { hook: 'onRequest', parseOptions: {} })
  await app.register(formbody, { bodyLimit: 16 * 1024 })
  await app.register(securityHeaders, { development })
  await app.register(hostFiltering, { config, environmentName, rootKey })
  // Before the session and authentication: an allowed preflight is answered without credentials.
  await app.register(cors, { config })
  await app.register(staticFiles, { root: join(contentRoot, 'public') })
  await app.register(state, { config, contentRoot, now, rootKey, ...(options.stateStore === undefined ? {} : { store: options.stateStore }), ...(telemetry === undefined ? {} : { observe: telemetry.observeStore }) })
  await app.register(dataProtection, { keyRing })
  await app.register(session, { config, cookie: sessionCookie, keyRing, now, rootKey })
  await app.register(authentication, { config, environmentName, rootKey })
  await app.register(csrf, { keyRing, secure: !insecureCookies, cookieNames })
  await app.register(authorization, { config, environmentName })
  await app.register(rateLimits, { config, rootKey })
  // Provisioning (off by default): the directory store, app.directory and app.provisioning; the sign-in pipeline's provisioning step.
  await app.register(directory, { config, contentRoot, now, rootKey, providerSource: options.providerSource !== undefined && config.Authentication.Enabled })
  const provisioning = provisioningRuntimeOf(app)
  for (const policy of options.policies ?? []) app.authorization.addPolicy(policy)
  if (options.governance !== undefined) app.authorization.useGovernanceEvaluator(options.governance)
  const signInHook = options.signInHook === undefined ? {} : { signInHook: { hook: options.signInHook, timeoutMs: config.Authentication.SignInHook.TimeoutSeconds * 1000 } }
  await app.register(externalSignIn, { config, environmentName, insecureCookies, keyRing, now, cookieNames, rootKey, ...signInHook, ...(provisioning === undefined ? {} : { provisioning: provisioning.admission }) })
  await app.register(externalProviders, { config, environmentName, contentRoot, rootKey })
  if (options.providerSource !== undefined && config.Authentication.Enabled) {
    // Loaded only with a source: it brings both protocols' handlers (openid-client, node-saml).
    const runtimeProviders = (await import('./plugins/runtime-providers.js')).default
    await app.register(runtimeProviders, { config, environmentName, rootKey, source: options.providerSource })
  }
  // After authorization (its hook goes first on API routes) and the providers (its JwtBearer schemes).
  // A path no route serves: well-known URIs 404, API paths answer as API routes do (bearer fills `unmatched`).
  const unmatched: UnmatchedApiPaths = {}
  await app.register(bearer, { config, environmentName, rootKey, providerSource: options.providerSource !== undefined, unmatched })
  // API keys (ApiKey schemes): app.apiKeys, and keys accepted where bearer tokens are (before the app's routes).
  await app.register(apiKeys, { config, now, environmentName, rootKey })
  await app.register(notFound, { config, unmatched })
  // Calls to the APIs the app uses (DownstreamApis), with the session's saved tokens or the app's own.
  await app.register(downstreamApis, { config, environmentName, rootKey })

  await app.register(accountRoutes)
  await app.register(sessionRoutes)
  // /Account/ApiKeys: only when an ApiKey scheme is enabled (app.apiKeys).
  await app.register(apiKeyRoutes, { now })
  await app.register(externalRoutes)
  await app.register(errorRoutes)
  await app.register(healthRoutes)
  // SCIM 2.0 (/scim/v2/<connection>/...): only with Provisioning:Enabled; authenticated by connection tokens.
  await app.register(scim, { config })
  if (telemetry !== undefined) await app.register(telemetry.endpoint)
  if (options.routes !== undefined) await app.register(options.routes)
  return app
}
