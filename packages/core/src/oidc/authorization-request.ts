/**
 * The authorization request: code flow, PKCE S256, state, nonce (and login_hint from e-mail
 * discovery); pushed to the provider first (RFC 9126) when the scheme's `PushedAuthorization` says
 * so (oidc/pushed-authorization.ts).
 */
import * as client from 'openid-client'
import { codeOf, OpenIdConnectError, readDiagnostics } from './errors.js'
import { assertPushedAuthorizationAvailable, isUsableRequestUri, usesPushedAuthorization, type PushedAuthorization } from './pushed-authorization.js'
import { stepUpParameters, type AuthenticationRequirement } from './step-up.js'

/** Builds the authorization URL (response_type code, PKCE S256, state, nonce). */
export async function buildAuthorizationRequest (config: client.Configuration, options: {
  readonly redirectUri: string
  readonly scopes: readonly string[]
  /** RFC 8707 section 2.1: one `resource` parameter each (`Resources`); none when empty. */
  readonly resources?: readonly string[]
  readonly state: string
  readonly nonce: string
  readonly codeVerifier: string
  /** `form_post`: OAuth 2.0 Form Post Response Mode; absent: the query (default for code). */
  readonly responseMode?: 'query' | 'form_post'
  /** `login_hint` (OpenID Connect Core 3.1.2.1): the address e-mail discovery chose the provider by. */
  readonly loginHint?: string
  /** `PushedAuthorization` (default `Never`) and its colon path, named when `Require` cannot be met. */
  readonly pushedAuthorization?: PushedAuthorization
  readonly pushedAuthorizationSetting?: string
  /** Step-up (oidc/step-up.ts): `acr_values`, `max_age` and, for a maximum age of 0, `prompt=login`. */
  readonly stepUp?: AuthenticationRequirement
}): Promise<URL> {
  const parameters = withResources({
    ...(options.responseMode === 'form_post' ? { response_mode: 'form_post' } : {}),
    ...(options.loginHint === undefined ? {} : { login_hint: options.loginHint }),
    response_type: 'code',
    redirect_uri: options.redirectUri,
    scope: options.scopes.join(' '),
    state: options.state,
    nonce: options.nonce,
    code_challenge: await client.calculatePKCECodeChallenge(options.codeVerifier),
    code_challenge_method: 'S256',
    ...(options.stepUp === undefined ? {} : stepUpParameters(options.stepUp))
  }, options.resources ?? [])
  const pushed = options.pushedAuthorization ?? 'Never'
  const metadata = config.serverMetadata()
  assertPushedAuthorizationAvailable(pushed, metadata, options.pushedAuthorizationSetting ?? 'PushedAuthorization')
  if (!usesPushedAuthorization(pushed, metadata)) return client.buildAuthorizationUrl(config, parameters)
  let url: URL
  try {
    // RFC 9126 section 4: the browser carries only client_id and request_uri.
    url = await client.buildAuthorizationUrlWithPAR(config, parameters)
  } catch (error) {
    throw new OpenIdConnectError('pushed_authorization', codeOf(error), { cause: error, diagnostics: await readDiagnostics(error) })
  }
  // The provider's request_uri goes into the redirect: bounded and shaped, else a sign-in failure.
  if (!isUsableRequestUri(url.searchParams.get('request_uri'))) throw new OpenIdConnectError('pushed_authorization', 'PAR_REQUEST_URI_INVALID', { diagnostics: {} })
  return url
}

/** `parameters` with one `resource` parameter per resource (a repeated parameter needs URLSearchParams). */
function withResources (parameters: Record<string, string>, resources: readonly string[]): URLSearchParams {
  const search = new URLSearchParams(parameters)
  for (const resource of resources) search.append('resource', resource)
  return search
}

/** Fresh nonce and PKCE verifier for one flow. */
export function newCorrelationValues (): { nonce: string, codeVerifier: string } {
  return { nonce: client.randomNonce(), codeVerifier: client.randomPKCECodeVerifier() }
}
