/**
 * Request credentials on API routes, as one handler (issue 35, item 2; issue 43, item 1): what
 * `Authorization: Bearer` or `Authorization: DPoP` on a route that accepts them becomes. A token
 * goes to the one request-credential type that recognises it (credential-types.ts; JwtBearer
 * unless another type claims it); the type's cache serves most calls without a closure or an
 * address hash ({@link BearerHandler.cached}). Every caller, cached or verified now, then passes
 * the deny checks (session/deny-checks.ts), so a registered check refuses a cached token on the
 * next request. Refused tokens count per client (refusal-limit.ts): over the limit, the client is
 * held back before any cryptography (a token already in the cache still passes).
 *
 * DPoP (RFC 9449), JwtBearer's: exactly one `DPoP` proof header; the proof is checked first
 * (dpop.ts; `htu` is the request's external URL, given by the caller, or the proof is refused as
 * `dpop_url`), then the token, whose `cnf.jkt` must be the proof key's thumbprint, then the
 * deny checks, then the client's count of proof records (dpop-proof-limit.ts); only then is the
 * proof's `jti` recorded in the shared replay cache, so a refused request writes nothing. A
 * DPoP-bound token sent as `Bearer`, or a plain token of a scheme with RequireDPoP, is refused.
 *
 * A type's own header (credential-types.ts `ownHeader`: API keys' `X-API-Key`) is read only when
 * no `Authorization` came: its token goes to that type alone, answered as `Bearer`; both headers at
 * once are refused as `ambiguous`. A type may hold a request back with a limit of its own
 * ({@link CredentialHeldError}: 429), which is not counted as a refusal.
 *
 * The outcome is plain data: accepted (the caller), refused (the failure class, for the log and
 * the challenge, bearer-answers.ts) or held (429 with the seconds to wait). No Fastify types.
 */
import type { CoreConfiguration } from '../config/schema.js'
import { DenyChecks } from '../session/deny-checks.js'
import type { ClaimsTransformation } from '../sign-in/completion.js'
import { clientKeyOf } from '../state/rate-limit-store.js'
import { ReplayCache } from '../state/replay-cache.js'
import type { StateStore } from '../state/state-store.js'
import { BearerSchemes } from './bearer-schemes.js'
import { CredentialTypes, type CredentialType, type RequestCredentialsApi } from './credential-types.js'
import { verifyDPoPProof } from './dpop.js'
import { DPoPProofLimit } from './dpop-proof-limit.js'
import { BearerTokenError, CredentialHeldError, isIssuerUnavailable, type BearerFailure, type HeldLimit } from './failures.js'
import type { BearerAuthentication, JwtBearerScheme } from './jwt-bearer-scheme.js'
import { dpopProofsOf, MAX_AUTHORIZATION_BYTES, ownHeaderTokenOf, sentBearerToken, sentCredentialOf, tokenOf, type Presentation, type RequestHeaders, type SentCredential } from './presentation.js'
import { RefusalLimit } from './refusal-limit.js'

/** A request's credential as the handler reads it: plain facts. */
export interface PresentedCredential {
  /** The `Authorization` value (its scheme is {@link presentation}), or the value of a type's own header ({@link source}). */
  readonly header: string
  readonly presentation: Presentation
  /** The header the credential came in: `authorization` (the default) or a type's own header (`x-api-key`). */
  readonly source?: string
  /** A credential came in `Authorization` and in a type's own header at once: refused (`ambiguous`). */
  readonly ambiguous?: boolean
  readonly method: string
  /** The path before the query, as sent. */
  readonly path: string
  /** The client's address (refusals and proof records count per client). */
  readonly ip: string
  /** The raw header list (name, value, ...): the `DPoP` proofs. */
  readonly rawHeaders: readonly string[]
  /** The origin of a DPoP proof's `htu` (asked only for a DPoP request); undefined: no validated origin, proofs are refused. */
  readonly htuOrigin: () => string | undefined
}

export type BearerOutcome =
  | { readonly kind: 'accepted', readonly authentication: BearerAuthentication, readonly verifiedNow: boolean }
  | { readonly kind: 'refused', readonly failure: BearerFailure, readonly presentation: Presentation, readonly held: boolean, readonly unavailable: boolean }
  | { readonly kind: 'held', readonly retryAfterSeconds: number, readonly limit: HeldLimit }

export interface BearerHandlerOptions {
  /** The request-credential types, JwtBearer the default. */
  readonly types: CredentialTypes
  /** The JwtBearer type: the one DPoP requests go to. */
  readonly jwt: BearerSchemes
  readonly denyChecks: DenyChecks
  /** DPoP proof ids already used (RFC 9449 section 11.1), in the shared state store. */
  readonly replay: ReplayCache
  /** Refused tokens per client; none: unlimited (RateLimits:Enabled false). */
  readonly refusals?: RefusalLimit
  /** Proof records per client; none: unlimited. */
  readonly proofRecords?: DPoPProofLimit
}

