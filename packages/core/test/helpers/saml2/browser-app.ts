/**
 * The fixture of the SAML2 browser tests: registers before/after hooks that start the test IdP,
 * an app trusting it listening on loopback (Saml2 available) and headless Chromium, and close them
 * in reverse order.
 */
import type { AddressInfo } from 'node:net'
import { after, before } from 'node:test'
import type { TestApp } from '../app.js'
import { launchChromium, type HeadlessBrowser } from '../providers/browser.js'
import { buildSaml2App, waitForSaml2 } from './app.js'
import type { TestIdentityProvider } from './identity-provider.js'

export interface Saml2BrowserApp {
  /** The app (set once `before` has run). */
  subject: TestApp
  browser: HeadlessBrowser
  /** `http://127.0.0.1:<port>` of the listening app. */
  origin: string
}

export function useSaml2BrowserApp (idp: TestIdentityProvider, settings: Parameters<typeof buildSaml2App>[1] = {}): Saml2BrowserApp {
  const fixture = {} as Saml2BrowserApp
  before(async () => {
    await idp.start()
    fixture.subject = await buildSaml2App(idp, settings)
    await fixture.subject.app.listen({ host: '127.0.0.1', port: 0 })
    fixture.origin = `http://127.0.0.1:${(fixture.subject.app.server.address() as AddressInfo).port}`
    await waitForSaml2(fixture.subject.app)
    fixture.browser = await launchChromium()
  })
  after(async () => {
    await fixture.browser?.close()
    await fixture.subject?.app.close()
    await idp.stop()
  })
  return fixture
}
