/**
 * Development over plain http with a real IdP, in headless Chromium: the app on http://127.0.0.1
 * with the Development-only AllowInsecureHttp override (session cookie without `__Host-`/Secure),
 * oidc-provider on http://localhost, another site. With ResponseMode form_post the provider returns
 * the authorization response as a cross-site POST, which carries the correlation cookie only
 * because it stays `Secure; SameSite=None` (browsers treat http://localhost and 127.0.0.1 as secure
 * contexts): the sign-in completes. Then back-channel logout end to end: "Yes, sign me out" at the
 * provider makes it POST a logout token to the app, and the browser's session cookie is anonymous.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import type { BrowserContext } from 'playwright-core'
import { launchChromium, type HeadlessBrowser, loginAtOidcProvider } from '../helpers/providers/browser.js'
import { findPlanted } from '../helpers/providers/http-session.js'
import { waitFor } from '../helpers/wait.js'
import type { OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startOidcPair } from '../helpers/providers/oidc-pair.js'
import type { ListeningApp } from '../helpers/providers/provider-app.js'

const CLIENT_SECRET = 'browser-formpost-secret-PLANTED-6c1b'
const CLIENT_ID = 'browser-formpost'

let idp: OidcIdp
let app: ListeningApp
let browser: HeadlessBrowser
let context: BrowserContext | undefined

before(async () => {
  ({ idp, app } = await startOidcPair({
    idp: {
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      accounts: { ada: { name: 'Ada Lovelace', email: 'ada@example.test' } },
      backChannelLogoutUri: (redirectUri) => `${new URL(redirectUri).origin}/backchannel-logout-oidc`
    },
    authentication: { Cookie: { AllowInsecureHttp: true } },
    openIdConnect: { ResponseMode: 'form_post', BackChannelLogout: true }
  }))
  browser = await launchChromium()
})

after(async () => {
  await context?.close().catch(() => {})
  await browser?.close()
  await app?.close()
  await idp?.close()
})

test('Chromium, http Development: a cross-site form_post callback signs in; a logout at the provider ends the session over the back channel', async () => {
  assert.notEqual(new URL(idp.issuer).hostname, new URL(app.origin).hostname, 'IdP and app are different sites')
  context = await browser.newContext()
  const page = await context.newPage()
  const callbacks: string[] = []
  page.on('request', (request) => {
    if (new URL(request.url()).pathname === '/signin-oidc') callbacks.push(`${request.method()} ${request.headers()['content-type'] ?? ''}`)
  })

  await page.goto(`${app.origin}/Account/Login`)
  await page.click('a.provider[data-provider="OpenIdConnect"]')
  await page.waitForURL((url) => url.origin === idp.issuer && url.pathname.startsWith('/interaction/'))
  const correlation = (await context.cookies(app.origin)).filter((cookie) => cookie.name.startsWith('.ProjectTemplate.Correlation.'))
  assert.equal(correlation.length, 1, 'the flow\'s correlation cookie (Development name, no __Host- prefix)')
  assert.equal(correlation[0]?.secure, true)
  assert.equal(correlation[0]?.sameSite, 'None')

  await loginAtOidcProvider(page, idp.issuer, 'ada')
  // oidc-provider answers with its auto-submitting form: a cross-site POST to the callback.
  await page.waitForURL(`${app.origin}/`)
  assert.deepEqual(callbacks, ['POST application/x-www-form-urlencoded'], 'the authorization response came as form_post')
  assert.equal(await page.textContent('#user-name'), 'Ada Lovelace')
  const cookies = await context.cookies(app.origin)
  assert.ok(cookies.some((cookie) => cookie.name === '.ProjectTemplate.Web.Authentication' && !cookie.secure), 'the Development session cookie')
  assert.deepEqual(cookies.filter((cookie) => cookie.name.startsWith('.ProjectTemplate.Correlation.')), [], 'the correlation cookie is used up')
  assert.deepEqual(app.logs.events('external.sign_in.failed'), [])

  // Logout at the provider, in the browser: the provider calls the app over the back channel.
  await page.goto(`${idp.issuer}/session/end`)
  await page.click('button[name="logout"][value="yes"]')
  await waitFor(() => idp.backChannelLogouts.length > 0, 'the back-channel logout', 10_000)
  assert.deepEqual(idp.backChannelLogouts, [{ status: 200 }])
  const api = await page.goto(`${app.origin}/api/application-information`)
  assert.equal(api?.status(), 401, 'the browser\'s session cookie is anonymous now')
  await page.goto(`${app.origin}/`)
  assert.equal(new URL(page.url()).pathname, '/Account/Login')

  assert.deepEqual(findPlanted(app.logs.text(), [CLIENT_SECRET, ...idp.issuedCodes, ...idp.issuedTokenResponseValues]), [])
})
