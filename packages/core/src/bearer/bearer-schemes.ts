/**
 * The bearer schemes of an app, as one authenticator (issue 35, item 2): a token is looked up in
 * the verified-token cache first (token-cache.ts, keyed by its hash, until its expiry), else it is
 * given to one scheme and, once verified, cached. Only the request's candidate schemes
 * (scheme-routing.ts: the schemes whose PathPrefixes its path starts with, and that its route's
 * `config.bearerSchemes` names) may receive it (issue 40, items 1 and 5): a JWT goes to the
 * candidate whose issuer its `iss` names (read from the unverified payload only to pick the
 * scheme; that scheme then verifies everything), an opaque token to the one introspecting
 * candidate its TokenPrefix selects, never to several in turn; no candidate: refused as `issuer`
 * with no outbound call. A cached caller counts only on a request that selects its scheme. An
 * introspected token is cached until its `exp` or the scheme's CacheSeconds, whichever comes
 * first. A token verified now passes the app's token-validated hooks (token-validated-hook.ts)
 * before the cache keeps what they answered. An issuer from the provider source that cannot answer is refused as an unknown issuer is
 * ({@link BearerTokenError.concealed}). It is the default request-credential type
 * (credential-types.ts): it takes every token no other type recognises. Plain inputs, no Fastify
 * types.
 */
import type { ClaimsTransformation } from '../sign-in/completion.js'
import type { CredentialType } from './credential-types.js'
import { BearerTokenError, type BearerFailure } from './failures.js'
import type { Presentation } from './presentation.js'
import type { BearerAuthentication, JwtBearerScheme } from './jwt-bearer-scheme.js'
import { introspectingSchemeFor, isCandidate } from './scheme-routing.js'
import { isCompactJws, MAX_BEARER_TOKEN_BYTES } from './token-shape.js'
import { TokenCache, tokenCacheKeyOf } from './token-cache.js'
import { runTokenValidatedHooks, type TokenValidatedHook } from './token-validated-hook.js'

/**
 * Bytes V8 keeps for a string of its own: a 16-byte header and a byte per character (two when one
 * is outside Latin-1), rounded up to 8.
 */
function stringBytes (value: string): number {
  return (16 + value.length * (/[\u0100-\uffff]/.test(value) ? 2 : 1) + 7) & ~7
}

/** A cache entry's fixed part: key, map slot, entry, authentication, principal, ticket, access facts, session id (bench/token-cache-memory.ts). */
const ENTRY_BYTES = 1536
/**
 * One claim's object ({type, value, issuer}) and its array slot, with room for a type string of its
 * own (types are mostly shared: JSON keys are internalized, application types are constants; the
 * issuer string is the scheme's).
 */
const CLAIM_BYTES = 64

/**
 * The heap an entry keeps, estimated from above (issue 40, item 6; measured against the heap
 * retained by bench/token-cache-memory.ts across token shapes): the fixed part, and per claim its
 * object and its value string; the scopes and client id. Values a normalized claim shares with
 * its original are counted twice, so the estimate stays above the heap kept.
 */
export function bytesOf (authentication: BearerAuthentication): number {
  let bytes = ENTRY_BYTES
  for (const claim of authentication.principal.claims) bytes += CLAIM_BYTES + stringBytes(claim.value)
  for (const scope of authentication.scopes) bytes += 8 + stringBytes(scope)
  return authentication.clientId === undefined ? bytes : bytes + stringBytes(authentication.clientId)
}

/** The `iss` of a token's payload, unverified; undefined when the token is not shaped for one. */
function unverifiedIssuerOf (token: string): string | undefined {
  const first = token.indexOf('.')
  const second = token.indexOf('.', first + 1)
  if (first <= 0 || second <= first + 1) return undefined
  try {
    const payload: unknown = JSON.parse(Buffer.from(token.slice(first + 1, second), 'base64url').toString('utf8'))
    const iss = (payload as { iss?: unknown } | null)?.iss
    return typeof iss === 'string' ? iss : undefined
  } catch {
    return undefined
  }
}

