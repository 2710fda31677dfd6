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
 * request's own origin only where host filtering validated it, `Hosting:AllowedHosts` without `*`,
 * or in Development; otherwise the proof is refused, issue 40, item 4), then the token, whose
 * `cnf.jkt` must be the proof key's thumbprint; then the client's count of proof records
 * (bearer/dpop-proof-limit.ts: over `RateLimits:DPoPProofsPerWindow`, 429); only then is the
 * proof's `jti` recorded in the state store's replay cache (`replay:dpop:<hash>`, shared by every
 * instance with Redis), so a refused request writes nothing. A DPoP-bound token sent as `Bearer`,
 * or a plain bearer token for a scheme with RequireDPoP, is refused. Refusals of a DPoP request
 * answer `WWW-Authenticate: DPoP` with `algs` and `error="invalid_dpop_proof"` (the proof) or
 * `error="invalid_token"` (the token).
 *
 * Every challenge carries the same parameters (issue 40, items 15 and 17): `resource_metadata`
 * where metadata is published (the path-suffixed document for a route that is a resource of its
 * own, bearer/resource-metadata.ts), and `scope` with `Authentication:Bearer:ScopesSupported` on
 * a 401 (the route's policy scopes on a 403 `insufficient_scope`). A path under the prefixes that
 * no route serves is answered by plugins/not-found.ts with this plugin's hook and challenge: a
 * token is verified first (refused: 401 with the challenge), so every 401 has its
 * `WWW-Authenticate` (RFC 9110 section 11.6.1; issue 40, item 16).
 */
import fp from 'fastify-plugin'
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { routeAccessOf } from '../authorization/route-access.js'
import { BearerSchemes } from '../bearer/bearer-schemes.js'
import { bearerChallenge, dpopChallenge } from '../bearer/challenge.js'
import { verifyDPoPProof } from '../bearer/dpop.js'
import { BearerTokenError, isIssuerUnavailable, isProofFailure, type BearerFailure } from '../bearer/failures.js'
import { bearerAuditFields } from '../bearer/bearer-principal.js'
import { DEFAULT_VALID_ALGORITHMS, type BearerAuthentication, type JwtBearerScheme } from '../bearer/jwt-bearer-scheme.js'
import { DPoPProofLimit } from '../bearer/dpop-proof-limit.js'
import { RefusalLimit } from '../bearer/refusal-limit.js'
import { pathResourcesOf, protectedResourceMetadata, RESOURCE_METADATA_PATH, resourceMetadataPathOf, resourceOf, type PathResource } from '../bearer/resource-metadata.js'
import { isDevelopment } from '../environment-name.js'
import { restrictsHosts } from '../http/host-trust.js'
import { enabledProviderInstances } from '../providers/provider-instances.js'
import type { ApplicationConfiguration } from '../providers/application-schema.js'
import type { AuthenticationProvider } from '../providers/provider.js'
import { createError } from '../errors.js'
import { sendProblem } from '../http/responses.js'
import { clientKeyOf } from '../state/rate-limit-store.js'
import { ReplayCache } from '../state/replay-cache.js'
import type { UnmatchedApiPaths } from './not-found.js'
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
     * Set by plugins/bearer.ts on a route whose path is a resource of its own (a configured
     * audience, bearer/resource-metadata.ts): the path of its metadata document, which its
     * challenges name instead of the origin's.
     */
    resourceMetadataPath?: { readonly path: string, readonly origins: readonly string[] }
    /** Set by plugins/bearer.ts on the routes that accept bearer tokens: `Authentication:Bearer:ScopesSupported`, space-separated, for the 401 `scope`. */
    bearerScope?: string
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
  readonly environmentName: string
  /** The app has a provider source, which may add JwtBearer schemes at runtime. */
  readonly providerSource: boolean
  /** Filled here: how plugins/not-found.ts answers a path under the prefixes that no route serves. */
  readonly unmatched?: UnmatchedApiPaths
}

/** What a challenge names besides its error: set on each bearer route's config, or given (for a path no route serves). */
type ChallengeSettings = Pick<FastifyContextConfig, 'resourceMetadataOrigin' | 'resourceMetadataPath' | 'dpopAlgorithms' | 'bearerScope'>

