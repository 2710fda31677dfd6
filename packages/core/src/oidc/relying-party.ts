/**
 * OpenID Connect relying party (auth-contract.md, "Providers:OpenIdConnect"; issue 3), built on
 * openid-client 6 without Fastify types: discovery with a timeout, the authorization request
 * (code flow, PKCE S256, state, nonce), the callback (token exchange, ID token validation with
 * the signature checked and the algorithm pinned, userinfo merged) and the flattening of claims.
 *
 * openid-client's defaults this module changes on purpose:
 * - it skips the ID token signature for tokens from the token endpoint: this module verifies it
 *   with the provider's `jwks_uri` keys (oidc/provider-keys.ts, which refetches the set once when
 *   the `kid` is unknown, so a key rotation without overlap costs no sign-in);
 * - it accepts any algorithm the provider advertises: `id_token_signed_response_alg` pins one;
 * - it does not refuse an `iat` in the future: the clock skew setting does.
 */
import * as client from 'openid-client'
import type { Claim } from '../session/principal.js'
import type { Secret } from '../config/secret.js'
import { networkCauseCode, oauthErrorCode } from '../http/outbound-diagnostics.js'
import { TokenRefreshError } from '../session/token-refresh.js'
import { pathClaims } from '../sign-in/claim-paths.js'
import { SignInRefusal } from '../sign-in/refusal.js'
import { groupOverageInJson, type GroupOverageIndicator } from '../sign-in/group-overage.js'
import { KeySetUnavailableError, UnknownSigningKeyError, type ProviderKeys } from './provider-keys.js'

/** Seconds an outbound call (discovery, token, JWKS, userinfo) may take. */
export const OUTBOUND_TIMEOUT_SECONDS = 10
/** Default allowed clock difference for `exp`, `nbf` and `iat` (seconds): `Providers:OpenIdConnect:ClockSkewSeconds`. */
export const CLOCK_TOLERANCE_SECONDS = 60

/** Protocol claims of the ID token that describe the token, not the user; not kept as user claims. */
const PROTOCOL_CLAIMS = new Set(['iss', 'aud', 'exp', 'iat', 'nbf', 'nonce', 'at_hash', 'c_hash', 's_hash', 'azp', 'auth_time', 'jti', 'sid'])

export interface OpenIdConnectSettings {
  /** Issuer URL (`Authority`). */
  readonly authority: string
  readonly clientId: string
  /** Revealed only inside the token request. */
  readonly clientSecret: Secret
  readonly idTokenSignedResponseAlg: string
  /**
   * DANGEROUS: allows http to the provider. Only for an http Authority on a loopback host in
   * Development (startup validation rejects http anywhere else).
   */
  readonly allowInsecureRequests: boolean
  readonly timeoutSeconds?: number
  /** `TokenEndpointAuthMethod`; empty or absent: chosen from discovery. */
  readonly tokenEndpointAuthMethod?: '' | 'client_secret_basic' | 'client_secret_post'
  /** `ClockSkewSeconds`; default {@link CLOCK_TOLERANCE_SECONDS}. */
  readonly clockToleranceSeconds?: number
}

/**
 * Failure classes of a callback, logged as `failure` (never with a code, token or secret):
 * `token` (token endpoint error or unreachable), `id_token` and the more specific `nonce`,
 * `issuer`, `audience`, `expired`, `signature` (a key of the provider does not verify it, or the
 * algorithm is not the pinned one), `unknown_key` (its `kid` names no published key, even after
 * refetching the key set), `unavailable` (the key set cannot be loaded), and `userinfo`.
 */
export type OpenIdConnectFailure = 'token' | 'id_token' | 'nonce' | 'issuer' | 'audience' | 'expired' | 'signature' | 'unknown_key' | 'unavailable' | 'userinfo'

/**
 * Safe log fields of a failure: the HTTP status and OAuth `error` code of a token or userinfo
 * endpoint refusal (`invalid_client` for a wrong client secret), the network cause code. Never
 * the error description, never a token.
 */
export interface OpenIdConnectDiagnostics {
  readonly httpStatus?: number
  readonly oauthError?: string
  readonly causeCode?: string
}

