/**
 * The callback: token exchange, ID token validation (signature checked with the provider's keys,
 * algorithm pinned), userinfo merged, and the claims flattened.
 */
import { withClientAuthenticationHint } from './client-authentication.js'
import * as client from 'openid-client'
import type { Claim } from '../session/principal.js'
import { pathClaims } from '../sign-in/claim-paths.js'
import { groupOverageInJson, type GroupOverageIndicator } from '../sign-in/group-overage.js'
import { KeySetUnavailableError, UnknownSigningKeyError, type ProviderKeys } from './provider-keys.js'
import { classifyGrantError, codeOf, OpenIdConnectError, readDiagnostics } from './errors.js'

/** Protocol claims of the ID token that describe the token, not the user; not kept as user claims. */
const PROTOCOL_CLAIMS = new Set(['iss', 'aud', 'exp', 'iat', 'nbf', 'nonce', 'at_hash', 'c_hash', 's_hash', 'azp', 'auth_time', 'jti', 'sid'])

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
    throw new OpenIdConnectError(failure, codeOf(error), { cause: error, diagnostics: withClientAuthenticationHint(config, await readDiagnostics(error)) })
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
