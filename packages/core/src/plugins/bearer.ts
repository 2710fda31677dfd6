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
 *
 * DPoP (RFC 9449): `Authorization: DPoP <token>` with exactly one `DPoP` proof header. The proof
 * is checked first (bearer/dpop.ts; `htu` is the request's external URL: PublicOrigin, or the
 * request's own origin as host trust admitted it), then the token, whose `cnf.jkt` must be the
 * proof key's thumbprint; only then is the proof's `jti` recorded in the state store's replay
 * cache (`replay:dpop:<hash>`, shared by every instance with Redis), so a refused request writes
 * nothing. A DPoP-bound token sent as `Bearer`, or a plain bearer token for a scheme with
 * RequireDPoP, is refused. Refusals of a DPoP request answer `WWW-Authenticate: DPoP` with
 * `algs` and `error="invalid_dpop_proof"` (the proof) or `error="invalid_token"` (the token).
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { routeAccessOf } from '../authorization/route-access.js'
import { BearerSchemes } from '../bearer/bearer-schemes.js'
import { bearerChallenge, dpopChallenge } from '../bearer/challenge.js'
import { verifyDPoPProof } from '../bearer/dpop.js'
import { BearerTokenError, isIssuerUnavailable, isProofFailure, type BearerFailure } from '../bearer/failures.js'
import { bearerAuditFields } from '../bearer/bearer-principal.js'
import { DEFAULT_VALID_ALGORITHMS, type BearerAuthentication, type JwtBearerScheme } from '../bearer/jwt-bearer-scheme.js'
import { RefusalLimit } from '../bearer/refusal-limit.js'
import { protectedResourceMetadata, RESOURCE_METADATA_PATH, resourceOf } from '../bearer/resource-metadata.js'
import { enabledProviderInstances } from '../providers/provider-instances.js'
import type { ApplicationConfiguration } from '../providers/application-schema.js'
import type { AuthenticationProvider } from '../providers/provider.js'
import { createError } from '../errors.js'
import { sendProblem } from '../http/responses.js'
import { clientKeyOf } from '../state/rate-limit-store.js'
import { ReplayCache } from '../state/replay-cache.js'
import { authenticateRequestAs } from './session.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Whether the route accepts bearer tokens: true or false as declared; routes under
     * `Authentication:Bearer:PathPrefixes` are set to true when registered (plugins/bearer.ts).
     */
    bearer?: boolean
    /**
     * The JwtBearer schemes whose tokens the route accepts (issue 40, item 1): a token of any
     * other scheme is refused without an outbound call. Absent: every scheme whose PathPrefixes
     * the request's path starts with (bearer/scheme-routing.ts).
     */
    bearerSchemes?: readonly string[]
    /**
     * Set by plugins/bearer.ts on the routes that accept bearer tokens while protected-resource
     * metadata is published (RFC 9728): the configured PublicOrigin ('' for the request's own),
     * from which 401 challenges build their `resource_metadata` URL.
     */
    resourceMetadataOrigin?: string
    /**
     * Set by plugins/bearer.ts on the routes that accept bearer tokens while a configured scheme
     * has RequireDPoP: the proof algorithms its 401 without a token names in a `DPoP` challenge.
     */
    dpopAlgorithms?: readonly string[]
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
  /** DPoP proof ids already used (RFC 9449 section 11.1), in the shared state store. */
  readonly replay: ReplayCache
  /** Hosting:PublicOrigin ('' for the request's own): the origin of a proof's `htu`. */
  readonly publicOrigin: string
  /** The registered bearer scheme of a name. */
  readonly registered: (scheme: string) => JwtBearerScheme | undefined
}

/** The bearer schemes among the registered providers (configured, and added by the provider source). */
function bearerSchemesOf (providers: ReadonlyMap<string, AuthenticationProvider>): JwtBearerScheme[] {
  const schemes: JwtBearerScheme[] = []
  for (const provider of providers.values()) if (provider.bearer !== undefined) schemes.push(provider.bearer)
  return schemes
}

