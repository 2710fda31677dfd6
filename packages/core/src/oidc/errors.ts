/** OpenID Connect refusals: the failure classes, the coded error, and the diagnostics a log line may carry. */
import * as client from 'openid-client'
import { networkCauseCode, oauthErrorCode } from '../http/outbound-diagnostics.js'
import { tooLargeFields } from '../http/bounded-fetch.js'
import { SignInRefusal } from '../errors.js'
import type { SignInFailure } from '../sign-in/sign-in-failure.js'

/**
 * Failure classes of a callback, logged as `failure` (never with a code, token or secret):
 * `token` (token endpoint error or unreachable), `id_token` and the more specific `nonce`,
 * `issuer`, `audience`, `expired`, `signature` (a key of the provider does not verify it, or the
 * algorithm is not the pinned one), `unknown_key` (its `kid` names no published key, even after
 * refetching the key set), `unavailable` (the key set cannot be loaded), `userinfo`, and
 * `pushed_authorization` (the provider refused or did not answer the pushed authorization
 * request, RFC 9126), `tenant` (with AllowedTenants: the ID token has no `tid`, or one not
 * listed; oidc/tenant-issuer.ts), and for a step-up request (oidc/step-up.ts) `auth_time`
 * (missing or too old), `acr` (missing or not requested) and `amr` (a required method missing).
 */
export type OpenIdConnectFailure = Extract<SignInFailure, 'token' | 'id_token' | 'nonce' | 'issuer' | 'audience' | 'expired' | 'signature' | 'unknown_key' | 'unavailable' | 'userinfo' | 'pushed_authorization' | 'tenant' | 'auth_time' | 'acr' | 'amr'>

/**
 * Safe log fields of a failure: the HTTP status and OAuth `error` code of a token or userinfo
 * endpoint refusal (`invalid_client` for a wrong client secret), the network cause code. Never
 * the error description, never a token.
 */
export interface OpenIdConnectDiagnostics {
  readonly httpStatus?: number
  readonly oauthError?: string
  readonly causeCode?: string
  /** The setting that likely fixes the refusal (oidc/client-authentication.ts: `TokenEndpointAuthMethod`). */
  readonly setting?: string
  /** Why that setting: `basic_credentials_form_encoded`. */
  readonly hint?: string
  /** A response over its size cap (http/bounded-fetch.ts): its kind and the cap. */
  readonly responseKind?: string
  readonly responseLimitBytes?: number
  /**
   * A refusal as `tenant`: the ID token's `tid`, so that an operator can tell which customer tenant
   * tried (oidc/tenant-issuer.ts). Only when shaped like a tenant id; the token was not verified.
   */
  readonly tenantId?: string
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
  const result: { httpStatus?: number, oauthError?: string, causeCode?: string, responseKind?: string, responseLimitBytes?: number } = { ...tooLargeFields(error) }
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

export function isNetworkFailure (error: unknown): boolean {
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

export function codeOf (error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}
