/**
 * The bearer schemes of an app, as one authenticator (issue 35, item 2): a token is looked up in
 * the verified-token cache first (token-cache.ts, keyed by its hash, until its expiry), else it is
 * given to the scheme whose issuer its `iss` names (read from the unverified payload only to pick
 * the scheme; that scheme then verifies everything) and, once verified, cached. Plain inputs, no
 * Fastify types.
 */
import { BearerTokenError } from './failures.js'
import type { BearerAuthentication, JwtBearerScheme } from './jwt-bearer-scheme.js'
import { MAX_BEARER_TOKEN_BYTES } from './token-shape.js'
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

export class BearerSchemes {
  readonly schemes: readonly JwtBearerScheme[]
  readonly #cache: TokenCache<BearerAuthentication>
  readonly #now: () => number

  constructor (schemes: readonly JwtBearerScheme[], options: { readonly now?: () => number, readonly cache?: TokenCache<BearerAuthentication> } = {}) {
    this.schemes = schemes
    this.#now = options.now ?? Date.now
    this.#cache = options.cache ?? new TokenCache()
  }

  /** Whether `token` is in the verified-token cache and still valid (the caller may skip the failure limit). */
  cached (token: string): BearerAuthentication | undefined {
    if (token.length > MAX_BEARER_TOKEN_BYTES) return undefined
    return this.#cache.get(tokenCacheKeyOf(token), this.#now())
  }

  /**
   * The scheme that must verify `token`: the only one, or the one whose issuer its `iss` names.
   * Refuses as `oversized`, `malformed` or `issuer` without cryptography.
   */
  #schemeFor (token: string): JwtBearerScheme {
    if (token.length > MAX_BEARER_TOKEN_BYTES) throw new BearerTokenError('oversized')
    if (this.schemes.length === 1) return this.schemes[0] as JwtBearerScheme
    const iss = unverifiedIssuerOf(token)
    if (iss === undefined) throw new BearerTokenError('malformed')
    const scheme = this.schemes.find((candidate) => (candidate.issuer ?? candidate.configuredIssuer) === iss) ??
      this.schemes.find((candidate) => candidate.issuer === undefined && candidate.configuredIssuer.replace(/\/+$/, '') === iss.replace(/\/+$/, ''))
    if (scheme === undefined) throw new BearerTokenError('issuer')
    return scheme
  }

  /** The caller `token` authenticates, from the cache or verified now; throws {@link BearerTokenError}. */
  async authenticate (token: string): Promise<BearerAuthentication> {
    const key = tokenCacheKeyOf(token.length > MAX_BEARER_TOKEN_BYTES ? '' : token)
    const cached = token.length > MAX_BEARER_TOKEN_BYTES ? undefined : this.#cache.get(key, this.#now())
    if (cached !== undefined) return cached
    const authentication = await this.#schemeFor(token).authenticate(token)
    this.#cache.set(key, authentication, authentication.expiresAtMs, bytesOf(authentication))
    return authentication
  }
}
