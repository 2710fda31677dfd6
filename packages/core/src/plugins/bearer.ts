/**
 * Bearer tokens on API routes (issue 35, item 2): a route accepts them when its path starts with
 * one of `Authentication:Bearer:PathPrefixes` (default `/api/`) or its `config` says
 * `bearer: true` (`bearer: false` opts a route under a prefix out); pages never do. Decided when
 * the route is registered (onRoute): such a route gets, ahead of its authorization hook, a hook
 * that reads `Authorization: Bearer`. When a token is present it alone decides: a verified token
 * is the request's user (bearer/bearer-schemes.ts) and the session cookie is not read; a refused
 * one is answered 401 with `WWW-Authenticate: Bearer error="invalid_token"` and a problem
 * document, never a redirect, even when a session cookie came too, with one `bearer.refused` log
 * line naming the failure class (never the token). On an anonymous route a refused token leaves
 * the caller anonymous. Bearer-authenticated requests need no anti-forgery token
 * (plugins/csrf.ts). Refused tokens count per client (bearer/refusal-limit.ts): over the limit,
 * 429 before any cryptography. Without a bearer scheme the plugin adds nothing.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { routeAccessOf } from '../authorization/route-access.js'
import { BearerSchemes } from '../bearer/bearer-schemes.js'
import { bearerChallenge } from '../bearer/challenge.js'
import { BearerTokenError, type BearerFailure } from '../bearer/failures.js'
import type { BearerAuthentication, JwtBearerScheme } from '../bearer/jwt-bearer-scheme.js'
import { RefusalLimit } from '../bearer/refusal-limit.js'
import { protectedResourceMetadata, RESOURCE_METADATA_PATH, resourceOf } from '../bearer/resource-metadata.js'
import { enabledProviderInstances } from '../providers/provider-instances.js'
import type { ApplicationConfiguration } from '../providers/application-schema.js'
import type { AuthenticationProvider } from '../providers/provider.js'
import { createError } from '../errors.js'
import { sendProblem } from '../http/responses.js'
import { clientKeyOf } from '../state/rate-limit-store.js'
import { authenticateRequestAs } from './session.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Whether the route accepts bearer tokens: true or false as declared; routes under
     * `Authentication:Bearer:PathPrefixes` are set to true when registered (plugins/bearer.ts).
     */
    bearer?: boolean
    /**
     * Set by plugins/bearer.ts on the routes that accept bearer tokens while protected-resource
     * metadata is published (RFC 9728): the configured PublicOrigin ('' for the request's own),
     * from which 401 challenges build their `resource_metadata` URL.
     */
    resourceMetadataOrigin?: string
  }
  interface FastifyRequest {
    /** The bearer token's caller (scheme, principal, client, scopes) when a bearer token authenticated the request. */
    bearer: BearerAuthentication | undefined
  }
}

export interface BearerPluginOptions {
  readonly config: ApplicationConfiguration
  /** The app has a provider source, which may add JwtBearer schemes at runtime. */
  readonly providerSource: boolean
}

/** What the hook needs, built once from the configuration. */
interface BearerContext {
  readonly schemes: BearerSchemes
  /** Refused tokens per client; none: unlimited (RateLimits:Enabled false). */
  readonly refusals?: RefusalLimit
}

/** The bearer schemes among the registered providers (configured, and added by the provider source). */
function bearerSchemesOf (providers: ReadonlyMap<string, AuthenticationProvider>): JwtBearerScheme[] {
  const schemes: JwtBearerScheme[] = []
  for (const provider of providers.values()) if (provider.bearer !== undefined) schemes.push(provider.bearer)
  return schemes
}

/** RFC 6750 section 2.1 `b64token`, after `Bearer` and one or more spaces. */
const BEARER_HEADER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i

/** Whether the route at `url` with `config.bearer` accepts bearer tokens. */
export function acceptsBearer (url: string, declared: boolean | undefined, pathPrefixes: readonly string[]): boolean {
  return declared ?? pathPrefixes.some((prefix) => url.startsWith(prefix))
}

/** The absolute URL of the protected-resource metadata for a request to a route that publishes it, or undefined. */
function resourceMetadataUrlOf (request: FastifyRequest): string | undefined {
  const origin = request.routeOptions.config?.resourceMetadataOrigin
  return origin === undefined ? undefined : `${resourceOf(origin, `${request.protocol}://${request.host}`)}${RESOURCE_METADATA_PATH}`
}

/**
 * The 401 of a refused (or missing, `error` undefined) bearer token: problem+json and
 * `WWW-Authenticate` with `resource_metadata` where it is published, and no detail.
 */
export function sendBearerChallenge (request: FastifyRequest, reply: FastifyReply, error: 'invalid_token' | undefined): FastifyReply {
  const resourceMetadata = resourceMetadataUrlOf(request)
  reply.header('www-authenticate', bearerChallenge({ ...(error === undefined ? {} : { error }), ...(resourceMetadata === undefined ? {} : { resourceMetadata }) }))
  return sendProblem(request, reply, 401, { code: error === undefined ? 'APP_ERR_AUTH_REQUIRED' : 'APP_ERR_BEARER_INVALID' })
}

/** The 403 of a valid bearer token that does not meet the route's policy (RFC 6750 `insufficient_scope`). */
export function sendInsufficientScope (request: FastifyRequest, reply: FastifyReply, scope?: string): FastifyReply {
  reply.header('www-authenticate', bearerChallenge({ error: 'insufficient_scope', ...(scope === undefined ? {} : { scope }) }))
  return sendProblem(request, reply, 403, { code: 'APP_ERR_BEARER_SCOPE' })
}

