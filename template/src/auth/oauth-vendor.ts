/**
 * The OAuth 2.0 authorization-code client behind the VendorA/B/C slots (auth-contract.md,
 * "Providers:VendorA, Providers:VendorB, Providers:VendorC"; RFC 6749 section 4.1, RFC 7636),
 * without Fastify types: the authorization URL (PKCE S256 when UsePkce), the token request with
 * client_secret_basic (RFC 6749 section 2.3.1), and the user-information request with the access
 * token. Every outbound call has a timeout and refuses redirects.
 */
import { createHash, randomBytes } from 'node:crypto'
import type { Claim } from './principal.js'
import type { Secret } from '../config/secret.js'

/** Milliseconds an outbound call (token, user information) may take. */
export const VENDOR_TIMEOUT_MS = 10_000
/** Largest accepted token or user-information response body. */
const MAX_RESPONSE_BYTES = 256 * 1024

/** Defaults below the configured ClaimMappings: numeric `id` and `login` as most vendors name them. */
export const VENDOR_DEFAULT_CLAIM_MAPPINGS: Readonly<Record<string, string>> = { id: 'subject', login: 'name' }

/** `token` (token endpoint refused or unreachable) or `userinfo` (user information unusable). */
export type VendorFailure = 'token' | 'userinfo'

export class VendorFlowError extends Error {
  readonly failure: VendorFailure
  readonly code: string

  constructor (failure: VendorFailure, code: string, options?: ErrorOptions) {
    super(`OAuth sign-in failed (${failure}: ${code})`, options)
    this.name = 'VendorFlowError'
    this.failure = failure
    this.code = code
  }
}

export interface VendorEndpoints {
  readonly clientId: string
  /** Revealed only while the token request is built. */
  readonly clientSecret: Secret
  readonly authorizationEndpoint: string
  readonly tokenEndpoint: string
  readonly userInformationEndpoint: string
  readonly timeoutMs?: number
}

/** A PKCE verifier (RFC 7636 section 4.1: 43 characters of base64url). */
export function newCodeVerifier (): string {
  return randomBytes(32).toString('base64url')
}

export function codeChallengeOf (verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url')
}

export function buildAuthorizationUrl (endpoints: VendorEndpoints, options: {
  readonly redirectUri: string
  readonly scopes: readonly string[]
  readonly state: string
  readonly codeVerifier?: string | undefined
  readonly extraParameters?: Readonly<Record<string, string>>
}): URL {
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
    parameters.code_challenge = codeChallengeOf(options.codeVerifier)
    parameters.code_challenge_method = 'S256'
  }
  for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, value)
  return url
}

async function readJson (response: Response): Promise<unknown> {
  const declared = Number(response.headers.get('content-length') ?? '0')
  if (declared > MAX_RESPONSE_BYTES) throw new Error('response too large')
  const text = await response.text()
  if (text.length > MAX_RESPONSE_BYTES) throw new Error('response too large')
  return JSON.parse(text) as unknown
}

interface EndpointFailureCodes {
  readonly unreachable: string
  readonly invalid: string
  readonly error: string
}

/**
 * One JSON call to a provider endpoint: no redirects, a timeout, a size limit. Failures become a
 * {@link VendorFlowError} of `failure` with the step's own codes; the JSON of a 2xx answer is returned.
 */
async function callJsonEndpoint (url: string, init: RequestInit, timeoutMs: number, failure: VendorFailure, codes: EndpointFailureCodes): Promise<unknown> {
  let response: Response
  try {
    response = await fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(timeoutMs) })
  } catch (error) {
    throw new VendorFlowError(failure, codes.unreachable, { cause: error })
  }
  let json: unknown
  try {
    json = await readJson(response)
  } catch (error) {
    throw new VendorFlowError(failure, codes.invalid, { cause: error })
  }
  if (!response.ok) throw new VendorFlowError(failure, codes.error)
  return json
}

function isObject (value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/** RFC 6749 section 2.3.1: both parts form-urlencoded before base64. */
function basicCredentials (clientId: string, clientSecret: Secret): string {
  const encode = (value: string): string => encodeURIComponent(value).replace(/%20/g, '+')
  return Buffer.from(`${encode(clientId)}:${encode(clientSecret.reveal())}`).toString('base64')
}

export interface VendorTokens {
  readonly accessToken: string
}

/** Exchanges the authorization code at the token endpoint. Throws {@link VendorFlowError} `token`. */
export async function redeemAuthorizationCode (endpoints: VendorEndpoints, options: {
  readonly code: string
  readonly redirectUri: string
  readonly codeVerifier?: string | undefined
}): Promise<VendorTokens> {
  const body = new URLSearchParams({ grant_type: 'authorization_code', code: options.code, redirect_uri: options.redirectUri })
  if (options.codeVerifier !== undefined) body.set('code_verifier', options.codeVerifier)
  const json = await callJsonEndpoint(endpoints.tokenEndpoint, {
    method: 'POST',
    headers: {
      accept: 'application/json',
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${basicCredentials(endpoints.clientId, endpoints.clientSecret)}`
    },
    body
  }, endpoints.timeoutMs ?? VENDOR_TIMEOUT_MS, 'token', { unreachable: 'TOKEN_ENDPOINT_UNREACHABLE', invalid: 'TOKEN_RESPONSE_INVALID', error: 'TOKEN_ENDPOINT_ERROR' })
  if (!isObject(json) || typeof json.access_token !== 'string' || json.access_token === '') {
    throw new VendorFlowError('token', 'TOKEN_RESPONSE_INVALID')
  }
  if (json.token_type !== undefined && (typeof json.token_type !== 'string' || json.token_type.toLowerCase() !== 'bearer')) {
    throw new VendorFlowError('token', 'TOKEN_TYPE_UNSUPPORTED')
  }
  return { accessToken: json.access_token }
}

/** GETs the user-information endpoint with the access token; a JSON object. Throws `userinfo`. */
export async function fetchUserInformation (endpoints: VendorEndpoints, accessToken: string): Promise<Record<string, unknown>> {
  const json = await callJsonEndpoint(endpoints.userInformationEndpoint, {
    method: 'GET',
    headers: { accept: 'application/json', authorization: `Bearer ${accessToken}` }
  }, endpoints.timeoutMs ?? VENDOR_TIMEOUT_MS, 'userinfo', { unreachable: 'USERINFO_UNREACHABLE', invalid: 'USERINFO_RESPONSE_INVALID', error: 'USERINFO_ENDPOINT_ERROR' })
  if (!isObject(json)) throw new VendorFlowError('userinfo', 'USERINFO_RESPONSE_INVALID')
  return json
}

/**
 * Top-level user-information fields as provider claims: strings as they are, numbers and booleans
 * as strings, arrays one claim per scalar element; nested objects and nulls are left out.
 */
export function userInformationClaims (information: Readonly<Record<string, unknown>>, issuer: string): Claim[] {
  const claims: Claim[] = []
  const scalar = (value: unknown): string | undefined =>
    typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined
  for (const [type, value] of Object.entries(information)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      const text = scalar(item)
      if (text !== undefined && text !== '') claims.push({ type, value: text, issuer })
    }
  }
  return claims
}