/** A coded failure; `cause` holds the library error for the log's error name and code only. */
export class OpenIdConnectError extends SignInRefusal<OpenIdConnectFailure, OpenIdConnectDiagnostics> {
  readonly code: string | undefined

  constructor (failure: OpenIdConnectFailure, code: string | undefined, options?: ErrorOptions & { diagnostics?: OpenIdConnectDiagnostics }) {
    super(failure, `OpenID Connect sign-in failed (${failure})`, { ...options, diagnostics: options?.diagnostics ?? diagnosticsOf(options?.cause) })
    this.name = 'OpenIdConnectError'
    this.code = code
  }
}

/**
 * The endpoint's answer as openid-client reports it: a ResponseBodyError carries the OAuth
 * `error` body member, a WWWAuthenticateChallengeError (HTTP 401 with `WWW-Authenticate`, as a
 * provider answers a wrong client secret) its challenge parameters.
 */
export function diagnosticsOf (error: unknown): OpenIdConnectDiagnostics {
  const result: { httpStatus?: number, oauthError?: string, causeCode?: string } = {}
  if (error instanceof client.ResponseBodyError) {
    result.httpStatus = error.status
    const code = oauthErrorCode(error.error)
    if (code !== undefined) result.oauthError = code
  } else if (error instanceof client.WWWAuthenticateChallengeError) {
    result.httpStatus = error.status
    const challenges: readonly client.WWWAuthenticateChallenge[] = Array.isArray(error.cause) ? error.cause : []
    const code = challenges.map((challenge) => oauthErrorCode(challenge.parameters.error)).find((value) => value !== undefined)
    if (code !== undefined) result.oauthError = code
  } else {
    const causeCode = networkCauseCode(error)
    if (causeCode !== undefined) result.causeCode = causeCode
  }
  return result
}

/** Largest error body read from a token endpoint that refused with a challenge. */
const MAX_ERROR_BODY_BYTES = 16 * 1024

/**
 * {@link diagnosticsOf}, plus the OAuth `error` member of the JSON body when a 401 challenge
 * carries no `error` parameter (openid-client does not read the body then): LemonLDAP::NG and
 * others answer `WWW-Authenticate: Basic realm=...` with `{"error":"invalid_client"}`.
 */
export async function readDiagnostics (error: unknown): Promise<OpenIdConnectDiagnostics> {
  const diagnostics = diagnosticsOf(error)
  if (!(error instanceof client.WWWAuthenticateChallengeError) || diagnostics.oauthError !== undefined) return diagnostics
  try {
    const response = error.response
    if (response.bodyUsed) return diagnostics
    const reader = response.body?.getReader()
    if (reader === undefined) return diagnostics
    let text = ''
    const decoder = new TextDecoder()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      text += decoder.decode(value, { stream: true })
      if (text.length > MAX_ERROR_BODY_BYTES) { await reader.cancel(); return diagnostics }
    }
    const body = JSON.parse(text) as { error?: unknown }
    const code = oauthErrorCode(body?.error)
    return code === undefined ? diagnostics : { ...diagnostics, oauthError: code }
  } catch {
    return diagnostics
  }
}

/** The client authentication method used for `configured` against the provider's discovery list. */
export function tokenEndpointAuthMethodOf (configured: OpenIdConnectSettings['tokenEndpointAuthMethod'], supported: unknown): 'client_secret_basic' | 'client_secret_post' {
  if (configured === 'client_secret_basic' || configured === 'client_secret_post') return configured
  // RFC 8414 section 2: an absent list means client_secret_basic.
  const methods = Array.isArray(supported) ? supported : []
  return !methods.includes('client_secret_basic') && methods.includes('client_secret_post') ? 'client_secret_post' : 'client_secret_basic'
}

/**
 * Client authentication at the token endpoint with the client secret, revealed at the moment the
 * request is built: the configured method, else client_secret_basic unless the provider supports
 * only client_secret_post.
 */
