/**
 * One bearer scheme (`Authentication:Schemes:<Name>` with `Type: JwtBearer`; issue 35, item 1):
 * where its issuer and key set come from (discovery at `<Authority>/.well-known/openid-configuration`,
 * or `Issuer` and `JwksUri` as written), the keys (oidc/provider-keys.ts, with an unknown-`kid`
 * refetch at most once per {@link BEARER_UNKNOWN_KEY_REFETCH_INTERVAL_MS}), and validation of one
 * token into a principal. With `Introspection` set, a token that is not a JWT is checked at the
 * issuer's introspection endpoint instead (introspection.ts; RFC 7662) and its answer checked as a
 * JWT's claims are (`iss` when present, `aud`, `exp`/`nbf`), giving the same principal. Every
 * outbound call reads through http/bounded-fetch.ts. Plain inputs, no Fastify types.
 */
import { fetchBounded } from '../http/bounded-fetch.js'
import type { Dispatcher } from '../http/outbound-address.js'
import { readClientAssertionKeys } from '../oidc/client-assertion.js'
import { decodeJwt } from 'jose'
import { ProviderKeys } from '../oidc/provider-keys.js'
import type { ClaimsTransformation } from '../sign-in/completion.js'
import { validateAccessToken, type VerifiedAccessToken } from './access-token.js'
import { principalOf, type BearerPrincipal } from './bearer-principal.js'
import { BearerTokenError } from './failures.js'
import { activeUntilMs, introspectionEnabled, TokenIntrospection, type IntrospectionSettings } from './introspection.js'
import { accessTokenFactsOf, checkAudience, checkIssuer, checkLifetime } from './token-claims.js'
import type { RoutingFacts } from './scheme-routing.js'
import { isCompactJws } from './token-shape.js'

/** At most one unknown-`kid` refetch per scheme in this many milliseconds (issue 35, "Bad input"). */
export const BEARER_UNKNOWN_KEY_REFETCH_INTERVAL_MS = 30_000
/** After a failed discovery, the next attempt waits at least this long (a request never waits for more than one). */
export const DISCOVERY_RETRY_MS = 30_000
/** MaxTokenLifetimeSeconds unless the scheme says otherwise: one day. */
export const DEFAULT_MAX_TOKEN_LIFETIME_SECONDS = 86_400
/** ValidAlgorithms unless the scheme says otherwise: asymmetric only. */
export const DEFAULT_VALID_ALGORITHMS: readonly string[] = ['RS256', 'PS256', 'ES256', 'EdDSA']

/**
 * The settings of a JwtBearer scheme, as `Authentication:Schemes:<Name>` spells them (the
 * configuration schema describes each key; settings-rules.ts checks them at startup).
 *
 * @public @experimental
 */
export interface JwtBearerSettings {
  /** Issuer URL; discovery gives the issuer and `jwks_uri`. Empty: {@link Issuer} and {@link JwksUri}. */
  readonly Authority: string
  /** The `iss` tokens must carry, when there is no Authority. */
  readonly Issuer: string
  /** The issuer's key set, when there is no Authority. */
  readonly JwksUri: string
  /** Accepted `aud` values (one must match). Required. */
  readonly Audiences: readonly string[]
  /** Accepted JWS algorithms; never `none` or HMAC. */
  readonly ValidAlgorithms: readonly string[]
  /** Allowed clock difference on `exp`, `nbf` and `iat`. */
  readonly ClockSkewSeconds: number
  /** Longest accepted `exp - iat` (or `exp - now` without `iat`); absent: {@link DEFAULT_MAX_TOKEN_LIFETIME_SECONDS}. */
  readonly MaxTokenLifetimeSeconds?: number
  /** The header's `typ` must be `at+jwt` (RFC 9068); absent: false. */
  readonly RequireAccessTokenType?: boolean
  /** DANGEROUS: accept tokens carrying ID-token claims (`nonce`, `at_hash`, ...); absent: false. */
  readonly DangerouslyAllowIdTokenMarkers?: boolean
  /** Token claim (or nested path) -> application claim type, as the OpenID Connect section's. */
  readonly ClaimMappings: Readonly<Record<string, string>>
  /** Only DPoP-bound tokens sent with a DPoP proof (RFC 9449); absent: false. */
  readonly RequireDPoP?: boolean
  /** Opaque tokens through introspection (RFC 7662); absent or without ClientId: off. */
  readonly Introspection?: IntrospectionSettings
  /** The request paths where the scheme's tokens are accepted (scheme-routing.ts); absent or empty: every bearer route. */
  readonly PathPrefixes?: readonly string[]
  /** DANGEROUS, Development only: also trust the app's development-token key (dev-tokens/); absent: false. */
  readonly DevelopmentTokens?: boolean
}

