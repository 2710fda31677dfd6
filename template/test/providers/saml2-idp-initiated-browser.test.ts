/**
 * IdP-initiated SAML2 sign-in in headless Chromium, done safely (RestartUnsolicitedSignIn): the
 * test IdP's dashboard tile (http://localhost, another site) posts an unsolicited response to the
 * ACS; the app does not trust it but starts an SP-initiated sign-in, the IdP answers that request,
 * and the browser lands signed in on the tile's local RelayState.
 */
import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import type { TestApp } from '../helpers/app.js'
import { launchChromium, type HeadlessBrowser } from './helpers/browser.js'
import { assertNoLeak, buildSaml2App, SP_ENTITY_ID, waitForSaml2 } from './saml-helpers/app.js'
import { TestIdentityProvider } from './saml-helpers/identity-provider.js'

const WAIT = { timeout: 15_000 }
const idp = new TestIdentityProvider()
let subject: TestApp
let browser: HeadlessBrowser
let appOrigin: string

before(async () => {
  idp.users.set('tile', { nameId: 'tile@example.test', attributes: { displayname: ['Tile User'] } })
  idp.nextUser = 'tile'
  await idp.start()
  subject = await buildSaml2App(idp, { RestartUnsolicitedSignIn: true })
  await subject.app.listen({ host: '127.0.0.1', port: 0 })
  appOrigin = `http://127.0.0.1:${(subject.app.server.address() as AddressInfo).port}`
  await waitForSaml2(subject.app)
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await subject?.app.close()
  await idp.stop()
})

test('Chromium: an IdP dashboard tile restarts as an SP-initiated sign-in and lands on the local RelayState', async () => {
  const context = await browser.newContext()
  try {
    const page = await context.newPage()
    await page.goto(idp.idpInitiatedUrl(`${appOrigin}/Saml2/Acs`, SP_ENTITY_ID, '/api/application-information'), WAIT)
    await page.click('#idp-tile', WAIT)
    // The app answered with a fresh AuthnRequest: the IdP's SSO page for that request.
    await page.waitForURL((url) => url.origin === idp.origin && url.pathname === '/sso', WAIT)
    assert.equal(idp.requests.length, 1)
    await page.click('#idp-continue', WAIT)
    await page.waitForURL(`${appOrigin}/api/application-information`, WAIT)
    assert.equal(typeof JSON.parse(await page.textContent('body') ?? 'null'), 'object', 'the protected API answered')
    await page.goto(`${appOrigin}/`, WAIT)
    assert.equal(await page.textContent('#user-name'), 'Tile User')
    assert.equal(subject.logs.events('saml2.unsolicited.restarted').length, 1)
    assert.equal(subject.logs.events('external.sign_in.succeeded').length, 1)
    assertNoLeak(subject.logs.text(), idp.issuedResponses)
  } finally {
    await context.close().catch(() => {})
  }
})