/** RFC 6750 section 2.1 `b64token`, after `Bearer` and one or more spaces. */
const BEARER_HEADER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i
/** The same after `DPoP` (RFC 9449 section 7.1). */
const DPOP_HEADER = /^DPoP +([A-Za-z0-9\-._~+/]+=*) *$/i

/** The values of every `DPoP` header the request carried (Node joins repeated unknown headers; the raw list does not). */
function dpopProofsOf (request: FastifyRequest): string[] {
  const raw = request.raw.rawHeaders
  const proofs: string[] = []
  for (let index = 0; index + 1 < raw.length && proofs.length < 3; index += 2) {
    if ((raw[index] as string).toLowerCase() === 'dpop') proofs.push(raw[index + 1] as string)
  }
  return proofs
}

/** The request's external URL without query: the `htu` its DPoP proof must name. */
function externalUrlOf (request: FastifyRequest, publicOrigin: string): string {
  const query = request.url.indexOf('?')
  return `${resourceOf(publicOrigin, `${request.protocol}://${request.host}`)}${query === -1 ? request.url : request.url.slice(0, query)}`
}

/** Every proof algorithm the current schemes accept, for `DPoP algs="..."`. */
function dpopAlgorithmsOf (schemes: readonly JwtBearerScheme[]): string[] {
  const algorithms = new Set<string>()
  for (const scheme of schemes) for (const algorithm of scheme.algorithms) algorithms.add(algorithm)
  return [...algorithms]
}

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
  const bearer = bearerChallenge({ ...(error === undefined ? {} : { error }), ...(resourceMetadata === undefined ? {} : { resourceMetadata }) })
  const dpopAlgorithms = request.routeOptions.config?.dpopAlgorithms
  reply.header('www-authenticate', error === undefined && dpopAlgorithms !== undefined ? [bearer, dpopChallenge(dpopAlgorithms)] : bearer)
  return sendProblem(request, reply, 401, { code: error === undefined ? 'APP_ERR_AUTH_REQUIRED' : 'APP_ERR_BEARER_INVALID' })
}