function clientSecretAuthentication (secret: Secret, configured: OpenIdConnectSettings['tokenEndpointAuthMethod']): client.ClientAuth {
  return (as, metadata, body, headers) => {
    const usePost = tokenEndpointAuthMethodOf(configured, as.token_endpoint_auth_methods_supported) === 'client_secret_post'
    const method = usePost ? client.ClientSecretPost(secret.reveal()) : client.ClientSecretBasic(secret.reveal())
    method(as, metadata, body, headers)
  }
}

/** The discovery document URL openid-client requests for `authority` (OpenID Connect Discovery 1.0, section 4). */
export function discoveryUrlOf (authority: string): string {
  const url = new URL(authority)
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/.well-known/openid-configuration`
  return url.href
}

/** Fetches `<Authority>/.well-known/openid-configuration` and prepares the client. */
export async function discoverProvider (settings: OpenIdConnectSettings): Promise<client.Configuration> {
  // The ID token signature is verified with ProviderKeys, not openid-client's non-repudiation check.
  const execute = settings.allowInsecureRequests ? [client.allowInsecureRequests] : []
  return await client.discovery(
    new URL(settings.authority),
    settings.clientId,
    {
      id_token_signed_response_alg: settings.idTokenSignedResponseAlg,
      [client.clockTolerance]: settings.clockToleranceSeconds ?? CLOCK_TOLERANCE_SECONDS
    },
    clientSecretAuthentication(settings.clientSecret, settings.tokenEndpointAuthMethod),
    { execute, timeout: settings.timeoutSeconds ?? OUTBOUND_TIMEOUT_SECONDS }
  )
}

/** Builds the authorization URL (response_type code, PKCE S256, state, nonce). */
export async function buildAuthorizationRequest (config: client.Configuration, options: {
  readonly redirectUri: string
  readonly scopes: readonly string[]
  readonly state: string
  readonly nonce: string
  readonly codeVerifier: string
  /** `form_post`: OAuth 2.0 Form Post Response Mode; absent: the query (default for code). */
  readonly responseMode?: 'query' | 'form_post'
  /** `login_hint` (OpenID Connect Core 3.1.2.1): the address e-mail discovery chose the provider by. */
  readonly loginHint?: string
}): Promise<URL> {
  return client.buildAuthorizationUrl(config, {
    ...(options.responseMode === 'form_post' ? { response_mode: 'form_post' } : {}),
    ...(options.loginHint === undefined ? {} : { login_hint: options.loginHint }),
    response_type: 'code',
    redirect_uri: options.redirectUri,
    scope: options.scopes.join(' '),
    state: options.state,
    nonce: options.nonce,
    code_challenge: await client.calculatePKCECodeChallenge(options.codeVerifier),
    code_challenge_method: 'S256'
  })
}

/** Fresh nonce and PKCE verifier for one flow. */
export function newCorrelationValues (): { nonce: string, codeVerifier: string } {
  return { nonce: client.randomNonce(), codeVerifier: client.randomPKCECodeVerifier() }
}

export interface CallbackResult {
  /** ID token claims merged with userinfo, flattened; protocol claims left out. */
  readonly claims: Claim[]
  /** Raw tokens, for SaveTokens. */
  readonly tokens: Record<string, string>
  /** The ID token's issuer, `sub` and `sid` (when sent): the keys of back-channel logout. */
  readonly providerSession: { readonly issuer: string, readonly sub: string, readonly sid?: string }
  /** The ID token or userinfo says the groups were left out (Entra ID group overage). */
  readonly groupOverage?: GroupOverageIndicator
}

/** What the ID token signature and the claims need besides the flow's own values. */
export interface CallbackOptions {
  /** The provider's signing keys. */
  readonly keys: ProviderKeys
  /** The pinned `IdTokenSignedResponseAlg`. */
  readonly algorithm: string
  /** `ClockSkewSeconds`: an `iat` further in the future is refused. */
  readonly clockToleranceSeconds: number
  /** ClaimMappings sources that are nested claim paths (`realm_access.roles`). */
  readonly fieldPaths?: readonly string[]
}

/**
 * Verifies the ID token's signature (openid-client has validated its claims). Throws
 * {@link OpenIdConnectError}: `unknown_key`, `unavailable` (key set) or `signature`.
 */
export async function verifyIdTokenSignature (idToken: string, keys: ProviderKeys, algorithm: string): Promise<void> {
  try {
    await keys.verify(idToken, [algorithm])
  } catch (error) {
    if (error instanceof UnknownSigningKeyError) throw new OpenIdConnectError('unknown_key', error.code, { cause: error, diagnostics: {} })
    if (error instanceof KeySetUnavailableError) throw new OpenIdConnectError('unavailable', error.code, { cause: error })
    throw new OpenIdConnectError('signature', 'ID_TOKEN_SIGNATURE_INVALID', { cause: error, diagnostics: {} })
  }
}

function isNetworkFailure (error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  if (code === 'OAUTH_TIMEOUT' || code === 'OAUTH_ABORT') return true
  return error instanceof TypeError
}

/** Maps an openid-client error thrown by the code grant to a failure class. */
export function classifyGrantError (error: unknown): OpenIdConnectFailure {
  // A 401 with a WWW-Authenticate challenge from the token endpoint: the client authentication
  // (secret) was refused.
  if (error instanceof client.ResponseBodyError || error instanceof client.WWWAuthenticateChallengeError || isNetworkFailure(error)) return 'token'
  const code = (error as { code?: unknown } | null)?.code
  const cause = (error as { cause?: unknown } | null)?.cause as { code?: unknown, cause?: { claim?: unknown } } | undefined
  const claim = cause?.cause?.claim
  switch (code) {
    case 'OAUTH_RESPONSE_IS_NOT_CONFORM':
    case 'OAUTH_RESPONSE_IS_NOT_JSON':
      return 'token'
    case 'OAUTH_JWT_CLAIM_COMPARISON_FAILED':
      if (claim === 'nonce') return 'nonce'
      if (claim === 'iss') return 'issuer'
      if (claim === 'aud' || claim === 'azp') return 'audience'
      return 'id_token'
    case 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED':
      return 'expired'
    case 'OAUTH_KEY_SELECTION_FAILED':
      return 'signature'
    default:
      break
  }
  const message = (error instanceof Error && error.cause instanceof Error ? error.cause.message : '') || (error instanceof Error ? error.message : '')
  if (/signature|JWT "alg"|alg header/i.test(message)) return 'signature'
  // An ID token without the nonce the flow sent is a nonce failure, like a mismatched one.
  if (/JWT "nonce" \(nonce\) claim missing/.test(message)) return 'nonce'
  return 'id_token'
}

/** One claim per value: arrays become one claim each, numbers and booleans strings, objects JSON. */
export function flattenClaims (source: Readonly<Record<string, unknown>>, issuer: string, skip: ReadonlySet<string> = new Set()): Claim[] {
  const claims: Claim[] = []
  for (const [type, value] of Object.entries(source)) {
    if (skip.has(type)) continue
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === null || item === undefined) continue
      const text = typeof item === 'string' ? item : typeof item === 'object' ? JSON.stringify(item) : String(item)
      claims.push({ type, value: text, issuer })
    }
  }
  return claims
}

/**
 * Handles the authorization response at the callback URL: validates state, exchanges the code
 * with the PKCE verifier, validates the ID token (issuer, audience, signature with the pinned
 * algorithm, expiry, nonce, iat not in the future) and merges userinfo (its `sub` must equal the
 * ID token's). Throws {@link OpenIdConnectError}.
 */
export async function completeAuthorizationCodeFlow (config: client.Configuration, callbackUrl: URL, expected: {
  readonly state: string
  readonly nonce: string
  readonly codeVerifier: string
}, options: CallbackOptions): Promise<CallbackResult> {
  let response: Awaited<ReturnType<typeof client.authorizationCodeGrant>>
  try {
    response = await client.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: expected.codeVerifier,
      expectedState: expected.state,
      expectedNonce: expected.nonce,
      idTokenExpected: true
    })
  } catch (error) {
    const failure = classifyGrantError(error)
    throw new OpenIdConnectError(failure, codeOf(error), { cause: error, diagnostics: await readDiagnostics(error) })
  }
  const idToken = response.claims()
  if (idToken === undefined || response.id_token === undefined) throw new OpenIdConnectError('id_token', 'ID_TOKEN_MISSING')
  await verifyIdTokenSignature(response.id_token, options.keys, options.algorithm)
  if (idToken.iat > Math.floor(Date.now() / 1000) + options.clockToleranceSeconds) throw new OpenIdConnectError('id_token', 'ID_TOKEN_IAT_IN_FUTURE')

  let userInfo: Record<string, unknown> = {}
  if (config.serverMetadata().userinfo_endpoint !== undefined && typeof response.access_token === 'string') {
    try {
      userInfo = await client.fetchUserInfo(config, response.access_token, idToken.sub)
    } catch (error) {
      throw new OpenIdConnectError('userinfo', codeOf(error), { cause: error })
    }
  }

  const issuer = idToken.iss
  const fromIdToken = flattenClaims(idToken as Record<string, unknown>, issuer, PROTOCOL_CLAIMS)
  const seen = new Set(fromIdToken.map((claim) => `${claim.type}\u0000${claim.value}`))
  const fromUserInfo = flattenClaims(userInfo, issuer).filter((claim) => !seen.has(`${claim.type}\u0000${claim.value}`))
  // ClaimMappings sources such as realm_access.roles: the ID token's value, else userinfo's.
  const fromPaths = pathClaims([idToken as Record<string, unknown>, userInfo], options.fieldPaths ?? [], issuer)
  const groupOverage = groupOverageInJson(idToken as Record<string, unknown>) ?? groupOverageInJson(userInfo)

  const tokens: Record<string, string> = { id_token: response.id_token }
  if (typeof response.access_token === 'string') tokens.access_token = response.access_token
  if (typeof response.refresh_token === 'string') tokens.refresh_token = response.refresh_token
  if (typeof response.token_type === 'string') tokens.token_type = response.token_type
  const expiresIn = response.expiresIn()
  if (expiresIn !== undefined) tokens.expires_at = String(Math.floor(Date.now() / 1000) + expiresIn)
  const sid = typeof idToken.sid === 'string' && idToken.sid !== '' ? idToken.sid : undefined
  return {
    claims: [...fromIdToken, ...fromUserInfo, ...fromPaths],
    tokens,
    providerSession: { issuer, sub: idToken.sub, ...(sid === undefined ? {} : { sid }) },
    ...(groupOverage === undefined ? {} : { groupOverage })
  }
}

/**
 * Redeems the stored refresh token at the token endpoint (openid-client's refreshTokenGrant: the
 * client authentication, and the ID token checks when the provider sends a new one: signature
 * with the pinned algorithm, issuer, audience, expiry). A new ID token must name the same `sub` as
 * the stored one (OpenID Connect Core 1.0, section 12.2). Throws {@link TokenRefreshError}:
 * `invalid_grant` when the provider refuses the refresh token, `id_token` for a bad ID token,
 * `unavailable` for anything else.
 */
export async function refreshTokens (config: client.Configuration, stored: Readonly<Record<string, string>>, keys: { readonly keys: ProviderKeys, readonly algorithm: string }): Promise<Record<string, string>> {
  const refreshToken = stored.refresh_token
  if (refreshToken === undefined) throw new TokenRefreshError('unavailable')
  let response: Awaited<ReturnType<typeof client.refreshTokenGrant>>
  try {
    response = await client.refreshTokenGrant(config, refreshToken)
  } catch (error) {
    const diagnostics = diagnosticsOf(error)
    if (diagnostics.oauthError === 'invalid_grant') throw new TokenRefreshError('invalid_grant', diagnostics, { cause: error })
    const failure = classifyGrantError(error)
    throw new TokenRefreshError(failure === 'token' ? 'unavailable' : 'id_token', diagnostics, { cause: error })
  }
  const tokens: Record<string, string> = { access_token: response.access_token }
  if (typeof response.refresh_token === 'string') tokens.refresh_token = response.refresh_token
  if (typeof response.token_type === 'string') tokens.token_type = response.token_type
  const expiresIn = response.expiresIn()
  if (expiresIn !== undefined) tokens.expires_at = String(Math.floor(Date.now() / 1000) + expiresIn)
  if (typeof response.id_token === 'string') {
    try {
      await verifyIdTokenSignature(response.id_token, keys.keys, keys.algorithm)
    } catch (error) {
      const unavailable = error instanceof OpenIdConnectError && error.failure === 'unavailable'
      throw new TokenRefreshError(unavailable ? 'unavailable' : 'id_token', {}, { cause: error })
    }
    const previousSub = stored.id_token === undefined ? undefined : subjectOfIdToken(stored.id_token)
    if (previousSub !== undefined && response.claims()?.sub !== previousSub) throw new TokenRefreshError('id_token')
    tokens.id_token = response.id_token
  }
  return tokens
}

/** The `sub` of an ID token this app validated and stored before (not verified again). */
function subjectOfIdToken (idToken: string): string | undefined {
  try {
    const payload = JSON.parse(Buffer.from(idToken.split('.')[1] ?? '', 'base64url').toString('utf8')) as { sub?: unknown }
    return typeof payload.sub === 'string' ? payload.sub : undefined
  } catch {
    return undefined
  }
}

function codeOf (error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

/** Availability of the discovered metadata, as health and the login page report it. */
export interface MetadataStatus {
  readonly available: boolean
  readonly reason?: 'metadata_loading' | 'metadata_unreachable' | 'metadata_invalid'
}

export interface MetadataScheduleOptions {
  /** Refresh interval after a successful load. Default 1 hour. */
  readonly refreshMs?: number
  /** First retry delay after a failed load; doubles up to {@link maxRetryMs}. Default 15 s. */
  readonly retryMs?: number
  readonly maxRetryMs?: number
  /** Called after each failed attempt (for a log line). */
  readonly onFailure?: (reason: NonNullable<MetadataStatus['reason']>, error: unknown) => void
  readonly onLoaded?: () => void
}

/**
 * Discovery loaded in the background and refreshed on a schedule. Timers are unref'd (they never
 * keep the process alive) and {@link stop} clears them. A failed refresh keeps the last good
 * metadata; until a first load succeeds the status is unavailable with a reason class.
 */
export class ProviderMetadata {
  readonly #load: () => Promise<client.Configuration>
  readonly #options: MetadataScheduleOptions
  #current: client.Configuration | undefined
  #reason: NonNullable<MetadataStatus['reason']> = 'metadata_loading'
  #timer: NodeJS.Timeout | undefined
  #stopped = false
  #retryMs: number

  constructor (load: () => Promise<client.Configuration>, options: MetadataScheduleOptions = {}) {
    this.#load = load
    this.#options = options
    this.#retryMs = options.retryMs ?? 15_000
  }

  get current (): client.Configuration | undefined {
    return this.#current
  }

  status (): MetadataStatus {
    return this.#current !== undefined ? { available: true } : { available: false, reason: this.#reason }
  }

  /** Starts the first load without waiting for it. */
  start (): void {
    this.refresh().catch(() => {})
  }

  /** Loads now; resolves when the attempt has finished (never rejects). */
  async refresh (): Promise<void> {
    if (this.#stopped) return
    clearTimeout(this.#timer)
    let delay: number
    try {
      this.#current = await this.#load()
      this.#retryMs = this.#options.retryMs ?? 15_000
      delay = this.#options.refreshMs ?? 3_600_000
      this.#options.onLoaded?.()
    } catch (error) {
      this.#reason = isNetworkFailure(error) ? 'metadata_unreachable' : 'metadata_invalid'
      this.#options.onFailure?.(this.#reason, error)
      delay = this.#current === undefined ? this.#retryMs : Math.min(this.#retryMs, this.#options.refreshMs ?? 3_600_000)
      this.#retryMs = Math.min(this.#retryMs * 2, this.#options.maxRetryMs ?? 300_000)
    }
    if (this.#stopped) return
    this.#timer = setTimeout(() => { this.refresh().catch(() => {}) }, delay)
    this.#timer.unref()
  }

  stop (): void {
    this.#stopped = true
    clearTimeout(this.#timer)
  }
}