/** What the hook needs, built once from the configuration. */
interface BearerContext {
  readonly schemes: BearerSchemes
  /** Refused tokens per client; none: unlimited (RateLimits:Enabled false). */
  readonly refusals?: RefusalLimit
  /** DPoP proof ids already used (RFC 9449 section 11.1), in the shared state store. */
  readonly replay: ReplayCache
  /** Proof records per client; none: unlimited (RateLimits:Enabled false). */
  readonly proofRecords?: DPoPProofLimit
  /** The origin of a proof's `htu`, or undefined when the request's Host is not validated. */
  readonly htuOriginOf: (request: FastifyRequest) => string | undefined
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

/** The request's path, without query. */
function pathOf (url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}

/**
 * The origin a DPoP proof's `htu` names: PublicOrigin; else the request's own where host filtering
 * validated its Host (AllowedHosts without `*`) or in Development; else none, and proofs are
 * refused (a provider-source app may gain a JwtBearer scheme the startup rule never saw).
 */
function htuOrigins (config: ApplicationConfiguration, environmentName: string): (request: FastifyRequest) => string | undefined {
  const configured = config.Hosting.PublicOrigin.trim()
  if (configured !== '') {
    const origin = resourceOf(configured, '')
    return () => origin
  }
  if (hasValidatedOrigin(config, environmentName)) return (request) => `${request.protocol}://${request.host}`
  return () => undefined
}

/** PublicOrigin, AllowedHosts without `*`, or Development: a request's origin is one the operator chose. */
function hasValidatedOrigin (config: ApplicationConfiguration, environmentName: string): boolean {
  return config.Hosting.PublicOrigin.trim() !== '' || isDevelopment(environmentName) || restrictsHosts(config.Hosting.AllowedHosts)
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

/** The route's challenge settings. */
function routeChallengeOf (request: FastifyRequest): ChallengeSettings {
  return request.routeOptions.config ?? {}
}

/** The absolute URL of the protected-resource metadata the challenge names, or undefined where none is published. */
function resourceMetadataUrlOf (request: FastifyRequest, settings: ChallengeSettings): string | undefined {
  if (settings.resourceMetadataOrigin === undefined) return undefined
  const origin = resourceOf(settings.resourceMetadataOrigin, `${request.protocol}://${request.host}`)
  const own = settings.resourceMetadataPath
  return `${origin}${own !== undefined && own.origins.includes(new URL(origin).origin) ? own.path : RESOURCE_METADATA_PATH}`
}

/** The parameters a challenge of the request carries besides its error: `resource_metadata` where published, and `scope` (a 401's: the configured scopes; a 403's: the policy's). */
function challengeParametersOf (request: FastifyRequest, settings: ChallengeSettings, scope: string | undefined): { resourceMetadata?: string, scope?: string } {
  const resourceMetadata = resourceMetadataUrlOf(request, settings)
  return { ...(resourceMetadata === undefined ? {} : { resourceMetadata }), ...(scope === undefined ? {} : { scope }) }
}

/**
 * The 401 of a refused (or missing, `error` undefined) bearer token: problem+json and
 * `WWW-Authenticate` with `resource_metadata` where it is published and `scope` where scopes are
 * configured, and no detail.
 */
export function sendBearerChallenge (request: FastifyRequest, reply: FastifyReply, error: 'invalid_token' | undefined, settings: ChallengeSettings = routeChallengeOf(request)): FastifyReply {
  const parameters = challengeParametersOf(request, settings, settings.bearerScope)
  const bearer = bearerChallenge({ ...(error === undefined ? {} : { error }), ...parameters })
  const dpopAlgorithms = settings.dpopAlgorithms
  reply.header('www-authenticate', error === undefined && dpopAlgorithms !== undefined ? [bearer, dpopChallenge(dpopAlgorithms, parameters)] : bearer)
  return sendProblem(request, reply, 401, { code: error === undefined ? 'APP_ERR_AUTH_REQUIRED' : 'APP_ERR_BEARER_INVALID' })
}

/** The 401 of a refused DPoP request (RFC 9449 section 7.1): `error` names the proof or the token, `algs` the proof algorithms. */
function sendDPoPChallenge (request: FastifyRequest, reply: FastifyReply, error: 'invalid_token' | 'invalid_dpop_proof', algorithms: readonly string[], settings: ChallengeSettings): FastifyReply {
  reply.header('www-authenticate', dpopChallenge(algorithms, { error, ...challengeParametersOf(request, settings, settings.bearerScope) }))
  return sendProblem(request, reply, 401, { code: 'APP_ERR_BEARER_INVALID' })
}

/**
 * The 403 of a valid bearer token that does not meet the route's policy (RFC 6750
 * `insufficient_scope`): the policy's `scope` (none when it asks for no scope) and the same
 * `resource_metadata` as the route's 401, which a client's scope step-up reads.
 */
export function sendInsufficientScope (request: FastifyRequest, reply: FastifyReply, scope?: string): FastifyReply {
  reply.header('www-authenticate', bearerChallenge({ error: 'insufficient_scope', ...challengeParametersOf(request, routeChallengeOf(request), scope) }))
  return sendProblem(request, reply, 403, { code: 'APP_ERR_BEARER_SCOPE' })
}

/** Whether a bearer token authenticated the request (no anti-forgery token is needed then). */
export function isBearerAuthenticated (request: FastifyRequest): boolean {
  return request.bearer !== undefined
}

type Hook = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void

/** How the request carried its token: decides the challenge of a refusal. */
type Presentation = 'Bearer' | 'DPoP'

function bearerHook (options: BearerContext, anonymous: boolean, names: ReadonlySet<string> | undefined, challenge?: ChallengeSettings): Hook {
  const { schemes, refusals, replay, proofRecords, htuOriginOf, registered } = options
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
    const settings = challenge ?? routeChallengeOf(request)
    if (presentation === 'DPoP' || failure === 'dpop_required') {
      sendDPoPChallenge(request, reply, isProofFailure(failure) ? 'invalid_dpop_proof' : 'invalid_token', dpopAlgorithmsOf(schemes.schemes), settings)
      return
    }
    sendBearerChallenge(request, reply, 'invalid_token', settings)
  }
  /** Counts the refusal of `client` (not when the issuer failed: `unavailable`), then answers it. */
  function fail (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void, failure: BearerFailure, presentation: Presentation, client: string, unavailable = false): void {
    const counting = unavailable || refusals === undefined ? Promise.resolve(false) : refusals.count(client)
    counting.then((held) => { refuse(request, reply, done, failure, held, presentation, unavailable) }, () => { refuse(request, reply, done, failure, false, presentation, unavailable) })
  }
  /** 429 with Retry-After: the client is over a limit (`limit` names which in the log line). */
  function holdBack (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void, wait: number, limit: 'refusals' | 'dpop_proofs'): void {
    request.log.info({ event: 'bearer.refused', failure: 'rate_limited', limit }, 'bearer token refused')
    reply.header('retry-after', String(wait))
    done(createError('APP_ERR_RATE_LIMITED', String(wait)))
  }
  /** A DPoP request: exactly one proof, then {@link authenticateDPoP}. */
  function authenticateWithProof (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void, token: string, client: string, settle: (error: unknown) => void): void {
    const proofs = dpopProofsOf(request)
    if (proofs.length !== 1) {
      fail(request, reply, done, proofs.length === 0 ? 'dpop_missing' : 'dpop_multiple', 'DPoP', client)
      return
    }
    authenticateDPoP(request, token, proofs[0] as string, client).then((outcome) => {
      if ('retryAfterSeconds' in outcome) {
        holdBack(request, reply, done, outcome.retryAfterSeconds, 'dpop_proofs')
        return
      }
      accept(request, outcome.authentication, outcome.verifiedNow)
      done()
    }, settle)
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
      holdBack(request, reply, done, wait, 'refusals')
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
    authenticateWithProof(request, reply, done, token, client, settle)
  }

  /**
   * The proof, then the token, then its binding to the proof's key, then the client's count of
   * proof records; the proof's `jti` is recorded last. Over the count: the seconds to wait.
   */
  async function authenticateDPoP (request: FastifyRequest, token: string, proofText: string, client: string): Promise<{ authentication: BearerAuthentication, verifiedNow: boolean } | { retryAfterSeconds: number }> {
    const origin = htuOriginOf(request)
    // No validated origin (issue 40, item 4): no URL a proof could be checked against.
    if (origin === undefined) throw new BearerTokenError('dpop_url')
    const proof = await verifyDPoPProof(proofText, {
      method: request.method,
      url: `${origin}${pathOf(request.url)}`,
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
    const retryAfterSeconds = await proofRecords?.admit(client)
    if (retryAfterSeconds !== undefined) return { retryAfterSeconds }
    if (!await replay.remember(`${proof.jkt}.${proof.jti}`, proof.replayUntilMs)) throw new BearerTokenError('dpop_replay')
    return { authentication, verifiedNow: cached === undefined }
  }
}

/**
 * RFC 9728: `GET /.well-known/oauth-protected-resource` (anonymous, in the reviewed inventory),
 * naming the configured JwtBearer schemes' issuers, and its URL in every challenge; and for each
 * resource under a path (a configured audience such as `https://app.example.com/mcp`),
 * `GET /.well-known/oauth-protected-resource/mcp` naming that resource and the issuers of the
 * schemes that accept it (RFC 9728 section 3.1; 404 on another origin).
 */
function publishResourceMetadata (app: FastifyInstance, config: ApplicationConfiguration, pathResources: ReadonlyMap<string, readonly PathResource[]>): void {
  const publicOrigin = config.Hosting.PublicOrigin
  const originOf = (request: FastifyRequest): string => resourceOf(publicOrigin, `${request.protocol}://${request.host}`)
  const configuredSchemes = new Set(enabledProviderInstances(config).filter((instance) => instance.protocol === 'JwtBearer').map((instance) => instance.scheme))
  const issuersOf = (names: ReadonlySet<string>): string[] => bearerSchemesOf(app.authentication.providers).filter((scheme) => names.has(scheme.scheme)).map((scheme) => scheme.issuer ?? scheme.configuredIssuer)
  const send = async (reply: FastifyReply, resource: string, issuers: readonly string[]): Promise<FastifyReply> => await reply.header('cache-control', 'public, max-age=3600').type('application/json')
    .send(protectedResourceMetadata(resource, issuers, config.Authentication.Bearer.ScopesSupported))
  app.get(RESOURCE_METADATA_PATH, { config: { allowAnonymous: true } }, async (request, reply) => await send(reply, originOf(request), issuersOf(configuredSchemes)))
  for (const [path, resources] of pathResources) {
    app.get(resourceMetadataPathOf(path), { config: { allowAnonymous: true } }, async (request, reply) => {
      const origin = new URL(originOf(request)).origin
      const resource = resources.find((candidate) => candidate.origin === origin)
      if (resource === undefined) return sendProblem(request, reply, 404, { code: 'APP_ERR_NOT_FOUND' })
      return await send(reply, resource.resource, issuersOf(new Set(resource.schemes)))
    })
  }
}

/** The configured schemes' resources under a path (bearer/resource-metadata.ts). */
function configuredPathResources (config: ApplicationConfiguration): Map<string, PathResource[]> {
  const schemes = enabledProviderInstances(config).flatMap((instance) => instance.protocol === 'JwtBearer' ? [{ scheme: instance.scheme, audiences: instance.settings.Audiences }] : [])
  return pathResourcesOf(schemes, config.Hosting.PublicOrigin)
}

/** The proof algorithms a 401 without a token names in a `DPoP` challenge: those of the configured schemes with RequireDPoP, or none. */
function requiredDPoPAlgorithmsOf (config: ApplicationConfiguration): string[] | undefined {
  const required = enabledProviderInstances(config).flatMap((instance) => instance.protocol === 'JwtBearer' && instance.settings.RequireDPoP
    ? (instance.settings.ValidAlgorithms.length === 0 ? DEFAULT_VALID_ALGORITHMS : instance.settings.ValidAlgorithms)
    : [])
  return required.length === 0 ? undefined : [...new Set(required)]
}

/** What the bearer hook needs, from the configuration and the app's providers and state store. */
function bearerContextOf (app: FastifyInstance, options: BearerPluginOptions): BearerContext {
  const { config } = options
  const providers = app.authentication.providers
  const limits = config.RateLimits
  const increment = limits.Enabled ? app.state.increment?.bind(app.state) : undefined
  const windowMs = limits.WindowSeconds * 1000
  return {
    schemes: new BearerSchemes(() => bearerSchemesOf(providers), (scheme) => providers.get(scheme)?.bearer, { transformation: config.Authentication.ClaimsTransformation }),
    ...(increment === undefined
      ? {}
      : {
          refusals: new RefusalLimit({ increment, perWindow: limits.BearerRefusalsPerWindow, windowMs }),
          proofRecords: new DPoPProofLimit({ increment, perWindow: limits.DPoPProofsPerWindow, windowMs })
        }),
    replay: new ReplayCache(app.state, 'dpop'),
    htuOriginOf: htuOrigins(config, options.environmentName),
    registered: (scheme) => providers.get(scheme)?.bearer
  }
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
  const context = bearerContextOf(app, options)
  const dpopAlgorithms = requiredDPoPAlgorithmsOf(config)
  const scope = config.Authentication.Bearer.ScopesSupported.join(' ')
  const pathResources = configured ? configuredPathResources(config) : new Map<string, PathResource[]>()
  if (configured) publishResourceMetadata(app, config, pathResources)
  // Only a provider-source app gets here without a validated origin (the startup rule refuses a configured scheme).
  if (!hasValidatedOrigin(config, options.environmentName)) app.log.warn({ event: 'bearer.dpop.no_origin', settings: ['Hosting:PublicOrigin', 'Hosting:AllowedHosts'] }, 'DPoP requests will be refused: no validated origin for their htu')
  // The challenge of every bearer route, and of a path under the prefixes that no route serves.
  const challenge: ChallengeSettings = {
    ...(configured ? { resourceMetadataOrigin: config.Hosting.PublicOrigin } : {}),
    ...(dpopAlgorithms === undefined ? {} : { dpopAlgorithms }),
    ...(scope === '' ? {} : { bearerScope: scope })
  }
  const pathPrefixes = config.Authentication.Bearer.PathPrefixes
  const configuredNames = new Set(enabledProviderInstances(config).filter((instance) => instance.protocol === 'JwtBearer').map((instance) => instance.scheme))
  if (options.unmatched !== undefined) {
    Object.assign(options.unmatched, {
      covers: (path: string) => pathPrefixes.some((prefix) => path.startsWith(prefix)),
      authenticate: bearerHook(context, false, undefined, challenge),
      challenge: (request: FastifyRequest, reply: FastifyReply) => sendBearerChallenge(request, reply, undefined, challenge)
    } satisfies UnmatchedApiPaths)
  }
  const fallbackRequiresUser = config.Authorization.RequireAuthenticatedUserByDefault
  app.addHook('onRoute', (route) => {
    const routeConfig = route.config ?? {}
    if (!acceptsBearer(route.url, routeConfig.bearer, pathPrefixes)) return
    const ownResource = pathResources.get(route.url)
    const resourceMetadataPath = ownResource === undefined ? {} : { resourceMetadataPath: { path: resourceMetadataPathOf(route.url), origins: ownResource.map((resource) => resource.origin) } }
    route.config = { ...routeConfig, bearer: true, ...challenge, ...resourceMetadataPath }
    const anonymous = routeAccessOf(routeConfig, `${String(route.method)} ${route.url}`, fallbackRequiresUser).kind === 'anonymous'
    const existing = route.onRequest
    const hooks = existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]
    // First: the authorization hook (added earlier) must see the bearer principal.
    route.onRequest = [bearerHook(context, anonymous, routeSchemesOf(routeConfig.bearerSchemes, `${String(route.method)} ${route.url}`, configuredNames, options.providerSource)), ...hooks] as never
  })
}

export default fp(bearerPlugin, { name: 'bearer', dependencies: ['session', 'authorization', 'authentication'] })