/** A bearer-authenticated caller: the principal, and what the token says about the client and its scopes. @public @experimental */
export interface BearerAuthentication {
  readonly scheme: string
  readonly principal: BearerPrincipal
  readonly clientId?: string
  readonly scopes: readonly string[]
  /** A client-credentials token: the caller is a client, not a user. */
  readonly machine: boolean
  /** `exp` in milliseconds since the epoch. */
  readonly expiresAtMs: number
  /** The token's `cnf.jkt` (RFC 9449): it may be used only with a DPoP proof signed by that key. */
  readonly confirmationKey?: string
  /** Until when the verified-token cache may reuse it, when earlier than {@link expiresAtMs} (an introspected token: CacheSeconds). */
  readonly cachedUntilMs?: number
  /** Fields every log line of the request carries (an API key's `keyId` and `keyPrefix`): the acting credential, never a secret. */
  readonly logBindings?: Readonly<Record<string, string>>
  /** A credential type answered from its own cache (an API key within its second): no `bearer.authenticated` line, as for a cached token. */
  readonly fromCache?: boolean
}

/** @public @experimental */
export interface JwtBearerSchemeOptions {
  readonly scheme: string
  readonly settings: JwtBearerSettings
  /** The colon path of its section under the configuration's root (`<Root>:Authentication:Schemes:<Name>`), for the keys a refusal names. */
  readonly keyPrefix: string
  /**
   * Set for a scheme from the app's provider source: the tenant key its definition attached is
   * the principal's only `application:tenant` claim (a customer's issuer cannot speak for the
   * tenant), as for a sign-in (sign-in/completion.ts `withSourceTenant`).
   */
  readonly runtime?: { readonly tenant?: string }
  /** DANGEROUS: http to the issuer (loopback in Development only, as for OpenID Connect). */
  readonly allowInsecureRequests: boolean
  readonly timeoutMs: number
  /**
   * The connections discovery and the key set use: a scheme from the provider source reaches only
   * public addresses (http/public-address-dispatcher.ts); default the global fetch.
   */
  readonly dispatcher?: Dispatcher
  /** Milliseconds since the epoch; for tests. */
  readonly now?: () => number
  /** Called after every unknown-key refetch, with whether the key was then found. */
  readonly onUnknownKeyRefetch?: (found: boolean) => void
  /**
   * DANGEROUS, Development only (`DevelopmentTokens`, plugins/providers/jwt-bearer.ts): tokens
   * naming `issuer` are verified with `keys` (the app's development-token key, dev-tokens/)
   * instead of the issuer's, with every other check of the scheme.
   */
  readonly developmentTokens?: { readonly issuer: string, readonly algorithms: ReadonlySet<string>, readonly keys: Pick<ProviderKeys, 'verify'> }
}

interface Resolved {
  readonly issuer: string
  readonly keys: ProviderKeys
  /** Discovery's `introspection_endpoint`, when it names one. */
  readonly introspectionEndpoint?: string
}

/** Why the scheme is not ready: its discovery has not loaded (yet). @public @experimental */
export type BearerSchemeStatus = { readonly available: true } | { readonly available: false, readonly reason: 'metadata_loading' | 'metadata_unreachable' | 'metadata_invalid' }

