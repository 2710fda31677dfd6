/**
 * The usual OpenID Connect set-up of the provider tests: a real oidc-provider ({@link startOidcIdp})
 * and the app listening with the OpenIdConnect provider pointed at it (Authority, ClientId and
 * ClientSecret from the IdP's client unless overridden), the app's redirect URI (and, when asked,
 * its post-logout redirect URI) registered at the IdP, and the app ready.
 */
import { after, before } from 'node:test'
import type { TestAppOptions } from '../app.js'
import { startOidcIdp, type OidcIdp, type OidcIdpOptions } from './oidc-idp.js'
import { startProviderApp, waitUntilReady, type ListeningApp } from './provider-app.js'

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
}

export interface OidcPair {
  readonly idp: OidcIdp
  readonly app: ListeningApp
}

export async function startOidcPair (options: OidcPairOptions): Promise<OidcPair> {
  const idp = await startOidcIdp(options.idp)
  const openIdConnect = { Enabled: true, Authority: idp.issuer, ClientId: options.idp.clientId, ClientSecret: options.idp.clientSecret, ...options.openIdConnect }
  const app = await startProviderApp({ Authentication: { ...options.authentication, Providers: { OpenIdConnect: openIdConnect } } }, options.configure, options.signInHook === undefined ? {} : { signInHook: options.signInHook })
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