/** The 401 of a refused DPoP request (RFC 9449 section 7.1): `error` names the proof or the token, `algs` the proof algorithms. */
function sendDPoPChallenge (request: FastifyRequest, reply: FastifyReply, error: 'invalid_token' | 'invalid_dpop_proof', algorithms: readonly string[]): FastifyReply {
  const resourceMetadata = resourceMetadataUrlOf(request)
  reply.header('www-authenticate', dpopChallenge(algorithms, { error, ...(resourceMetadata === undefined ? {} : { resourceMetadata }) }))
  return sendProblem(request, reply, 401, { code: 'APP_ERR_BEARER_INVALID' })
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

/** How the request carried its token: decides the challenge of a refusal. */
type Presentation = 'Bearer' | 'DPoP'

/** The request's path before the query, as sent: what a scheme's PathPrefixes are compared with. */
function pathOf (url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}

function bearerHook (options: BearerContext, anonymous: boolean, names: ReadonlySet<string> | undefined): Hook {
  const { schemes, refusals, replay, publicOrigin, registered } = options
  function accept (request: FastifyRequest, authentication: BearerAuthentication, verifiedNow: boolean): void {
    request.bearer = authentication
    authenticateRequestAs(request, authentication.principal)
    // One audit line per token verified (not per call served from the cache): who, and which client acted.
    if (verifiedNow) request.log.info({ event: 'bearer.authenticated', ...bearerAuditFields(authentication.principal) }, 'bearer token accepted')
  }
  function refuse (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void, failure: BearerFailure, held: boolean, presentation: Presentation, unavailable: boolean): void {
    request.log.info({ event: 'bearer.refused', failure, ...(held ? { rateLimited: true } : {}) }, 'bearer token refused')
    if (anonymous) {
      authenticateRequestAs(request, undefined)
      done()
      return
    }
    // The issuer could not answer: not the caller's fault, and not a bad token (503, not 401).
    if (unavailable) {
      done(createError('APP_ERR_PROVIDER_UNAVAILABLE'))
      return
    }
    if (presentation === 'DPoP' || failure === 'dpop_required') {
      sendDPoPChallenge(request, reply, isProofFailure(failure) ? 'invalid_dpop_proof' : 'invalid_token', dpopAlgorithmsOf(schemes.schemes))
      return
    }
    sendBearerChallenge(request, reply, 'invalid_token')
  }
  /** Counts the refusal of `client` (not when the issuer failed: `unavailable`), then answers it. */
  function fail (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void, failure: BearerFailure, presentation: Presentation, client: string, unavailable = false): void {
    const counting = unavailable || refusals === undefined ? Promise.resolve(false) : refusals.count(client)
    counting.then((held) => { refuse(request, reply, done, failure, held, presentation, unavailable) }, () => { refuse(request, reply, done, failure, false, presentation, unavailable) })
  }
  /** Why a verified token may not be used as `Bearer`: DPoP-bound, or its scheme requires DPoP. */
  function bearerRefusalOf (authentication: BearerAuthentication): BearerFailure | undefined {
    if (authentication.confirmationKey !== undefined) return 'dpop_bound_as_bearer'
    return registered(authentication.scheme)?.requiresDPoP === true ? 'dpop_required' : undefined
  }
  return function authenticateBearer (request, reply, done) {
    const header = request.headers.authorization
    const presentation: Presentation | undefined = header === undefined || header.length < 6
      ? undefined
      : header.slice(0, 7).toLowerCase() === 'bearer ' ? 'Bearer' : header.slice(0, 5).toLowerCase() === 'dpop ' ? 'DPoP' : undefined
    if (header === undefined || presentation === undefined) {
      done()
      return
    }
    if (presentation === 'Bearer') {
      // The cache first, on the header as sent (a token it holds was well formed when verified).
      // This path allocates no closure and hashes no address: it serves most API calls.
      const cached = schemes.cached(header.slice(7).trim(), pathOf(request.url), names)
      if (cached !== undefined) {
        const refusal = bearerRefusalOf(cached)
        if (refusal !== undefined) {
          fail(request, reply, done, refusal, presentation, clientKeyOf(request.ip))
          return
        }
        accept(request, cached, false)
        done()
        return
      }
    }
    const client = clientKeyOf(request.ip)
    const failed = (failure: BearerFailure, unavailable = false): void => { fail(request, reply, done, failure, presentation, client, unavailable) }
    const settle = (error: unknown): void => {
      if (error instanceof BearerTokenError) failed(error.failure, isIssuerUnavailable(error))
      else done(error instanceof Error ? error : new Error(String(error)))
    }
    const token = (presentation === 'Bearer' ? BEARER_HEADER : DPOP_HEADER).exec(header.length > 9000 ? '' : header)?.[1]
    const wait = refusals?.retryAfterSeconds(client)
    if (wait !== undefined) {
      request.log.info({ event: 'bearer.refused', failure: 'rate_limited' }, 'bearer token refused')
      reply.header('retry-after', String(wait))
      done(createError('APP_ERR_RATE_LIMITED', String(wait)))
      return
    }
    if (token === undefined) {
      failed(header.length > 9000 ? 'oversized' : 'malformed')
      return
    }
    if (presentation === 'Bearer') {
      schemes.verify(token, pathOf(request.url), names).then((authentication) => {
        const refusal = bearerRefusalOf(authentication)
        if (refusal !== undefined) {
          failed(refusal)
          return
        }
        accept(request, authentication, true)
        done()
      }, settle)
      return
    }
    const proofs = dpopProofsOf(request)
    if (proofs.length !== 1) {
      failed(proofs.length === 0 ? 'dpop_missing' : 'dpop_multiple')
      return
    }
    authenticateDPoP(request, token, proofs[0] as string).then(({ authentication, verifiedNow }) => {
      accept(request, authentication, verifiedNow)
      done()
    }, settle)
  }

  /** The proof, then the token, then its binding to the proof's key; the proof's `jti` is recorded last. */
  async function authenticateDPoP (request: FastifyRequest, token: string, proofText: string): Promise<{ authentication: BearerAuthentication, verifiedNow: boolean }> {
    const proof = await verifyDPoPProof(proofText, {
      method: request.method,
      url: externalUrlOf(request, publicOrigin),
      accessToken: token,
      algorithms: new Set(dpopAlgorithmsOf(schemes.schemes)),
      nowSeconds: Math.floor(Date.now() / 1000)
    })
    const path = pathOf(request.url)
    const cached = schemes.cached(token, path, names)
    const authentication = cached ?? await schemes.verify(token, path, names)
    if (authentication.confirmationKey === undefined) throw new BearerTokenError('dpop_unbound')
    if (authentication.confirmationKey !== proof.jkt) throw new BearerTokenError('dpop_binding')
    if (registered(authentication.scheme)?.algorithms.has(proof.alg) !== true) throw new BearerTokenError('dpop_algorithm')
    if (!await replay.remember(`${proof.jkt}.${proof.jti}`, proof.replayUntilMs)) throw new BearerTokenError('dpop_replay')
    return { authentication, verifiedNow: cached === undefined }
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

/**
 * A route's `config.bearerSchemes` as a set (undefined: not restricted); a name that is not an
 * enabled JwtBearer scheme is refused at startup unless the provider source may add it.
 */
function routeSchemesOf (declared: readonly string[] | undefined, route: string, configured: ReadonlySet<string>, providerSource: boolean): ReadonlySet<string> | undefined {
  if (declared === undefined) return undefined
  const unknown = declared.find((name) => !configured.has(name))
  if (declared.length === 0 || (unknown !== undefined && !providerSource)) throw createError('APP_ERR_ROUTE_BEARER_SCHEMES', route)
  return new Set(declared)
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
      : {}),
    replay: new ReplayCache(app.state, 'dpop'),
    publicOrigin: config.Hosting.PublicOrigin,
    registered: (scheme) => providers.get(scheme)?.bearer
  }
  const dpopRequired = enabledProviderInstances(config).flatMap((instance) => instance.protocol === 'JwtBearer' && instance.settings.RequireDPoP
    ? (instance.settings.ValidAlgorithms.length === 0 ? DEFAULT_VALID_ALGORITHMS : instance.settings.ValidAlgorithms)
    : [])
  const dpopAlgorithms = dpopRequired.length === 0 ? undefined : [...new Set(dpopRequired)]
  if (configured) publishResourceMetadata(app, config)
  const pathPrefixes = config.Authentication.Bearer.PathPrefixes
  const configuredNames = new Set(enabledProviderInstances(config).filter((instance) => instance.protocol === 'JwtBearer').map((instance) => instance.scheme))
  const fallbackRequiresUser = config.Authorization.RequireAuthenticatedUserByDefault
  app.addHook('onRoute', (route) => {
    const routeConfig = route.config ?? {}
    if (!acceptsBearer(route.url, routeConfig.bearer, pathPrefixes)) return
    route.config = { ...routeConfig, bearer: true, ...(configured ? { resourceMetadataOrigin: config.Hosting.PublicOrigin } : {}), ...(dpopAlgorithms === undefined ? {} : { dpopAlgorithms }) }
    const anonymous = routeAccessOf(routeConfig, `${String(route.method)} ${route.url}`, fallbackRequiresUser).kind === 'anonymous'
    const existing = route.onRequest
    const hooks = existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]
    // First: the authorization hook (added earlier) must see the bearer principal.
    route.onRequest = [bearerHook(context, anonymous, routeSchemesOf(routeConfig.bearerSchemes, `${String(route.method)} ${route.url}`, configuredNames, options.providerSource)), ...hooks] as never
  })
}

export default fp(bearerPlugin, { name: 'bearer', dependencies: ['session', 'authorization', 'authentication'] })
