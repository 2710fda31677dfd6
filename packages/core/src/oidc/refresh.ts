/** Token refresh for SaveTokens: the refresh grant, and the stored ID token's subject kept. */
import { withClientAuthenticationHint } from './client-authentication.js'
import * as client from 'openid-client'
import { TokenRefreshError } from '../session/token-refresh.js'
import type { ProviderKeys } from './provider-keys.js'
import { classifyGrantError, diagnosticsOf, OpenIdConnectError } from './errors.js'
import { verifyIdTokenSignature } from './callback.js'
import { configurationForIssuer } from './issuer-configuration.js'
import { isIssuerTemplate } from './tenant-issuer.js'

/**
 * Redeems the stored refresh token at the token endpoint (openid-client's refreshTokenGrant: the
 * client authentication, and the ID token checks when the provider sends a new one: signature
 * with the pinned algorithm, issuer, audience, expiry). A new ID token must name the same `sub` as
 * the stored one (OpenID Connect Core 1.0, section 12.2). `parameters`: more request parameters
 * (`resource`, `scope`, `audience`) for a token meant for one API. Throws {@link TokenRefreshError}:
 * `invalid_grant` when the provider refuses the refresh token, `id_token` for a bad ID token,
 * `unavailable` for anything else.
 */
export async function refreshTokens (config: client.Configuration, stored: Readonly<Record<string, string>>, keys: { readonly keys: ProviderKeys, readonly algorithm: string }, parameters?: Readonly<Record<string, string>>): Promise<Record<string, string>> {
  const refreshToken = stored.refresh_token
  if (refreshToken === undefined) throw new TokenRefreshError('unavailable')
  let response: Awaited<ReturnType<typeof client.refreshTokenGrant>>
  try {
    response = await client.refreshTokenGrant(tenantConfigurationOf(config, stored), refreshToken, parameters === undefined ? undefined : { ...parameters })
  } catch (error) {
    const diagnostics = withClientAuthenticationHint(config, diagnosticsOf(error))
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

/**
 * Under a `{tenantid}` issuer template (AllowedTenants, oidc/tenant-issuer.ts): the client of the
 * tenant the stored ID token was validated for at sign-in, so that a new ID token must carry that
 * tenant's issuer; `config` itself otherwise.
 */
function tenantConfigurationOf (config: client.Configuration, stored: Readonly<Record<string, string>>): client.Configuration {
  if (!isIssuerTemplate(config.serverMetadata().issuer) || stored.id_token === undefined) return config
  const issuer = claimOfIdToken(stored.id_token, 'iss')
  if (issuer === undefined || isIssuerTemplate(issuer)) return config
  return configurationForIssuer(config, issuer, config[client.customFetch] ?? (async (url, init) => await fetch(url, init)))
}

/** A string claim of an ID token this app validated and stored before (not verified again). */
function claimOfIdToken (idToken: string, name: 'iss' | 'sub'): string | undefined {
  try {
    const payload = JSON.parse(Buffer.from(idToken.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>
    return typeof payload[name] === 'string' ? payload[name] : undefined
  } catch {
    return undefined
  }
}

/** The `sub` of an ID token this app validated and stored before (not verified again). */
function subjectOfIdToken (idToken: string): string | undefined {
  return claimOfIdToken(idToken, 'sub')
}
