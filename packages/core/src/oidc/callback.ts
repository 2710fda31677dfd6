/**
 * The callback: token exchange, ID token validation (signature checked with the provider's keys,
 * algorithm pinned), userinfo merged, and the claims flattened.
 */
import { withClientAuthenticationHint } from './client-authentication.js'
import { CoreError } from '../errors.js'
import * as client from 'openid-client'
import type { Claim } from '../session/principal.js'
import { flattenClaims } from '../sign-in/claim-flattening.js'
import { pathClaims } from '../sign-in/claim-paths.js'
import { groupOverageInJson, type GroupOverageIndicator } from '../sign-in/group-overage.js'
import { KeySetUnavailableError, UnknownSigningKeyError, type ProviderKeys } from './provider-keys.js'
import { classifyGrantError, codeOf, OpenIdConnectError, readDiagnostics } from './errors.js'
import { decodeJwt } from 'jose'
import { allowedTenantOf, isIssuerTemplate, isNonCanonicalTenantId, tenantIssuerOf, type AllowedTenant, type AllowedTenants } from './tenant-issuer.js'
import { configurationForIssuer } from './issuer-configuration.js'
import { checkAuthentication, type AuthenticationRequirement } from './step-up.js'

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
  /** With AllowedTenants: the ID token's allowed tenant and the app's tenant it maps to. */
  readonly tenant?: AllowedTenant
  /** The validated ID token's claims as sent (`acr`, `amr`, `auth_time` are recorded in the session). */
  readonly idTokenClaims: Readonly<Record<string, unknown>>
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
  /**
   * `AllowedTenants`, read: when set, the ID token's `tid` must be listed (failure `tenant`) and,
   * with a `{tenantid}` issuer template, its `iss` must be the template with that `tid`.
   */
  readonly tenants?: AllowedTenants
}

type GrantResponse = Awaited<ReturnType<typeof client.authorizationCodeGrant>>

/** Thrown by the capturing fetch once the token endpoint's answer is read: the first pass ends there. */
class TokenResponseCaptured extends CoreError {
  readonly captured: { readonly status: number, readonly headers: Headers, readonly body: ArrayBuffer }

  constructor (captured: TokenResponseCaptured['captured']) {
    super('token response captured')
    this.captured = captured
  }
}

function capturedIn (error: unknown): TokenResponseCaptured | undefined {
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 5; current = (current as { cause?: unknown }).cause, depth++) {
    if (current instanceof TokenResponseCaptured) return current
  }
  return undefined
}

const endpointOf = (url: string | URL): string => String(url).split('?', 1)[0]!

/**
 * The code grant against a `{tenantid}` issuer template, in two passes over one token request:
 * the first sends it (client authentication, PKCE verifier, the real transport) and keeps the
 * token endpoint's successful answer; the ID token's unverified `tid` then only chooses the
 * expected issuer (and must be allowed); the second pass has openid-client validate that same
 * answer, replayed, as a client of the tenant's own issuer, with every rule (iss, aud, azp, exp,
 * iat, nonce, state). An error answer or a network failure ends the first pass as it always does.
 */
async function tenantCodeGrant (config: client.Configuration, grant: (config: client.Configuration) => Promise<GrantResponse>, tenants: AllowedTenants): Promise<{ response: GrantResponse, tenant: AllowedTenant }> {
  const metadata = config.serverMetadata()
  const template = metadata.issuer
  const tokenEndpoint = endpointOf(metadata.token_endpoint ?? '')
  const transport: client.CustomFetch = config[client.customFetch] ?? (async (url, init) => await fetch(url, init))
  const capturing: client.CustomFetch = async (url, init) => {
    const response = await transport(url, init)
    if (endpointOf(url) !== tokenEndpoint || !response.ok) return response
    throw new TokenResponseCaptured({ status: response.status, headers: new Headers(response.headers), body: await response.arrayBuffer() })
  }
  let captured: TokenResponseCaptured['captured']
  try {
    await grant(configurationForIssuer(config, template, capturing))
    // The ID token's iss is the template itself: never a tenant's issuer.
    throw new OpenIdConnectError('issuer', 'ID_TOKEN_ISSUER_IS_TEMPLATE')
  } catch (error) {
    const found = capturedIn(error)
    if (found === undefined) throw error
    captured = found.captured
  }
  let tid: unknown
  try {
    const body = JSON.parse(Buffer.from(captured.body).toString('utf8')) as { id_token?: unknown }
    if (typeof body.id_token !== 'string') throw new OpenIdConnectError('id_token', 'ID_TOKEN_MISSING')
    tid = decodeJwt(body.id_token).tid
  } catch (error) {
    throw error instanceof OpenIdConnectError ? error : new OpenIdConnectError('id_token', 'ID_TOKEN_UNREADABLE', { cause: error })
  }
  const tenant = allowedTenantOf(tid, tenants)
  if (tenant === undefined) throw tenantRefusal(tid)
  const replay: client.CustomFetch = async (url, init) => endpointOf(url) === tokenEndpoint
    ? new Response(captured.body, { status: captured.status, headers: captured.headers })
    : await transport(url, init)
  return { response: await grant(configurationForIssuer(config, tenantIssuerOf(template, tenant.tenantId), replay)), tenant }
}

