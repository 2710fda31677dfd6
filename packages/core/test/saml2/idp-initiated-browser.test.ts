/**
 * IdP-initiated SAML2 sign-in in headless Chromium, done safely (RestartUnsolicitedSignIn): the
 * test IdP's dashboard tile (http://localhost, another site) posts an unsolicited response to the
 * ACS; the app does not trust it but starts an SP-initiated sign-in, the IdP answers that request,
 * and the browser lands signed in on the tile's local RelayState.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertNoLeak, SP_ENTITY_ID } from '../helpers/saml2/app.js'
import { useSaml2BrowserApp } from '../helpers/saml2/browser-app.js'
import { TestIdentityProvider } from '../helpers/saml2/identity-provider.js'

const WAIT = { timeout: 15_000 }
const idp = new TestIdentityProvider()
const app = useSaml2BrowserApp(idp, { RestartUnsolicitedSignIn: true })

idp.users.set('tile', { nameId: 'tile@example.test', attributes: { displayname: ['Tile User'] } })
idp.nextUser = 'tile'

test('Chromium: an IdP dashboard tile restarts as an SP-initiated sign-in and lands on the local RelayState', async () => {
  const context = await app.browser.newContext()
  try {
    const page = await context.newPage()
    await page.goto(idp.idpInitiatedUrl(`${app.origin}/Saml2/Acs`, SP_ENTITY_ID, '/api/application-information'), WAIT)
    await page.click('#idp-tile', WAIT)
    // The app answered with a fresh AuthnRequest: the IdP's SSO page for that request.
    await page.waitForURL((url) => url.origin === idp.origin && url.pathname === '/sso', WAIT)
    assert.equal(idp.requests.length, 1)
    await page.click('#idp-continue', WAIT)
    await page.waitForURL(`${app.origin}/api/application-information`, WAIT)
    assert.equal(typeof JSON.parse(await page.textContent('body') ?? 'null'), 'object', 'the protected API answered')
    await page.goto(`${app.origin}/`, WAIT)
    assert.equal(await page.textContent('#user-name'), 'Tile User')
    assert.equal(app.subject.logs.events('saml2.unsolicited.restarted').length, 1)
    assert.equal(app.subject.logs.events('external.sign_in.succeeded').length, 1)
    assertNoLeak(app.subject.logs.text(), idp.issuedResponses)
  } finally {
    await context.close().catch(() => {})
  }
})
