/**
 * The OAuth 2.0 authorization-code client behind the VendorA/B/C slots (auth-contract.md,
 * "Providers:VendorA, Providers:VendorB, Providers:VendorC"; RFC 6749 section 4.1, RFC 7636),
 * without Fastify types: the authorization URL (PKCE S256 when UsePkce), the token request with
 * client_secret_basic (encoded as http/basic-credentials.ts says) or client_secret_post (RFC 6749
 * section 2.3.1), the user-information request with the access token and, for GitHub-like
 * vendors, a second request for the verified primary e-mail address. Every outbound call has a timeout, refuses redirects and reads at most
 * {@link MAX_RESPONSE_BYTES}, stopping at the limit.
 *
 * Why not openid-client here (it serves OpenID Connect): its token-response processing validates
 * any `id_token` a vendor includes against an issuer a vendor slot does not have, requires
 * `token_type`, and reports GitHub's 200-status error bodies only as a non-conform response. A
 * vendor slot is plain OAuth 2.0 with no cryptography of its own: the PKCE helpers are
 * openid-client's; the rest is a few HTTP requests (docs/providers/oauth.md, "Why the vendor slots do
 * not use openid-client").
 */
import * as client from 'openid-client'
import type { Claim } from '../session/principal.js'
import type { Secret } from '../config/secret.js'
import { basicAuthorization } from '../http/basic-credentials.js'
import { bearerChallengeError, networkCauseCode, oauthErrorCode } from '../http/outbound-diagnostics.js'
import { OUTBOUND_RESPONSE_LIMITS, OutboundResponseTooLargeError, readBounded, tooLargeFields } from '../http/bounded-fetch.js'
import { TokenRefreshError } from '../session/token-refresh.js'
import { pathClaims, pushScalarClaims } from '../sign-in/claim-paths.js'
import { SignInRefusal } from '../errors.js'
import type { SignInFailure } from '../sign-in/sign-in-failure.js'

export { isFieldPath, valueAtPath } from '../sign-in/claim-paths.js'

/** Milliseconds an outbound call (token, user information) may take. */
export const VENDOR_TIMEOUT_MS = 10_000
/** Largest accepted token, user-information or e-mail response body (the caps of http/bounded-fetch.ts); reading stops here. */
export const MAX_RESPONSE_BYTES = Math.max(OUTBOUND_RESPONSE_LIMITS.token, OUTBOUND_RESPONSE_LIMITS.userinfo)

/** Defaults below the configured ClaimMappings: numeric `id` and `login` as most vendors name them. */
export const VENDOR_DEFAULT_CLAIM_MAPPINGS: Readonly<Record<string, string>> = { id: 'subject', login: 'name' }

/** `token` (token endpoint refused or unreachable) or `userinfo` (user information unusable). */
export type VendorFailure = Extract<SignInFailure, 'token' | 'userinfo'>

/** RFC 6749 section 2.3.1 client authentication methods a vendor slot can use. */
export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post'

/**
 * Safe log fields of a failure: the HTTP status, the vendor's OAuth `error` code (reduced to a
 * plain code; never the description) and the network cause code. Read by the shared `fail()`.
 */
export interface VendorDiagnostics {
  readonly httpStatus?: number
  readonly oauthError?: string
  readonly causeCode?: string
  /** A response over its size cap (http/bounded-fetch.ts): its kind and the cap. */
  readonly responseKind?: string
  readonly responseLimitBytes?: number
}

export class VendorFlowError extends SignInRefusal<VendorFailure, VendorDiagnostics> {
  readonly code: string

  constructor (failure: VendorFailure, code: string, options?: ErrorOptions & { diagnostics?: VendorDiagnostics }) {
    super(failure, `OAuth sign-in failed (${failure}: ${code})`, options)
    this.name = 'VendorFlowError'
    this.code = code
  }
}

export interface VendorEndpoints {
  readonly clientId: string
  /** Revealed only while the token request is built. */
  readonly clientSecret: Secret
  /** Default client_secret_basic. */
  readonly tokenEndpointAuthMethod?: TokenEndpointAuthMethod
  readonly authorizationEndpoint: string
  readonly tokenEndpoint: string
  readonly userInformationEndpoint: string
  /** GitHub's `/user/emails` shape: an array of `{ email, primary, verified }`. Optional. */
  readonly emailsEndpoint?: string | undefined
  readonly timeoutMs?: number
  readonly maxResponseBytes?: number
}

