/**
 * A person signed in over real HTTP who then gets tokens for an API (RFC 8707 resource
 * indicators): the set-up the downstream user-token tests and the SCIM deprovisioning tests share.
 * oidc-provider issuing rotating refresh tokens and JWT access tokens for the API's resource
 * ({@link startApiIdp}), the OpenIdConnect settings that save the tokens and ask for that resource
 * at sign-in ({@link openIdConnectForApi}), a full sign-in through the provider's dev pages
 * ({@link signInOverHttp}) and an access token for the API redeemed with the session's refresh
 * token at the provider's token endpoint, as the person's own client would ({@link apiAccessToken}).
 */
import assert from 'node:assert/strict'
import type { TestSettings } from '../../../src/testing/app.js'
import { HttpSession, type Exchange } from './http-session.js'
import { throughIdpLogin } from './oidc-interaction.js'
import { startOidcIdp, type OidcIdp, type OidcIdpOptions } from './oidc-idp.js'

/** The app's client at the provider. */
export interface IdpClient {
  readonly clientId: string
  readonly clientSecret: string
}

/** The API: its resource URI (the tokens' audience) and the scopes it offers. */
export interface ApiResource {
  readonly uri: string
  readonly scopes: readonly string[]
}

/** oidc-provider for `client` with `accounts`, issuing refresh tokens and JWT access tokens for `api` (an hour each). */
export async function startApiIdp (client: IdpClient, accounts: OidcIdpOptions['accounts'], api: ApiResource, options: Omit<OidcIdpOptions, 'clientId' | 'clientSecret' | 'accounts'> = {}): Promise<OidcIdp> {
  return await startOidcIdp({
    ...client,
    accounts,
    refreshTokens: { accessTokenTtlSeconds: 3600 },
    resourceServers: { [api.uri]: { scopes: api.scopes } },
    ...options
  })
}

/** `Authentication:Providers:OpenIdConnect` at `idp`: tokens saved, `scopes` of the API and its resource asked for at sign-in. */
export function openIdConnectForApi (idp: Pick<OidcIdp, 'issuer'>, client: IdpClient, api: ApiResource, scopes: readonly string[] = api.scopes): TestSettings {
  return { Enabled: true, Authority: idp.issuer, ClientId: client.clientId, ClientSecret: client.clientSecret, SaveTokens: true, Scopes: ['openid', 'profile', ...scopes], Resources: [api.uri] }
}

/** A signed-in (or refused) browser: the challenge's and the callback's answers, and the Cookie header it now sends to `origin`. */
export interface HttpSignIn {
  readonly session: HttpSession
  readonly start: Exchange
  readonly callback: Exchange
  readonly cookie: string
}

/** A full sign-in as `login` at the app on `origin` through `provider`'s dev pages, in a fresh browser (nothing asserted). */
export async function signInOverHttp (origin: string, login: string, provider = 'OpenIdConnect'): Promise<HttpSignIn> {
  const session = new HttpSession()
  const start = await session.request(`${origin}/External/Challenge?provider=${provider}&returnUrl=%2F`)
  assert.ok(start.location !== undefined, `the challenge answered ${start.response.status}, not a redirect`)
  const callback = await session.request(await throughIdpLogin(session, start.location, origin, login))
  return { session, start, callback, cookie: session.jar.header(new URL(origin)) }
}

/** An access token for `resource` (with `scope`) redeemed with `refreshToken` at `idp`'s token endpoint; asserts a JWT came back. */
export async function apiAccessToken (idp: Pick<OidcIdp, 'issuer'>, client: IdpClient, refreshToken: string, resource: string, scope: string): Promise<string> {
  const discovery = await (await fetch(`${idp.issuer}/.well-known/openid-configuration`, { signal: AbortSignal.timeout(10_000) })).json() as { token_endpoint: string }
  const response = await fetch(discovery.token_endpoint, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, resource, scope }),
    signal: AbortSignal.timeout(10_000)
  })
  const body = await response.json() as { access_token?: string }
  assert.equal(response.status, 200, JSON.stringify(body))
  assert.equal(body.access_token?.split('.').length, 3, 'a JWT access token')
  return body.access_token as string
}
