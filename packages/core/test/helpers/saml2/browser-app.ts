/**
 * The fixtures of the SAML2 browser tests: before/after hooks that start the test IdP, an app
 * trusting it listening on loopback (Saml2 available) and headless Chromium, and close them in
 * reverse order; for Single Logout also the IdP's own SLO server on another site.
 */
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before } from 'node:test'
import type { Page } from 'playwright-core'
import type { TestApp } from '../app.js'
import { launchChromium, type HeadlessBrowser } from '../providers/browser.js'
import { buildSaml2App, waitForSaml2 } from './app.js'
import { createSigningKey } from './certificates.js'
import type { TestIdentityProvider } from './identity-provider.js'
import { REDIRECT_BINDING, samlify, type SamlifyEntity, type SamlifyIdentityProvider, withSingleLogoutService } from './samlify.js'

type Saml2Settings = NonNullable<Parameters<typeof buildSaml2App>[1]>

export interface Saml2BrowserApp {
  /** The app (set once `before` has run). */
  subject: TestApp
  browser: HeadlessBrowser
  /** `http://127.0.0.1:<port>` of the listening app. */
  origin: string
}

// One `before` and one `after` per fixture: Node 20 starts a file's top-level `before` hooks together.
// `settingsOf` runs once the IdP listens, so that the settings can name its URLs.
async function start (idp: TestIdentityProvider, settingsOf: () => Saml2Settings, fixture: Saml2BrowserApp): Promise<void> {
  await idp.start()
  fixture.subject = await buildSaml2App(idp, settingsOf())
  await fixture.subject.app.listen({ host: '127.0.0.1', port: 0 })
  fixture.origin = `http://127.0.0.1:${(fixture.subject.app.server.address() as AddressInfo).port}`
  await waitForSaml2(fixture.subject.app)
  fixture.browser = await launchChromium()
}

async function stop (idp: TestIdentityProvider, fixture: Saml2BrowserApp): Promise<void> {
  await fixture.browser?.close()
  await fixture.subject?.app.close()
  await idp.stop()
}

/** `settings` override the app's Providers:Saml2 keys. */
export function useSaml2BrowserApp (idp: TestIdentityProvider, settings: Saml2Settings = {}): Saml2BrowserApp {
  const fixture = {} as Saml2BrowserApp
  before(async () => { await start(idp, () => settings, fixture) })
  after(async () => { await stop(idp, fixture) })
  return fixture
}

export interface Saml2LogoutBrowserApp extends Saml2BrowserApp {
  /** `http://localhost:<port>` of the IdP's SLO server: another site than the app. */
  sloOrigin: string
  /** samlify's view of the app, from its /Saml2/Metadata as served at `origin`; it wants LogoutResponses signed. */
  samlifySp: SamlifyEntity
  /** samlify playing the IdP, as the test's `samlifyIdp` built it. */
  samlifyIdp: SamlifyIdentityProvider
}

export interface SingleLogoutSite {
  /** The IdP's SingleLogoutService (and whatever else the test serves there), not yet listening. */
  readonly sloServer: Server
  /** Its path on `sloServer`, as the IdP's metadata advertises it. */
  readonly sloPath: string
  /** The binding the metadata advertises (HTTP-Redirect unless given). */
  readonly binding?: string
  /** Builds samlify's IdP once the servers listen; `sloLocation` is the advertised SLO URL. */
  readonly samlifyIdp: (sloLocation: string) => SamlifyIdentityProvider
}

/**
 * {@link useSaml2BrowserApp} for Single Logout: `sloServer` listens on 127.0.0.1 and is reached as
 * localhost; the IdP's metadata advertises `${sloOrigin}${sloPath}` with `binding`; the app signs
 * its logout messages with an SP key of its own and signs out at the provider.
 */
export function useSaml2LogoutBrowserApp (idp: TestIdentityProvider, slo: SingleLogoutSite): Saml2LogoutBrowserApp {
  const spKey = createSigningKey('sp-signing')
  const fixture = {} as Saml2LogoutBrowserApp
  before(async () => {
    await new Promise<void>((resolve) => slo.sloServer.listen(0, '127.0.0.1', resolve))
    fixture.sloOrigin = `http://localhost:${(slo.sloServer.address() as AddressInfo).port}`
    const sloLocation = `${fixture.sloOrigin}${slo.sloPath}`
    idp.documents.set('/metadata-slo', () => withSingleLogoutService(idp.metadata(), sloLocation, slo.binding ?? REDIRECT_BINDING))
    await start(idp, () => ({
      MetadataUrl: `${idp.origin}/metadata-slo`, SigningKey: spKey.privateKeyPem, SigningCertificate: spKey.certificatePem, SignOutAtProvider: true
    }), fixture)
    const metadata = (await fixture.subject.app.inject({ method: 'GET', url: '/Saml2/Metadata', headers: { host: new URL(fixture.origin).host } })).body
    fixture.samlifySp = samlify.ServiceProvider({ metadata, wantLogoutResponseSigned: true })
    fixture.samlifyIdp = slo.samlifyIdp(sloLocation)
  })
  after(async () => {
    await stop(idp, fixture)
    slo.sloServer.closeAllConnections()
    await new Promise<void>((resolve) => { slo.sloServer.close(() => { resolve() }) })
  })
  return fixture
}

/**
 * Signs `user` in through the browser: the login page's SAML2 button, the test IdP's SSO page
 * (its Continue button), back on the app's `/` at `appOrigin`; each step bounded by 15 s.
 */
export async function signInThroughIdp (page: Page, idp: TestIdentityProvider, appOrigin: string, user: string): Promise<void> {
  const wait = { timeout: 15_000 }
  idp.nextUser = user
  await page.goto(`${appOrigin}/Account/Login`, wait)
  await page.click('a.provider[data-provider="Saml2"]', wait)
  await page.waitForURL((url) => url.origin === idp.origin && url.pathname === '/sso', wait)
  await page.click('#idp-continue', wait)
  await page.waitForURL(`${appOrigin}/`, wait)
}