/** The token's `cnf.jkt` (RFC 9449 section 6), when it is DPoP-bound. */
function confirmationOf (payload: Readonly<Record<string, unknown>>): { confirmationKey?: string } {
  const cnf = payload.cnf
  const jkt = cnf !== null && typeof cnf === 'object' ? (cnf as { jkt?: unknown }).jkt : undefined
  return typeof jkt === 'string' && jkt !== '' ? { confirmationKey: jkt } : {}
}

/** @public @experimental */
export class JwtBearerScheme implements RoutingFacts {
  /** Its request-credential type (providers/provider.ts `RequestCredentialScheme`). */
  readonly type = 'JwtBearer'
  readonly scheme: string
  readonly #options: JwtBearerSchemeOptions
  readonly #algorithms: ReadonlySet<string>
  readonly #audiences: ReadonlySet<string>
  readonly #introspection: TokenIntrospection | undefined
  #resolved: Resolved | undefined
  #opening: Promise<Resolved> | undefined
  #failedAt = Number.NEGATIVE_INFINITY
  #reason: 'metadata_loading' | 'metadata_unreachable' | 'metadata_invalid' = 'metadata_loading'

  constructor (options: JwtBearerSchemeOptions) {
    this.scheme = options.scheme
    this.#options = options
    const algorithms = options.settings.ValidAlgorithms.length === 0 ? DEFAULT_VALID_ALGORITHMS : options.settings.ValidAlgorithms
    this.#algorithms = new Set(algorithms)
    this.#audiences = new Set(options.settings.Audiences)
    this.#introspection = this.#introspectionOf(options)
    const { Authority, Issuer, JwksUri } = options.settings
    if (Authority === '') this.#resolved = { issuer: Issuer, keys: this.#keysAt(JwksUri) }
  }