/** Whether a bearer token authenticated the request (no anti-forgery token is needed then). */
export function isBearerAuthenticated (request: FastifyRequest): boolean {
  return request.bearer !== undefined
}

type Hook = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void

function bearerHook (options: BearerContext, anonymous: boolean): Hook {
  const { schemes, refusals } = options
  function accept (request: FastifyRequest, authentication: BearerAuthentication): void {
    request.bearer = authentication
    authenticateRequestAs(request, authentication.principal)
  }
  function refuse (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void, failure: BearerFailure, held: boolean): void {
    request.log.info({ event: 'bearer.refused', failure, ...(held ? { rateLimited: true } : {}) }, 'bearer token refused')
    if (anonymous) {
      authenticateRequestAs(request, undefined)
      done()
      return
    }
    if (failure === 'keys_unavailable') {
      done(createError('APP_ERR_PROVIDER_UNAVAILABLE'))
      return
    }
    sendBearerChallenge(request, reply, 'invalid_token')
  }
  return function authenticateBearer (request, reply, done) {
    const header = request.headers.authorization
    if (header === undefined || header.length < 7 || header.slice(0, 7).toLowerCase() !== 'bearer ') {
      done()
      return
    }
    // The cache first, on the header as sent (a token it holds was well formed when verified).
    const cached = schemes.cached(header.slice(7).trim())
    if (cached !== undefined) {
      accept(request, cached)
      done()
      return
    }
    const token = BEARER_HEADER.exec(header.length > 9000 ? '' : header)?.[1]
    const client = clientKeyOf(request.ip)
    const wait = refusals?.retryAfterSeconds(client)
    if (wait !== undefined) {
      request.log.info({ event: 'bearer.refused', failure: 'rate_limited' }, 'bearer token refused')
      reply.header('retry-after', String(wait))
      done(createError('APP_ERR_RATE_LIMITED', String(wait)))
      return
    }
    const failed = (failure: BearerFailure): void => {
      const counting = failure === 'keys_unavailable' || refusals === undefined ? Promise.resolve(false) : refusals.count(client)
      counting.then((held) => { refuse(request, reply, done, failure, held) }, () => { refuse(request, reply, done, failure, false) })
    }
    if (token === undefined) {
      failed(header.length > 9000 ? 'oversized' : 'malformed')
      return
    }
    schemes.verify(token).then((authentication) => {
      accept(request, authentication)
      done()
    }, (error: unknown) => {
      if (error instanceof BearerTokenError) failed(error.failure)
      else done(error instanceof Error ? error : new Error(String(error)))
    })
  }
}

/**
 * RFC 9728: `GET /.well-known/oauth-protected-resource` (anonymous, in the reviewed inventory),
 * naming the configured JwtBearer schemes' issuers, and its URL in every 401 challenge.
 */
function publishResourceMetadata (app: FastifyInstance, config: ApplicationConfiguration): void {
  const publicOrigin = config.Hosting.PublicOrigin
  const resource = (request: FastifyRequest): string => resourceOf(publicOrigin, `${request.protocol}://${request.host}`)
  const configuredSchemes = new Set(enabledProviderInstances(config).filter((instance) => instance.protocol === 'JwtBearer').map((instance) => instance.scheme))
  app.get(RESOURCE_METADATA_PATH, { config: { allowAnonymous: true } }, async (request, reply) => {
    const issuers = bearerSchemesOf(app.authentication.providers).filter((scheme) => configuredSchemes.has(scheme.scheme)).map((scheme) => scheme.issuer ?? scheme.configuredIssuer)
    return await reply.header('cache-control', 'public, max-age=3600').type('application/json')
      .send(protectedResourceMetadata(resource(request), issuers, config.Authentication.Bearer.ScopesSupported))
  })
}

async function bearerPlugin (app: FastifyInstance, options: BearerPluginOptions): Promise<void> {
  app.decorateRequest('bearer', undefined)
  const { config } = options
  const configured = enabledProviderInstances(config).some((instance) => instance.protocol === 'JwtBearer')
  // No JwtBearer scheme and none that can come: the API routes behave exactly as before.
  if (!config.Authentication.Enabled || (!configured && !options.providerSource)) return
  const providers = app.authentication.providers
  const limits = config.RateLimits
  const context: BearerContext = {
    schemes: new BearerSchemes(() => bearerSchemesOf(providers), (scheme) => providers.get(scheme)?.bearer, { transformation: config.Authentication.ClaimsTransformation }),
    ...(limits.Enabled && app.state.increment !== undefined
      ? { refusals: new RefusalLimit({ increment: app.state.increment.bind(app.state), perWindow: limits.BearerRefusalsPerWindow, windowMs: limits.WindowSeconds * 1000 }) }
      : {})
  }
  if (configured) publishResourceMetadata(app, config)
  const pathPrefixes = config.Authentication.Bearer.PathPrefixes
  const fallbackRequiresUser = config.Authorization.RequireAuthenticatedUserByDefault
  app.addHook('onRoute', (route) => {
    const routeConfig = route.config ?? {}
    if (!acceptsBearer(route.url, routeConfig.bearer, pathPrefixes)) return
    route.config = { ...routeConfig, bearer: true, ...(configured ? { resourceMetadataOrigin: config.Hosting.PublicOrigin } : {}) }
    const anonymous = routeAccessOf(routeConfig, `${String(route.method)} ${route.url}`, fallbackRequiresUser).kind === 'anonymous'
    const existing = route.onRequest
    const hooks = existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]
    // First: the authorization hook (added earlier) must see the bearer principal.
    route.onRequest = [bearerHook(context, anonymous), ...hooks] as never
  })
}

export default fp(bearerPlugin, { name: 'bearer', dependencies: ['session', 'authorization', 'authentication'] })
