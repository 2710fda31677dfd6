/** The authorization request: code flow, PKCE S256, state, nonce (and login_hint from e-mail discovery). */
import * as client from 'openid-client'

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
