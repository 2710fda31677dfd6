/**
 * Request credentials on API routes (issue 35, item 2; issue 43, item 1): glue for the bearer
 * handler (bearer/bearer-handler.ts) and its answers (bearer/bearer-answers.ts). A route whose
 * path starts with one of `Authentication:Bearer:PathPrefixes`, or whose `config.bearer` says so,
 * gets ahead of its authorization hook a hook that reads `Authorization` (bearer/bearer-routes.ts);
 * a path under the prefixes that no route serves gets it from plugins/not-found.ts. Without a
 * credential type (no JwtBearer scheme, none from a provider source, none registered) the API
 * routes are unchanged.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { routeAccessOf } from '../authorization/route-access.js'
import { challengeAnswer, insufficientScopeAnswer, insufficientUserAuthenticationAnswer, refusalAnswer, type ChallengeSettings } from '../bearer/bearer-answers.js'
import { createBearerHandler, type BearerHandler, type BearerOutcome } from '../bearer/bearer-handler.js'
import { acceptsBearer, bearerRoutesOf, hasValidatedOrigin, proofOrigins, routeChallengeOf, routeSchemesOf } from '../bearer/bearer-routes.js'
import type { RequestCredentialsApi } from '../bearer/credential-types.js'
import { principalAuditFields } from '../bearer/bearer-principal.js'
import { JwtBearerScheme, type BearerAuthentication } from '../bearer/jwt-bearer-scheme.js'
import { pathOf } from '../bearer/presentation.js'
import { createError } from '../errors.js'
import { sendAnswer } from '../http/responses.js'
import { enabledProviderInstancesUnder } from '../providers/provider-instances.js'
import type { ApplicationConfiguration } from '../providers/application-schema.js'
import type { AuthenticationProvider } from '../providers/provider.js'
import { setCredentialAnswers } from './authentication.js'
import type { Hook, UnmatchedApiPaths } from './not-found.js'
import { publishResourceMetadata } from './resource-metadata.js'
import { authenticateRequestAs } from './session.js'
import { withRequestBindings } from '../request-child-logger.js'

declare module 'fastify' {
  interface FastifyContextConfig extends ChallengeSettings {
    /** Whether the route accepts bearer tokens: as declared; routes under `Authentication:Bearer:PathPrefixes` are set to true when registered. */
    bearer?: boolean
    /** The JwtBearer schemes whose tokens the route accepts (issue 40, item 1); absent: those its path selects (bearer/scheme-routing.ts). */
    bearerSchemes?: readonly string[]
  }
  interface FastifyRequest {
    /** The bearer token's caller (scheme, principal, client, scopes) when a bearer token authenticated the request. */
    bearer: BearerAuthentication | undefined
  }
  interface FastifyInstance {
    /** Request-credential types and deny checks (bearer/credential-types.ts). @experimental */
    requestCredentials: RequestCredentialsApi
  }
}

export interface BearerPluginOptions {
  readonly config: ApplicationConfiguration
  readonly environmentName: string
  /** The application's configuration root key, for the keys a log line names. */
  readonly rootKey: string
  /** The app has a provider source, which may add JwtBearer schemes at runtime. */
  readonly providerSource: boolean
  /** Filled here: how plugins/not-found.ts answers a path under the prefixes that no route serves. */
  readonly unmatched?: UnmatchedApiPaths
}

const originOf = (request: FastifyRequest): string => `${request.protocol}://${request.host}`
const jwtSchemeOf = (provider: AuthenticationProvider | undefined): JwtBearerScheme | undefined => provider?.credentialScheme instanceof JwtBearerScheme ? provider.credentialScheme : undefined

/** The route's hook: the handler's cache first (no closure, no hash), else its outcome, answered. */
function bearerHook (handler: BearerHandler, htuOriginOf: (requestOrigin: string) => string | undefined, anonymous: boolean, names: ReadonlySet<string> | undefined, challenge?: ChallengeSettings): Hook {
  function accept (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void, authentication: BearerAuthentication, verifiedNow: boolean): void {
    request.bearer = authentication
    authenticateRequestAs(request, authentication.principal)
    // The acting credential (an API key's id and prefix) on every line of the request, as its client.
    if (authentication.logBindings !== undefined) {
      request.log = withRequestBindings(request.log, authentication.logBindings, request.raw)
      reply.log = request.log
    }
    // One audit line per token verified (not per call served from the cache): who, and which client acted.
    if (verifiedNow) request.log.info({ event: 'bearer.authenticated', ...principalAuditFields(authentication.principal) }, 'bearer token accepted')
    done()
  }
  function answer (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void, outcome: BearerOutcome): void {
    if (outcome.kind === 'accepted') return accept(request, reply, done, outcome.authentication, outcome.verifiedNow)
    if (outcome.kind === 'held') {
      request.log.info({ event: 'bearer.refused', failure: 'rate_limited', limit: outcome.limit }, 'bearer token refused')
      reply.header('retry-after', String(outcome.retryAfterSeconds))
      done(createError('APP_ERR_RATE_LIMITED', String(outcome.retryAfterSeconds)))
      return
    }
    request.log.info({ event: 'bearer.refused', failure: outcome.failure, ...(outcome.held ? { rateLimited: true } : {}) }, 'bearer token refused')
    if (anonymous) authenticateRequestAs(request, undefined)
    // The issuer could not answer: not the caller's fault, and not a bad token (503, not 401).
    if (anonymous || outcome.unavailable) done(anonymous ? undefined : createError('APP_ERR_PROVIDER_UNAVAILABLE'))
    else sendAnswer(request, reply, refusalAnswer(outcome.failure, outcome.presentation, challenge ?? request.routeOptions.config ?? {}, originOf(request), () => handler.proofAlgorithms()))
  }
  return function authenticateBearer (request, reply, done) {
    const sent = handler.sentCredentialOf(request.headers)
    if (sent === undefined) {
      done()
      return
    }
    const path = pathOf(request.url)
    const cached = sent !== 'ambiguous' && sent.header === 'authorization' && sent.presentation === 'Bearer' ? handler.cached(sent.value, path, names) : undefined
    if (cached !== undefined) return accept(request, reply, done, cached, false)
    const credential = sent === 'ambiguous' ? { header: '', presentation: 'Bearer' as const, ambiguous: true } : { header: sent.value, presentation: sent.presentation, source: sent.header }
    handler.authenticate({ ...credential, method: request.method, path, ip: request.ip, rawHeaders: request.raw.rawHeaders, htuOrigin: () => htuOriginOf(originOf(request)) }, names)
      .then((outcome) => { answer(request, reply, done, outcome) }, (error: unknown) => { done(error instanceof Error ? error : new Error(String(error))) })
  }
}