export interface BearerSchemesOptions {
  /** `Authentication:ClaimsTransformation`, applied to every token's claims. */
  readonly transformation: ClaimsTransformation
  readonly now?: () => number
  readonly cache?: TokenCache<CachedAuthentication>
}

/** A cache entry: the caller, and the scheme instance that verified it (replaced or removed: the entry no longer counts). */
export interface CachedAuthentication {
  readonly authentication: BearerAuthentication
  readonly by: JwtBearerScheme
}

export class BearerSchemes implements CredentialType {
  readonly type = 'JwtBearer'
  readonly #schemes: () => readonly JwtBearerScheme[]
  readonly #registered: (scheme: string) => JwtBearerScheme | undefined
  readonly #transformation: ClaimsTransformation
  readonly #cache: TokenCache<CachedAuthentication>
  readonly #now: () => number
  readonly #validatedHooks: TokenValidatedHook[] = []

  /**
   * `schemes` gives the current bearer schemes (the configured ones, and those the provider
   * source adds or removes at runtime), `registered` the one registered under a name (a map
   * lookup: the cache-hit path allocates nothing).
   */
  constructor (schemes: () => readonly JwtBearerScheme[], registered: (scheme: string) => JwtBearerScheme | undefined, options: BearerSchemesOptions) {
    this.#schemes = schemes
    this.#registered = registered
    this.#transformation = options.transformation
    this.#now = options.now ?? Date.now
    this.#cache = options.cache ?? new TokenCache()
  }

  get schemes (): readonly JwtBearerScheme[] {
    return this.#schemes()
  }

  /** The default type: every token no other type recognises (a JWT, or an issuer's opaque token). */
  recognises (): boolean {
    return true
  }

  /** Why a verified token may not be used as `Bearer`: DPoP-bound, or its scheme requires DPoP. A DPoP request's checks are the handler's. */
  refusalOf (authentication: BearerAuthentication, presentation: Presentation): BearerFailure | undefined {
    if (presentation !== 'Bearer') return undefined
    if (authentication.confirmationKey !== undefined) return 'dpop_bound_as_bearer'
    return this.#registered(authentication.scheme)?.requiresDPoP === true ? 'dpop_required' : undefined
  }

  /**
   * Adds a hook called once per token verified now, before the cache keeps it
   * (token-validated-hook.ts): what the cache keeps is what the hooks answered.
   */
  onTokenValidated (hook: TokenValidatedHook): void {
    this.#validatedHooks.push(hook)
  }