export class BearerHandler {
  readonly #options: BearerHandlerOptions

  constructor (options: BearerHandlerOptions) {
    this.#options = options
  }

  /** The JWS algorithms DPoP proofs may use (a DPoP challenge's `algs`). */
  proofAlgorithms (): readonly string[] {
    return this.#options.jwt.proofAlgorithms()
  }

  /** The credential of a request's headers (presentation.ts `sentCredentialOf`, with the registered types' own headers), `ambiguous`, or none. */
  sentCredentialOf (headers: RequestHeaders): SentCredential | 'ambiguous' | undefined {
    return sentCredentialOf(headers, this.#options.types.ownHeaders())
  }

  /**
   * The caller of a `Bearer` header when its type holds the token in its cache, the type does not
   * refuse it as presented and every deny check answers "no" synchronously; else undefined, and
   * {@link authenticate} decides (an asynchronous deny check is asked there).
   */
  cached (header: string, path: string, names: ReadonlySet<string> | undefined): BearerAuthentication | undefined {
    const token = sentBearerToken(header)
    const type = this.#options.types.typeOf(token)
    const authentication = type.cached(token, path, names)
    if (authentication === undefined || type.refusalOf?.(authentication, 'Bearer') !== undefined) return undefined
    if (this.#options.denyChecks.denies(authentication.principal) !== false) return undefined
    type.admitted?.(authentication)
    return authentication
  }

  /** The outcome of a request's credential; rejects only on an error that is not a refusal (a deny check that failed). */
  async authenticate (request: PresentedCredential, names: ReadonlySet<string> | undefined): Promise<BearerOutcome> {
    const { header, presentation, path } = request
    const source = request.source ?? 'authorization'
    const client = clientKeyOf(request.ip)
    try {
      if (presentation === 'Bearer' && source === 'authorization' && request.ambiguous !== true) {
        const sent = sentBearerToken(header)
        const type = this.#options.types.typeOf(sent)
        const cached = type.cached(sent, path, names)
        if (cached !== undefined) {
          const outcome = await this.#accepted(type, cached, false)
          type.admitted?.(cached)
          return outcome
        }
      }
      const wait = this.#options.refusals?.retryAfterSeconds(client)
      if (wait !== undefined) return { kind: 'held', retryAfterSeconds: wait, limit: 'refusals' }
      if (request.ambiguous === true) throw new BearerTokenError('ambiguous')
      if (source !== 'authorization') return await this.#authenticateOwnHeader(request, source, client, names)
      const token = tokenOf(header, presentation)
      if (token === undefined) throw new BearerTokenError(header.length > MAX_AUTHORIZATION_BYTES ? 'oversized' : 'malformed')
      if (presentation === 'DPoP') return await this.#authenticateDPoP(request, token, client, names)
      const type = this.#options.types.typeOf(token)
      return await this.#accepted(type, await type.verify(token, path, names, { client, header: source }))
    } catch (error) {
      if (error instanceof CredentialHeldError) return { kind: 'held', retryAfterSeconds: error.retryAfterSeconds, limit: error.limit }
      if (!(error instanceof BearerTokenError)) throw error
      return await this.#refused(error, presentation, client)
    }
  }

  /** A token in a type's own header: the whole value, for that type only (a value it does not recognise is malformed, never JwtBearer's). */
  async #authenticateOwnHeader (request: PresentedCredential, source: string, client: string, names: ReadonlySet<string> | undefined): Promise<BearerOutcome> {
    const type = this.#options.types.typeOfHeader(source)
    const token = ownHeaderTokenOf(request.header)
    if (type === undefined || token === undefined || !type.recognises(token)) throw new BearerTokenError(request.header.length > MAX_AUTHORIZATION_BYTES ? 'oversized' : 'malformed')
    return await this.#accepted(type, await type.verify(token, request.path, names, { client, header: source }))
  }

  /** A `Bearer` caller of `type`, unless the type refuses it as presented or a deny check refuses its principal. */
  async #accepted (type: CredentialType, authentication: BearerAuthentication, verifiedNow = authentication.fromCache !== true): Promise<BearerOutcome> {
    const refusal = type.refusalOf?.(authentication, 'Bearer')
    if (refusal !== undefined) throw new BearerTokenError(refusal)
    await this.#checkDenied(authentication)
    return { kind: 'accepted', authentication, verifiedNow }
  }