/**
 * The code grant, and with AllowedTenants the ID token's allowed tenant (checked again on the
 * validated claims). Throws {@link OpenIdConnectError} `tenant` for a `tid` missing or not listed.
 */
async function exchangeCode (config: client.Configuration, grant: (config: client.Configuration) => Promise<GrantResponse>, tenants: AllowedTenants | undefined): Promise<{ response: GrantResponse, tenant?: AllowedTenant }> {
  if (tenants === undefined) return { response: await grant(config) }
  const { response } = isIssuerTemplate(config.serverMetadata().issuer) ? await tenantCodeGrant(config, grant, tenants) : { response: await grant(config) }
  const tid = response.claims()?.tid
  const tenant = allowedTenantOf(tid, tenants)
  if (tenant === undefined) throw tenantRefusal(tid)
  return { response, tenant }
}

/** The refusal of a `tid` missing, not allowed or not in its canonical form, naming the tid when it looks like one. */
function tenantRefusal (tid: unknown): OpenIdConnectError {
  if (typeof tid !== 'string' || tid === '') return new OpenIdConnectError('tenant', 'ID_TOKEN_TENANT_MISSING', { diagnostics: {} })
  if (isNonCanonicalTenantId(tid)) return new OpenIdConnectError('tenant', 'ID_TOKEN_TENANT_NOT_CANONICAL', { diagnostics: {} })
  return new OpenIdConnectError('tenant', 'ID_TOKEN_TENANT_NOT_ALLOWED', { diagnostics: /^[A-Za-z0-9._-]{1,64}$/.test(tid) ? { tenantId: tid } : {} })
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
  /** A step-up request (oidc/step-up.ts): what it required, and when it was made (seconds since the epoch). */
  readonly stepUp?: { readonly requirement: AuthenticationRequirement, readonly requestedAtSeconds: number }
}, options: CallbackOptions): Promise<CallbackResult> {
  let response: GrantResponse
  let tenant: AllowedTenant | undefined
  const grant = async (client_: client.Configuration): Promise<GrantResponse> => await client.authorizationCodeGrant(client_, callbackUrl, {
    pkceCodeVerifier: expected.codeVerifier,
    expectedState: expected.state,
    expectedNonce: expected.nonce,
    idTokenExpected: true
  })
  try {
    ({ response, tenant } = await exchangeCode(config, grant, options.tenants))
  } catch (error) {
    if (error instanceof OpenIdConnectError) throw error
    const failure = classifyGrantError(error)
    throw new OpenIdConnectError(failure, codeOf(error), { cause: error, diagnostics: withClientAuthenticationHint(config, await readDiagnostics(error)) })
  }
  const idToken = response.claims()
  if (idToken === undefined || response.id_token === undefined) throw new OpenIdConnectError('id_token', 'ID_TOKEN_MISSING')
  await verifyIdTokenSignature(response.id_token, options.keys, options.algorithm)
  if (idToken.iat > Math.floor(Date.now() / 1000) + options.clockToleranceSeconds) throw new OpenIdConnectError('id_token', 'ID_TOKEN_IAT_IN_FUTURE')
  if (expected.stepUp !== undefined) {
    const unmet = checkAuthentication(idToken as Record<string, unknown>, expected.stepUp.requirement, {
      nowSeconds: Math.floor(Date.now() / 1000),
      requestedAtSeconds: expected.stepUp.requestedAtSeconds
    })
    if (unmet !== undefined) throw new OpenIdConnectError(unmet.failure, unmet.code)
  }

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
    idTokenClaims: idToken as Record<string, unknown>,
    ...(groupOverage === undefined ? {} : { groupOverage }),
    ...(tenant === undefined ? {} : { tenant })
  }
}
