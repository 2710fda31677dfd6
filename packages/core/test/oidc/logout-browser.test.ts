/**
 * Provider logout end to end in headless Chromium: sign in at oidc-provider, "Sign out" on the
 * starter page ends the local session and carries the browser to the provider's logout page,
 * "Yes, sign me out" ends the provider session and the provider returns the browser to the app's
 * signed-out callback, which lands on a local page. The next sign-in asks for the login again.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { launchChromium, type HeadlessBrowser, loginAtOidcProvider } from '../helpers/providers/browser.js'
import { findPlanted } from '../helpers/providers/http-session.js'
import type { OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startOidcPair } from '../helpers/providers/oidc-pair.js'
import type { ListeningApp } from '../helpers/providers/provider-app.js'

const CLIENT_SECRET = 'browser-logout-secret-PLANTED-3a9d'

let idp: OidcIdp
let app: ListeningApp
let browser: HeadlessBrowser

before(async () => {
  ({ idp, app } = await startOidcPair({
    idp: { clientId: 'browser-logout', clientSecret: CLIENT_SECRET, accounts: { ada: { name: 'Ada Lovelace' } } },
    openIdConnect: { SignOutAtProvider: true },
    postLogoutRedirect: true
  }))
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await app?.close()
  await idp?.close()
})

test('Chromium: sign out at the provider (RP-initiated logout) and back to the app', async () => {
  const context = await browser.newContext()
  try {
    const page = await context.newPage()
    await page.goto(`${app.origin}/Account/Login`)
    await page.click('a.provider[data-provider="OpenIdConnect"]')
    await loginAtOidcProvider(page, idp.issuer, 'ada')
    await page.waitForURL(`${app.origin}/`)
    assert.equal(await page.textContent('#user-name'), 'Ada Lovelace')

    await page.click('#logout')
    await page.waitForURL((url) => url.origin === idp.issuer && url.pathname === '/session/end')
    await page.click('button[name="logout"][value="yes"]')
    await page.waitForURL((url) => url.origin === app.origin && url.pathname === '/Account/Login')
    assert.equal(idp.endedSessions, 1)
    const api = await page.goto(`${app.origin}/api/application-information`)
    assert.equal(api?.status(), 401)

    await page.goto(`${app.origin}/Account/Login`)
    await page.click('a.provider[data-provider="OpenIdConnect"]')
    await page.waitForSelector('input[name="login"]')
    assert.deepEqual(findPlanted(app.logs.text(), [CLIENT_SECRET, ...idp.issuedTokenResponseValues, ...idp.issuedCodes]), [])
  } finally {
    await context.close().catch(() => {})
  }
})