  async #checkDenied (authentication: BearerAuthentication): Promise<void> {
    if (await this.#options.denyChecks.denies(authentication.principal)) throw new BearerTokenError('denied')
  }

  /**
   * Exactly one proof; the proof, then the token, then its binding to the proof's key, then the
   * deny checks, then the client's count of proof records; the proof's `jti` is recorded last.
   */
  async #authenticateDPoP (request: PresentedCredential, token: string, client: string, names: ReadonlySet<string> | undefined): Promise<BearerOutcome> {
    const { jwt, proofRecords, replay } = this.#options
    const proofs = dpopProofsOf(request.rawHeaders)
    if (proofs.length !== 1) throw new BearerTokenError(proofs.length === 0 ? 'dpop_missing' : 'dpop_multiple')
    const origin = request.htuOrigin()
    // No validated origin (issue 40, item 4): no URL a proof could be checked against.
    if (origin === undefined) throw new BearerTokenError('dpop_url')
    const proof = await verifyDPoPProof(proofs[0] as string, {
      method: request.method,
      url: `${origin}${request.path}`,
      accessToken: token,
      algorithms: new Set(jwt.proofAlgorithms()),
      nowSeconds: Math.floor(Date.now() / 1000)
    })
    const cached = jwt.cached(token, request.path, names)
    const authentication = cached ?? await jwt.verify(token, request.path, names)
    if (authentication.confirmationKey === undefined) throw new BearerTokenError('dpop_unbound')
    if (authentication.confirmationKey !== proof.jkt) throw new BearerTokenError('dpop_binding')
    if (!jwt.acceptsProofAlgorithm(authentication.scheme, proof.alg)) throw new BearerTokenError('dpop_algorithm')
    await this.#checkDenied(authentication)
    const retryAfterSeconds = await proofRecords?.admit(client)
    if (retryAfterSeconds !== undefined) return { kind: 'held', retryAfterSeconds, limit: 'dpop_proofs' }
    if (!await replay.remember(`${proof.jkt}.${proof.jti}`, proof.replayUntilMs)) throw new BearerTokenError('dpop_replay')
    return { kind: 'accepted', authentication, verifiedNow: cached === undefined }
  }

  /** Counts the refusal of `client` (not when the issuer failed: `unavailable`, answered 503). */
  async #refused (error: BearerTokenError, presentation: Presentation, client: string): Promise<BearerOutcome> {
    const unavailable = isIssuerUnavailable(error)
    const refusals = this.#options.refusals
    const held = unavailable || refusals === undefined ? false : await refusals.count(client).catch(() => false)
    return { kind: 'refused', failure: error.failure, presentation, held, unavailable }
  }
}

/** What an app's handler is built from: its JwtBearer schemes, the claims transformation, the state store and the rate limits. */
export interface BearerHandlerSettings {
  /** The registered JwtBearer schemes (configured, and added by the provider source at runtime). */
  readonly schemes: () => readonly JwtBearerScheme[]
  /** The JwtBearer scheme registered under a name (a map look-up: the cache-hit path allocates nothing). */
  readonly registered: (scheme: string) => JwtBearerScheme | undefined
  /** `Authentication:ClaimsTransformation`. */
  readonly transformation: ClaimsTransformation
  readonly store: StateStore
  readonly rateLimits: CoreConfiguration['RateLimits']
}

/** The handler with JwtBearer as its default type, and `app.requestCredentials`, which extends its types and deny checks. */
export function createBearerHandler (settings: BearerHandlerSettings): { readonly handler: BearerHandler, readonly types: CredentialTypes, readonly api: RequestCredentialsApi } {
  const jwt = new BearerSchemes(settings.schemes, settings.registered, { transformation: settings.transformation })
  const types = new CredentialTypes(jwt)
  const denyChecks = new DenyChecks()
  const limits = settings.rateLimits
  const increment = limits.Enabled ? settings.store.increment?.bind(settings.store) : undefined
  const windowMs = limits.WindowSeconds * 1000
  const handler = new BearerHandler({
    types,
    jwt,
    denyChecks,
    replay: new ReplayCache(settings.store, 'dpop'),
    ...(increment === undefined
      ? {}
      : {
          refusals: new RefusalLimit({ increment, perWindow: limits.BearerRefusalsPerWindow, windowMs }),
          proofRecords: new DPoPProofLimit({ increment, perWindow: limits.DPoPProofsPerWindow, windowMs })
        })
  })
  return { handler, types, api: { registerType: (type) => { types.register(type) }, addDenyCheck: (check) => { denyChecks.add(check) }, onTokenValidated: (hook) => { jwt.onTokenValidated(hook) } } }
}