  /** Every proof algorithm the current schemes accept, for `DPoP algs="..."`. */
  proofAlgorithms (): string[] {
    const algorithms = new Set<string>()
    for (const scheme of this.#schemes()) for (const algorithm of scheme.algorithms) algorithms.add(algorithm)
    return [...algorithms]
  }

  /** Whether the registered scheme `scheme` accepts DPoP proofs signed with `algorithm`. */
  acceptsProofAlgorithm (scheme: string, algorithm: string): boolean {
    return this.#registered(scheme)?.algorithms.has(algorithm) === true
  }

  /**
   * The caller of `token` when it is in the verified-token cache, still valid, its scheme is
   * still the registered one (a scheme removed or replaced at runtime invalidates its entries)
   * and a candidate of this request: `path` (before the query, as sent) and the route's
   * `config.bearerSchemes` (`names`; undefined: every scheme).
   */
  cached (token: string, path: string, names?: ReadonlySet<string>): BearerAuthentication | undefined {
    if (token.length > MAX_BEARER_TOKEN_BYTES) return undefined
    const entry = this.#cache.get(tokenCacheKeyOf(token), this.#now())
    if (entry === undefined || this.#registered(entry.by.scheme) !== entry.by) return undefined
    return isCandidate(entry.by, path, names) ? entry.authentication : undefined
  }

  /** The schemes a request to `path` on a route restricted to `names` may give a token to. */
  #candidates (path: string, names: ReadonlySet<string> | undefined): JwtBearerScheme[] {
    return this.#schemes().filter((scheme) => isCandidate(scheme, path, names))
  }

  /**
   * The candidate that must verify the JWT `token`: the one whose issuer its `iss` names (without
   * `iss`: the only candidate, which refuses it). Refuses as `malformed` or `issuer` without
   * cryptography or outbound call, so a token naming an issuer the request does not select makes
   * the app fetch nothing.
   */
  #schemeFor (token: string, candidates: readonly JwtBearerScheme[]): JwtBearerScheme {
    if (candidates.length === 0) throw new BearerTokenError('issuer')
    const iss = unverifiedIssuerOf(token)
    if (iss === undefined) {
      if (candidates.length === 1) return candidates[0] as JwtBearerScheme
      throw new BearerTokenError('malformed')
    }
    const scheme = candidates.find((candidate) => (candidate.issuer ?? candidate.configuredIssuer) === iss || candidate.developmentIssuer === iss) ??
      candidates.find((candidate) => candidate.issuer === undefined && candidate.configuredIssuer.replace(/\/+$/, '') === iss.replace(/\/+$/, ''))
    if (scheme === undefined) throw new BearerTokenError('issuer')
    return scheme
  }

  /** The caller `token` authenticates on a request to `path` (route restricted to `names`), from the cache or verified now; throws {@link BearerTokenError}. */
  async authenticate (token: string, path: string, names?: ReadonlySet<string>): Promise<BearerAuthentication> {
    return this.cached(token, path, names) ?? await this.verify(token, path, names)
  }

  /**
   * Verifies `token` with the one scheme the request selects (the cache not consulted) and caches
   * the result; throws {@link BearerTokenError}. An opaque token, while any scheme introspects,
   * goes to the introspecting candidate scheme-routing.ts picks, or to none (`issuer`).
   */
  async verify (token: string, path: string, names?: ReadonlySet<string>): Promise<BearerAuthentication> {
    if (token.length > MAX_BEARER_TOKEN_BYTES) throw new BearerTokenError('oversized')
    const candidates = this.#candidates(path, names)
    if (!isCompactJws(token)) {
      const schemes = this.#schemes()
      if (schemes.some((scheme) => scheme.introspects)) {
        const scheme = introspectingSchemeFor(token, candidates, schemes)
        if (scheme === undefined) throw new BearerTokenError('issuer')
        return await this.#verifyWith(token, scheme)
      }
    }
    return await this.#verifyWith(token, this.#schemeFor(token, candidates))
  }

  /** `scheme` verifies `token`; an issuer from the provider source that cannot answer is a concealed refusal (401, as an unknown issuer). */
  async #verifyWith (token: string, scheme: JwtBearerScheme): Promise<BearerAuthentication> {
    let authentication: BearerAuthentication
    try {
      authentication = await scheme.authenticate(token, this.#transformation)
    } catch (error) {
      if (scheme.runtime && error instanceof BearerTokenError && (error.failure === 'keys_unavailable' || error.failure === 'introspection_unavailable')) {
        throw new BearerTokenError(error.failure, { cause: error, concealed: true })
      }
      throw error
    }
    return this.#remember(token, scheme, this.#validatedHooks.length === 0 ? authentication : await runTokenValidatedHooks(this.#validatedHooks, authentication))
  }

  #remember (token: string, scheme: JwtBearerScheme, authentication: BearerAuthentication): BearerAuthentication {
    this.#cache.set(tokenCacheKeyOf(token), { authentication, by: scheme }, authentication.cachedUntilMs ?? authentication.expiresAtMs, bytesOf(authentication))
    return authentication
  }
}