/** A PKCE verifier (RFC 7636 section 4.1: 43 characters of base64url). */
export function newCodeVerifier (): string {
  return client.randomPKCECodeVerifier()
}

export async function codeChallengeOf (verifier: string): Promise<string> {
  return await client.calculatePKCECodeChallenge(verifier)
}

export async function buildAuthorizationUrl (endpoints: VendorEndpoints, options: {
  readonly redirectUri: string
  readonly scopes: readonly string[]
  readonly state: string
  readonly codeVerifier?: string | undefined
  readonly extraParameters?: Readonly<Record<string, string>>
}): Promise<URL> {
  const url = new URL(endpoints.authorizationEndpoint)
  const parameters: Record<string, string> = {
    ...options.extraParameters,
    response_type: 'code',
    client_id: endpoints.clientId,
    redirect_uri: options.redirectUri,
    state: options.state
  }
  if (options.scopes.length > 0) parameters.scope = options.scopes.join(' ')
  if (options.codeVerifier !== undefined) {
    parameters.code_challenge = await codeChallengeOf(options.codeVerifier)
    parameters.code_challenge_method = 'S256'
  }
  for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, value)
  return url
}

interface EndpointFailureCodes {
  readonly unreachable: string
  readonly invalid: string
  readonly tooLarge: string
  readonly error: string
}

/** The `error` member of a JSON object body, as a safe code. */
function errorMemberOf (json: unknown): string | undefined {
  return isObject(json) ? oauthErrorCode(json.error) : undefined
}

/**
 * One JSON call to a provider endpoint: no redirects, a timeout, a hard size limit. Failures
 * become a {@link VendorFlowError} of `failure` with the step's own codes and the safe
 * diagnostics (status, OAuth error code, network cause); the JSON of a 2xx answer is returned.
 */
async function callJsonEndpoint (endpoints: VendorEndpoints, url: string, init: RequestInit, failure: VendorFailure, codes: EndpointFailureCodes): Promise<unknown> {
  const timeoutMs = endpoints.timeoutMs ?? VENDOR_TIMEOUT_MS
  const signal = AbortSignal.timeout(timeoutMs)
  let response: Response
  try {
    response = await fetch(url, { ...init, redirect: 'error', signal })
  } catch (error) {
    const causeCode = networkCauseCode(error)
    throw new VendorFlowError(failure, codes.unreachable, { cause: error, diagnostics: causeCode === undefined ? {} : { causeCode } })
  }
  const httpStatus = response.status
  let text: string
  try {
    // The e-mail list is read under the user-information cap.
    text = (await readBounded(response, failure, endpoints.maxResponseBytes ?? OUTBOUND_RESPONSE_LIMITS[failure])).toString('utf8')
  } catch (error) {
    const tooLarge = error instanceof OutboundResponseTooLargeError
    throw new VendorFlowError(failure, tooLarge ? codes.tooLarge : codes.unreachable, { cause: error, diagnostics: { httpStatus, ...tooLargeFields(error) } })
  }
  let json: unknown
  try {
    json = JSON.parse(text) as unknown
  } catch (error) {
    if (!response.ok) {
      const oauthError = bearerChallengeError(response.headers.get('www-authenticate'))
      throw new VendorFlowError(failure, codes.error, { diagnostics: { httpStatus, ...(oauthError === undefined ? {} : { oauthError }) } })
    }
    throw new VendorFlowError(failure, codes.invalid, { cause: error, diagnostics: { httpStatus } })
  }
  if (!response.ok) {
    const oauthError = errorMemberOf(json) ?? bearerChallengeError(response.headers.get('www-authenticate'))
    throw new VendorFlowError(failure, codes.error, { diagnostics: { httpStatus, ...(oauthError === undefined ? {} : { oauthError }) } })
  }
  return json
}

