/**
 * The bearer schemes of an app, as one authenticator (issue 35, item 2): a token is looked up in
 * the verified-token cache first (token-cache.ts, keyed by its hash, until its expiry), else it is
 * given to the scheme whose issuer its `iss` names (read from the unverified payload only to pick
 * the scheme; that scheme then verifies everything) and, once verified, cached. A token that is
 * not a JWT goes to the schemes with introspection, in order, until one finds it active (an
 * inactive answer passes it to the next; an unavailable endpoint ends the search); it is cached
 * until its `exp` or the scheme's CacheSeconds, whichever comes first. Plain inputs, no Fastify
 * types.
 */
import type { ClaimsTransformation } from '../sign-in/completion.js'
import { BearerTokenError } from './failures.js'
import type { BearerAuthentication, JwtBearerScheme } from './jwt-bearer-scheme.js'
import { isCompactJws, MAX_BEARER_TOKEN_BYTES } from './token-shape.js'
import { TokenCache, tokenCacheKeyOf } from './token-cache.js'

/** Estimated bytes an entry holds: its claims as UTF-16 text, and a fixed overhead. */
function bytesOf (authentication: BearerAuthentication): number {
  let characters = 0
  for (const claim of authentication.principal.claims) characters += claim.type.length + claim.value.length + claim.issuer.length
  return 2 * characters + 512
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

export class BearerSchemes {
  readonly #schemes: () => readonly JwtBearerScheme[]
  readonly #registered: (scheme: string) => JwtBearerScheme | undefined
  readonly #transformation: ClaimsTransformation
  readonly #cache: TokenCache<CachedAuthentication>
  readonly #now: () => number

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

  /**
   * The caller of `token` when it is in the verified-token cache, still valid, and its scheme is
   * still the registered one (a scheme removed or replaced at runtime invalidates its entries).
   */
  cached (token: string): BearerAuthentication | undefined {
    if (token.length > MAX_BEARER_TOKEN_BYTES) return undefined
    return this.#live(this.#cache.get(tokenCacheKeyOf(token), this.#now()))
  }

  #live (entry: CachedAuthentication | undefined): BearerAuthentication | undefined {
    if (entry === undefined) return undefined
    return this.#registered(entry.by.scheme) === entry.by ? entry.authentication : undefined
  }

  /**
   * The scheme that must verify `token`: the only one, or the one whose issuer its `iss` names.
   * Refuses as `oversized`, `malformed` or `issuer` without cryptography.
   */
  #schemeFor (token: string): JwtBearerScheme {
    if (token.length > MAX_BEARER_TOKEN_BYTES) throw new BearerTokenError('oversized')
    const schemes = this.#schemes()
    if (schemes.length === 1) return schemes[0] as JwtBearerScheme
    const iss = unverifiedIssuerOf(token)
    if (iss === undefined) throw new BearerTokenError(schemes.length === 0 ? 'issuer' : 'malformed')
    const scheme = schemes.find((candidate) => (candidate.issuer ?? candidate.configuredIssuer) === iss) ??
      schemes.find((candidate) => candidate.issuer === undefined && candidate.configuredIssuer.replace(/\/+$/, '') === iss.replace(/\/+$/, ''))
    if (scheme === undefined) throw new BearerTokenError('issuer')
    return scheme
  }

  /** The caller `token` authenticates, from the cache or verified now; throws {@link BearerTokenError}. */
  async authenticate (token: string): Promise<BearerAuthentication> {
    return this.cached(token) ?? await this.verify(token)
  }

  /** Verifies `token` with its scheme (the cache not consulted) and caches the result; throws {@link BearerTokenError}. */
  async verify (token: string): Promise<BearerAuthentication> {
    if (token.length <= MAX_BEARER_TOKEN_BYTES && !isCompactJws(token)) {
      const introspecting = this.#schemes().filter((scheme) => scheme.introspects)
      if (introspecting.length > 0) return await this.#introspect(token, introspecting)
    }
    const scheme = this.#schemeFor(token)
    return this.#remember(token, scheme, await scheme.authenticate(token, this.#transformation))
  }

  /** An opaque token: each introspecting scheme in order until one finds it active. */
  async #introspect (token: string, schemes: readonly JwtBearerScheme[]): Promise<BearerAuthentication> {
    let refusal: BearerTokenError = new BearerTokenError('inactive')
    for (const scheme of schemes) {
      try {
        return this.#remember(token, scheme, await scheme.authenticate(token, this.#transformation))
      } catch (error) {
        if (!(error instanceof BearerTokenError) || error.failure !== 'inactive') throw error
        refusal = error
      }
    }
    throw refusal
  }

  #remember (token: string, scheme: JwtBearerScheme, authentication: BearerAuthentication): BearerAuthentication {
    this.#cache.set(tokenCacheKeyOf(token), { authentication, by: scheme }, authentication.cachedUntilMs ?? authentication.expiresAtMs, bytesOf(authentication))
    return authentication
  }
}
