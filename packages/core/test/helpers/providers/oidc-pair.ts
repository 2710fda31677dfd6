/**
 * The usual OpenID Connect set-up of the provider tests: a real oidc-provider ({@link startOidcIdp})
 * and the app listening with the OpenIdConnect provider pointed at it (Authority, ClientId and
 * ClientSecret from the IdP's client unless overridden), the app's redirect URI (and, when asked,
 * its post-logout redirect URI) registered at the IdP, and the app ready. Likewise with the token
 * IdP whose answers the test sets ({@link useTokenIdpPair}), and a sign-in that calls back with a
 * code ({@link callBackWithCode}).
 */
import { randomBytes } from 'node:crypto'
import { after, before } from 'node:test'
import type { TestAppOptions } from '../app.js'
import { HttpSession, type Exchange } from './http-session.js'
import { startOidcIdp, type OidcIdp, type OidcIdpOptions } from './oidc-idp.js'
import { startProviderApp, waitUntilReady, type ListeningApp } from './provider-app.js'
import { startTokenIdp, type TokenIdp } from './token-idp.js'

type Settings = NonNullable<TestAppOptions['settings']>

export interface OidcPairOptions {
  readonly idp: OidcIdpOptions
  /** OpenIdConnect keys added to (or overriding) Enabled, Authority, ClientId and ClientSecret. */
  readonly openIdConnect?: Settings
  /** Authentication keys besides Providers (DefaultChallengeScheme, Cookie, ...). */
  readonly authentication?: Settings
  /** Registers `<app origin>/signout-callback-oidc` as a post-logout redirect URI at the IdP. */
  readonly postLogoutRedirect?: boolean
  readonly configure?: TestAppOptions['configure']
  /** The application's sign-in hook (createApp `signInHook`). */
  readonly signInHook?: TestAppOptions['signInHook']
  /** The app's provider source (createApp `providerSource`). */
  readonly providerSource?: TestAppOptions['providerSource']
}

export interface OidcPair {
  readonly idp: OidcIdp
  readonly app: ListeningApp
}

export async function startOidcPair (options: OidcPairOptions): Promise<OidcPair> {
  const idp = await startOidcIdp(options.idp)
  const openIdConnect = { Enabled: true, Authority: idp.issuer, ClientId: options.idp.clientId, ClientSecret: options.idp.clientSecret, ...options.openIdConnect }
  const app = await startProviderApp({ Authentication: { ...options.authentication, Providers: { OpenIdConnect: openIdConnect } } }, options.configure, {
    ...(options.signInHook === undefined ? {} : { signInHook: options.signInHook }),
    ...(options.providerSource === undefined ? {} : { providerSource: options.providerSource })
  })
  await idp.configure(`${app.origin}/signin-oidc`, options.postLogoutRedirect === true ? [`${app.origin}/signout-callback-oidc`] : [])
  await waitUntilReady(app.origin)
  return { idp, app }
}

/** {@link startOidcPair} in the suite's `before`, closed in its `after`; the fields are set once `before` has run. */
export function useOidcPair (options: OidcPairOptions): OidcPair {
  const pair = {} as { idp: OidcIdp, app: ListeningApp }
  before(async () => { Object.assign(pair, await startOidcPair(options)) })
  after(async () => { await pair.app?.close(); await pair.idp?.close() })
  return pair
}

export interface TokenIdpPair {
  readonly idp: TokenIdp
  readonly app: ListeningApp
}

/**
 * In the suite's `before`: a {@link startTokenIdp} provider for `clientId` and the app listening
 * with the OpenIdConnect provider pointed at it (Enabled, Authority, ClientId, ClientSecret), ready.
 * Both closed in its `after`; the fields are set once `before` has run.
 */
export function useTokenIdpPair (clientId: string, clientSecret: string): TokenIdpPair {
  const pair = {} as { idp: TokenIdp, app: ListeningApp }
  before(async () => {
    pair.idp = await startTokenIdp(clientId)
    pair.app = await startProviderApp({ Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: pair.idp.issuer, ClientId: clientId, ClientSecret: clientSecret } } } })
    await waitUntilReady(pair.app.origin)
  })
  after(async () => { await pair.app?.close(); await pair.idp?.close() })
  return pair
}

/**
 * Starts an OpenID Connect sign-in at the app on `origin` in a fresh {@link HttpSession}, runs
 * `beforeCallback` with the flow's nonce (to set the token IdP's answer), then calls
 * /signin-oidc back with a random code and the flow's state: that answer.
 */
export async function callBackWithCode (origin: string, beforeCallback: (nonce: string) => Promise<void> | void = () => {}): Promise<Exchange> {
  const session = new HttpSession()
  const start = await session.request(`${origin}/External/Challenge?provider=OpenIdConnect`)
  const nonce = start.location?.searchParams.get('nonce') ?? ''
  const state = start.location?.searchParams.get('state') ?? ''
  await beforeCallback(nonce)
  return await session.request(`${origin}/signin-oidc?code=c-${randomBytes(8).toString('hex')}&state=${state}`)
}