function isObject (value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

export interface VendorTokens {
  readonly accessToken: string
  /** Present when the vendor issues refresh tokens (GitHub only with expiring user tokens). */
  readonly refreshToken?: string
  /** Seconds, from `expires_in`. */
  readonly expiresIn?: number
  readonly tokenType?: string
}

const TOKEN_CODES: EndpointFailureCodes = { unreachable: 'TOKEN_ENDPOINT_UNREACHABLE', invalid: 'TOKEN_RESPONSE_INVALID', tooLarge: 'TOKEN_RESPONSE_TOO_LARGE', error: 'TOKEN_ENDPOINT_ERROR' }
const USERINFO_CODES: EndpointFailureCodes = { unreachable: 'USERINFO_UNREACHABLE', invalid: 'USERINFO_RESPONSE_INVALID', tooLarge: 'USERINFO_RESPONSE_TOO_LARGE', error: 'USERINFO_ENDPOINT_ERROR' }
const EMAILS_CODES: EndpointFailureCodes = { unreachable: 'EMAILS_UNREACHABLE', invalid: 'EMAILS_RESPONSE_INVALID', tooLarge: 'EMAILS_RESPONSE_TOO_LARGE', error: 'EMAILS_ENDPOINT_ERROR' }

/** Exchanges the authorization code at the token endpoint. Throws {@link VendorFlowError} `token`. */
export async function redeemAuthorizationCode (endpoints: VendorEndpoints, options: {
  readonly code: string
  readonly redirectUri: string
  readonly codeVerifier?: string | undefined
}): Promise<VendorTokens> {
  const body = new URLSearchParams({ grant_type: 'authorization_code', code: options.code, redirect_uri: options.redirectUri })
  if (options.codeVerifier !== undefined) body.set('code_verifier', options.codeVerifier)
  return await tokenRequest(endpoints, body)
}

/**
 * Redeems the stored refresh token (RFC 6749 section 6) with the slot's client authentication.
 * Throws {@link TokenRefreshError}: `invalid_grant` when the vendor refuses the refresh token
 * (`invalid_grant`, or GitHub's `bad_refresh_token` in its HTTP-200 error shape), `unavailable`
 * for anything else.
 */
export async function refreshVendorTokens (endpoints: VendorEndpoints, stored: Readonly<Record<string, string>>, nowSeconds = Math.floor(Date.now() / 1000)): Promise<Record<string, string>> {
  const refreshToken = stored.refresh_token
  if (refreshToken === undefined) throw new TokenRefreshError('unavailable')
  try {
    return tokenRecord(await tokenRequest(endpoints, new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken })), nowSeconds)
  } catch (error) {
    if (!(error instanceof VendorFlowError)) throw new TokenRefreshError('unavailable', {}, { cause: error })
    const refused = error.diagnostics.oauthError === 'invalid_grant' || error.diagnostics.oauthError === 'bad_refresh_token'
    throw new TokenRefreshError(refused ? 'invalid_grant' : 'unavailable', error.diagnostics, { cause: error })
  }
}

/** The tokens as the session ticket stores them (SaveTokens): `expires_at` in seconds since the epoch. */
export function tokenRecord (tokens: VendorTokens, nowSeconds = Math.floor(Date.now() / 1000)): Record<string, string> {
  const record: Record<string, string> = { access_token: tokens.accessToken }
  if (tokens.refreshToken !== undefined) record.refresh_token = tokens.refreshToken
  if (tokens.tokenType !== undefined) record.token_type = tokens.tokenType
  if (tokens.expiresIn !== undefined) record.expires_at = String(nowSeconds + tokens.expiresIn)
  return record
}

function expiresInOf (value: unknown): number | undefined {
  const seconds = typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : undefined
  return seconds !== undefined && Number.isInteger(seconds) && seconds > 0 && seconds <= 10 * 365 * 86_400 ? seconds : undefined
}