/** Challenge, forbid and step-up of a request-credential route or caller, behind app.authentication's. */
function installAnswers (app: FastifyInstance): void {
  setCredentialAnswers(app.authentication, {
    challenge: (request, reply) => request.routeOptions.config?.bearer === true ? sendAnswer(request, reply, challengeAnswer(request.routeOptions.config, originOf(request))) : undefined,
    forbid: (request, reply, policy) => request.bearer === undefined ? undefined : sendAnswer(request, reply, insufficientScopeAnswer(request.routeOptions.config ?? {}, originOf(request), policy?.scopes?.join(' '))),
    stepUp: (request, reply, policy, principal, requirement) => {
      if (request.bearer === undefined) return undefined
      request.log.info({ event: 'authorization.step_up.required', provider: principal.ticket.scheme, policy: policy.name, bearer: true }, 'step-up authentication required')
      return sendAnswer(request, reply, insufficientUserAuthenticationAnswer(requirement))
    }
  })
}

async function bearerPlugin (app: FastifyInstance, options: BearerPluginOptions): Promise<void> {
  const { config } = options
  const providers = app.authentication.providers
  const schemes = (): JwtBearerScheme[] => [...providers.values()].flatMap((provider) => jwtSchemeOf(provider) ?? [])
  const { handler, types, api } = createBearerHandler({ schemes, registered: (scheme) => jwtSchemeOf(providers.get(scheme)), transformation: config.Authentication.ClaimsTransformation, store: app.state, rateLimits: config.RateLimits })
  app.decorateRequest('bearer', undefined)
  app.decorate('requestCredentials', api)
  installAnswers(app)
  const instances = enabledProviderInstancesUnder(config, options.rootKey).flatMap((instance) => instance.protocol === 'JwtBearer' ? [instance] : [])
  const routes = bearerRoutesOf(instances, config.Authentication.Bearer, config.Hosting.PublicOrigin)
  const jwtPossible = routes.configured || options.providerSource
  // No credential type and none that can come: the API routes behave exactly as before (types register before the app's routes).
  const active = (): boolean => config.Authentication.Enabled && (jwtPossible || types.extended)
  const origins = { publicOrigin: config.Hosting.PublicOrigin, allowedHosts: config.Hosting.AllowedHosts, environmentName: options.environmentName }
  if (config.Authentication.Enabled && routes.configured) publishResourceMetadata(app, { publicOrigin: config.Hosting.PublicOrigin, scopesSupported: config.Authentication.Bearer.ScopesSupported, routes, schemes })
  // Only a provider-source app gets here without a validated origin (the startup rule refuses a configured scheme).
  if (config.Authentication.Enabled && jwtPossible && !hasValidatedOrigin(origins)) app.log.warn({ event: 'bearer.dpop.no_origin', settings: [`${options.rootKey}:Hosting:PublicOrigin`, `${options.rootKey}:Hosting:AllowedHosts`] }, 'DPoP requests will be refused: no validated origin for their htu')
  const htuOriginOf = proofOrigins(origins)
  const pathPrefixes = config.Authentication.Bearer.PathPrefixes
  if (options.unmatched !== undefined) {
    Object.assign(options.unmatched, {
      covers: (path: string) => active() && pathPrefixes.some((prefix) => path.startsWith(prefix)),
      authenticate: bearerHook(handler, htuOriginOf, false, undefined, routes.challenge),
      challenge: (request: FastifyRequest, reply: FastifyReply) => sendAnswer(request, reply, challengeAnswer(routes.challenge, originOf(request)))
    } satisfies UnmatchedApiPaths)
  }
  const fallbackRequiresUser = config.Authorization.RequireAuthenticatedUserByDefault
  app.addHook('onRoute', (route) => {
    const routeConfig = route.config ?? {}
    if (!active() || !acceptsBearer(route.url, routeConfig.bearer, pathPrefixes)) return
    route.config = { ...routeConfig, bearer: true, ...routeChallengeOf(routes, route.url) }
    const name = `${String(route.method)} ${route.url}`
    const anonymous = routeAccessOf(routeConfig, name, fallbackRequiresUser).kind === 'anonymous'
    const hooks = [route.onRequest ?? []].flat()
    // First: the authorization hook (added earlier) must see the bearer principal.
    route.onRequest = [bearerHook(handler, htuOriginOf, anonymous, routeSchemesOf(routeConfig.bearerSchemes, name, routes.names, options.providerSource)), ...hooks] as never
  })
}

export default fp(bearerPlugin, { name: 'bearer', dependencies: ['session', 'authorization', 'authentication'] })