  #introspectionOf (options: JwtBearerSchemeOptions): TokenIntrospection | undefined {
    const settings = options.settings.Introspection
    if (!introspectionEnabled(settings)) return undefined
    const key = (name: string): string => `${options.keyPrefix}:Introspection:${name}`
    return new TokenIntrospection({
      settings,
      ...(settings.TokenEndpointAuthMethod === 'private_key_jwt'
        ? { assertionKeys: readClientAssertionKeys(settings.ClientAssertionKeys.map((entry) => entry.reveal()).join('\n'), settings.ClientAssertionCertificates.join('\n'), { keys: key('ClientAssertionKeys'), certificates: key('ClientAssertionCertificates') }) }
        : {}),
      allowInsecureRequests: options.allowInsecureRequests,
      timeoutMs: options.timeoutMs,
      ...(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher }),
      ...(options.now === undefined ? {} : { now: options.now })
    })
  }

  /** Whether the scheme takes only DPoP-bound tokens with a proof (RequireDPoP). */
  get requiresDPoP (): boolean {
    return this.#options.settings.RequireDPoP === true
  }

  /** The JWS algorithms of tokens and DPoP proofs (ValidAlgorithms). */
  get algorithms (): ReadonlySet<string> {
    return this.#algorithms
  }

  /** Whether the scheme checks opaque tokens at an introspection endpoint. */
  get introspects (): boolean {
    return this.#introspection !== undefined
  }

  get #maxLifetimeSeconds (): number {
    return this.#options.settings.MaxTokenLifetimeSeconds ?? DEFAULT_MAX_TOKEN_LIFETIME_SECONDS
  }

  /** PathPrefixes: the request paths where its tokens are accepted (empty: every bearer route). */
  get pathPrefixes (): readonly string[] {
    return this.#options.settings.PathPrefixes ?? []
  }

  /** Introspection:TokenPrefix ('' for none): the opaque tokens that are this issuer's (scheme-routing.ts). */
  get tokenPrefix (): string {
    return this.#options.settings.Introspection?.TokenPrefix ?? ''
  }

  /** Defined by the provider source (a customer's issuer): an issuer that cannot answer is answered as a refusal (bearer-schemes.ts). */
  get runtime (): boolean {
    return this.#options.runtime !== undefined
  }

  #now (): number {
    return this.#options.now?.() ?? Date.now()
  }

  /** The issuer tokens must name, once known (always for a scheme without Authority). */
  get issuer (): string | undefined {
    return this.#resolved?.issuer
  }

  /** The `iss` of the development tokens the scheme also trusts (Development only), or undefined. */
  get developmentIssuer (): string | undefined {
    return this.#options.developmentTokens?.issuer
  }

  /** The issuer to advertise before discovery has loaded: the Authority or the Issuer as written. */
  get configuredIssuer (): string {
    return this.#options.settings.Authority === '' ? this.#options.settings.Issuer : this.#options.settings.Authority
  }

  status (): BearerSchemeStatus {
    return this.#resolved === undefined ? { available: false, reason: this.#reason } : { available: true }
  }

  #keysAt (jwksUri: string): ProviderKeys {
    return new ProviderKeys({
      jwksUri,
      allowInsecureRequests: this.#options.allowInsecureRequests,
      timeoutMs: this.#options.timeoutMs,
      unknownKeyRefetchIntervalMs: BEARER_UNKNOWN_KEY_REFETCH_INTERVAL_MS,
      ...(this.#options.dispatcher === undefined ? {} : { dispatcher: this.#options.dispatcher }),
      ...(this.#options.now === undefined ? {} : { now: this.#options.now }),
      ...(this.#options.onUnknownKeyRefetch === undefined ? {} : { onUnknownKeyRefetch: this.#options.onUnknownKeyRefetch })
    })
  }

  /**
   * Loads discovery (an Authority scheme) once; concurrent callers share the request. After a
   * failure the next attempt waits {@link DISCOVERY_RETRY_MS}, so tokens cannot make the app
   * hammer an unreachable issuer. Rejects with the failure.
   */
  async open (): Promise<void> {
    await this.#resolve()
  }

  async #resolve (): Promise<Resolved> {
    if (this.#resolved !== undefined) return this.#resolved
    if (this.#opening === undefined && this.#now() - this.#failedAt < DISCOVERY_RETRY_MS) throw new BearerTokenError('keys_unavailable')
    this.#opening ??= this.#discover().then((resolved) => {
      this.#resolved = resolved
      return resolved
    }, (error: unknown) => {
      this.#failedAt = this.#now()
      throw error
    }).finally(() => { this.#opening = undefined })
    return await this.#opening
  }

  async #discover (): Promise<Resolved> {
    const authority = this.#options.settings.Authority
    const url = new URL(`${authority.replace(/\/+$/, '')}/.well-known/openid-configuration`)
    let document: { issuer?: unknown, jwks_uri?: unknown, introspection_endpoint?: unknown }
    try {
      if (url.protocol !== 'https:' && !(this.#options.allowInsecureRequests && url.protocol === 'http:')) throw new Error('Authority must be https')
      const response = await fetchBounded(url, { headers: { accept: 'application/json' }, redirect: 'error' }, { kind: 'discovery', timeoutMs: this.#options.timeoutMs, ...(this.#options.dispatcher === undefined ? {} : { dispatcher: this.#options.dispatcher }) })
      if (!response.ok) throw new Error(`discovery answered ${response.status}`)
      document = await response.json() as typeof document
    } catch (error) {
      this.#reason = 'metadata_unreachable'
      throw new BearerTokenError('keys_unavailable', { cause: error })
    }
    const { issuer, jwks_uri: jwksUri, introspection_endpoint: introspectionEndpoint } = document ?? {}
    // OpenID Connect Discovery 1.0 section 4.3: the issuer is the Authority (a trailing slash aside).
    if (typeof issuer !== 'string' || typeof jwksUri !== 'string' || issuer.replace(/\/+$/, '') !== authority.replace(/\/+$/, '')) {
      this.#reason = 'metadata_invalid'
      throw new BearerTokenError('keys_unavailable')
    }
    return { issuer, keys: this.#keysAt(jwksUri), ...(typeof introspectionEndpoint === 'string' ? { introspectionEndpoint } : {}) }
  }

  /** Validates `token` into a bearer authentication, claims normalized by `transformation`; throws {@link BearerTokenError}. */
  async authenticate (token: string, transformation: ClaimsTransformation): Promise<BearerAuthentication> {
    if (this.#introspection !== undefined && !isCompactJws(token)) return await this.#authenticateOpaque(token, this.#introspection, transformation)
    const development = this.#developmentTokenOf(token)
    const { issuer, keys } = development ?? await this.#resolve()
    const nowSeconds = Math.floor(this.#now() / 1000)
    const verified: VerifiedAccessToken = await validateAccessToken(token, keys, {
      issuer,
      audiences: this.#audiences,
      algorithms: development?.algorithms ?? this.#algorithms,
      clockSkewSeconds: this.#options.settings.ClockSkewSeconds,
      maxLifetimeSeconds: this.#maxLifetimeSeconds,
      requireAccessTokenType: this.#options.settings.RequireAccessTokenType === true,
      allowIdTokenMarkers: this.#options.settings.DangerouslyAllowIdTokenMarkers === true
    }, nowSeconds)
    return this.#authenticationOf(token, verified, issuer, transformation, nowSeconds)
  }

  /** The development issuer and key when the scheme trusts them and `token` names that issuer (read unverified, only to pick the key). */
  #developmentTokenOf (token: string): { readonly issuer: string, readonly keys: Pick<ProviderKeys, 'verify'>, readonly algorithms: ReadonlySet<string> } | undefined {
    const development = this.#options.developmentTokens
    if (development === undefined) return undefined
    try {
      return decodeJwt(token).iss === development.issuer ? development : undefined
    } catch {
      return undefined
    }
  }

  /**
   * An opaque token: the introspection answer (active) checked as a JWT's claims are, `iss` only
   * when the answer carries one (RFC 7662 makes it optional). An answer without `exp` counts as
   * valid for CacheSeconds.
   */
  async #authenticateOpaque (token: string, introspection: TokenIntrospection, transformation: ClaimsTransformation): Promise<BearerAuthentication> {
    const resolved = await this.#resolve()
    const configured = this.#options.settings.Introspection?.Endpoint ?? ''
    const endpoint = configured !== '' ? configured : resolved.introspectionEndpoint
    if (endpoint === undefined) throw new BearerTokenError('introspection_unavailable')
    const answer = await introspection.introspect(token, { endpoint, issuer: resolved.issuer })
    const nowMs = this.#now()
    const nowSeconds = Math.floor(nowMs / 1000)
    if (answer.iss !== undefined) checkIssuer(answer, resolved.issuer)
    checkAudience(answer, this.#audiences)
    const claims = answer.exp === undefined ? { ...answer, exp: nowSeconds + introspection.cacheSeconds } : answer
    // The lifetime bound only where the answer has an exp of its own (issue 40, item 6).
    checkLifetime(claims, nowSeconds, { clockSkewSeconds: this.#options.settings.ClockSkewSeconds, ...(answer.exp === undefined ? {} : { maxLifetimeSeconds: this.#maxLifetimeSeconds }) })
    const authentication = this.#authenticationOf(token, { ...accessTokenFactsOf(claims), payload: claims }, resolved.issuer, transformation, nowSeconds)
    return { ...authentication, cachedUntilMs: Math.min(authentication.expiresAtMs, activeUntilMs(answer, nowMs, introspection.cacheSeconds)) }
  }

  #authenticationOf (token: string, verified: VerifiedAccessToken, issuer: string, transformation: ClaimsTransformation, nowSeconds: number): BearerAuthentication {
    const principal = principalOf(token, verified, {
      scheme: this.scheme,
      issuer,
      claimMappings: this.#options.settings.ClaimMappings,
      transformation,
      ...(this.#options.runtime === undefined ? {} : { runtime: this.#options.runtime })
    }, nowSeconds)
    return {
      scheme: this.scheme,
      principal,
      ...(verified.clientId === undefined ? {} : { clientId: verified.clientId }),
      scopes: verified.scopes,
      machine: verified.machine,
      expiresAtMs: (verified.expiresAt + this.#options.settings.ClockSkewSeconds) * 1000,
      ...confirmationOf(verified.payload)
    }
  }
}