/** One token-endpoint request (code or refresh grant) with the slot's client authentication. */
async function tokenRequest (endpoints: VendorEndpoints, body: URLSearchParams): Promise<VendorTokens> {
  const headers: Record<string, string> = { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' }
  if (endpoints.tokenEndpointAuthMethod === 'client_secret_post') {
    body.set('client_id', endpoints.clientId)
    body.set('client_secret', endpoints.clientSecret.reveal())
  } else {
    headers.authorization = basicAuthorization(endpoints.clientId, endpoints.clientSecret.reveal())
  }
  const json = await callJsonEndpoint(endpoints, endpoints.tokenEndpoint, { method: 'POST', headers, body }, 'token', TOKEN_CODES)
  // GitHub answers a refused code with HTTP 200 and an OAuth error body.
  const errorIn200 = errorMemberOf(json)
  if (errorIn200 !== undefined) throw new VendorFlowError('token', 'TOKEN_ENDPOINT_ERROR', { diagnostics: { httpStatus: 200, oauthError: errorIn200 } })
  if (!isObject(json) || typeof json.access_token !== 'string' || json.access_token === '') {
    throw new VendorFlowError('token', 'TOKEN_RESPONSE_INVALID', { diagnostics: { httpStatus: 200 } })
  }
  if (json.token_type !== undefined && (typeof json.token_type !== 'string' || json.token_type.toLowerCase() !== 'bearer')) {
    throw new VendorFlowError('token', 'TOKEN_TYPE_UNSUPPORTED')
  }
  return {
    accessToken: json.access_token,
    ...(typeof json.refresh_token === 'string' && json.refresh_token !== '' ? { refreshToken: json.refresh_token } : {}),
    ...(expiresInOf(json.expires_in) === undefined ? {} : { expiresIn: expiresInOf(json.expires_in) }),
    ...(typeof json.token_type === 'string' ? { tokenType: json.token_type } : {})
  }
}

function bearerRequest (accessToken: string): RequestInit {
  return { method: 'GET', headers: { accept: 'application/json', authorization: `Bearer ${accessToken}` } }
}

/** GETs the user-information endpoint with the access token; a JSON object. Throws `userinfo`. */
export async function fetchUserInformation (endpoints: VendorEndpoints, accessToken: string): Promise<Record<string, unknown>> {
  const json = await callJsonEndpoint(endpoints, endpoints.userInformationEndpoint, bearerRequest(accessToken), 'userinfo', USERINFO_CODES)
  if (!isObject(json)) throw new VendorFlowError('userinfo', 'USERINFO_RESPONSE_INVALID', { diagnostics: { httpStatus: 200 } })
  return json
}

/**
 * GETs the e-mail endpoint (GitHub's `/user/emails`) and returns the address that is both
 * `primary` and `verified`, or undefined when there is none. Throws `userinfo` when the endpoint
 * fails (for GitHub: the `user:email` scope was not granted).
 */
export async function fetchVerifiedPrimaryEmail (endpoints: VendorEndpoints, accessToken: string): Promise<string | undefined> {
  if (endpoints.emailsEndpoint === undefined || endpoints.emailsEndpoint === '') return undefined
  const json = await callJsonEndpoint(endpoints, endpoints.emailsEndpoint, bearerRequest(accessToken), 'userinfo', EMAILS_CODES)
  if (!Array.isArray(json)) throw new VendorFlowError('userinfo', 'EMAILS_RESPONSE_INVALID', { diagnostics: { httpStatus: 200 } })
  const primary = json.find((entry: unknown) => isObject(entry) && entry.primary === true && entry.verified === true && typeof entry.email === 'string' && entry.email !== '') as { email: string } | undefined
  return primary?.email
}

/**
 * User-information fields as provider claims: top-level strings as they are, numbers and
 * booleans as strings, arrays one claim per scalar element; nested objects and nulls are left
 * out, except where a `fieldPaths` entry (a ClaimMappings source such as `data.id` or
 * `/data/id`) addresses them: that field becomes a claim typed with the path as written. A
 * top-level field whose name is the path itself wins over the nested lookup.
 */
export function userInformationClaims (information: Readonly<Record<string, unknown>>, issuer: string, fieldPaths: readonly string[] = []): Claim[] {
  const claims: Claim[] = []
  for (const [type, value] of Object.entries(information)) pushScalarClaims(claims, type, value, issuer)
  return [...claims, ...pathClaims([information], fieldPaths, issuer)]
}
