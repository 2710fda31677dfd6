/**
 * End to end in headless Chromium: login page -> "OpenID Connect" -> oidc-provider's login and
 * consent pages on http://localhost -> back on the app at http://127.0.0.1 (another site, so the
 * correlation cookie must survive a cross-site navigation) -> the starter page shows normalized
 * claims -> the administration API is allowed for a user whose provider role maps to
 * Administrator and refused for another -> logout. Production cookies (`__Host-`, Secure): Chromium
 * treats http://127.0.0.1 as a secure context.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import type { BrowserContext, Page } from 'playwright-core'
import { launchChromium, type HeadlessBrowser, loginAtOidcProvider } from '../helpers/providers/browser.js'
import { findPlanted } from '../helpers/providers/http-session.js'
import type { OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startOidcPair } from '../helpers/providers/oidc-pair.js'
import type { ListeningApp } from '../helpers/providers/provider-app.js'

const CLIENT_SECRET = 'browser-oidc-secret-PLANTED-5e2f'

let idp: OidcIdp
let app: ListeningApp
let browser: HeadlessBrowser
const contexts: BrowserContext[] = []

before(async () => {
  ({ idp, app } = await startOidcPair({
    idp: {
      clientId: 'browser-client',
      clientSecret: CLIENT_SECRET,
      accounts: {
        ada: { name: 'Ada Lovelace', email: 'ada@example.test', roles: ['Administrator'] },
        bob: { name: 'Bob Reader', email: 'bob@example.test', roles: ['Reader'] }
      }
    }
  }))
  browser = await launchChromium()
})

after(async () => {
  for (const context of contexts) await context.close().catch(() => {})
  await browser?.close()
  await app?.close()
  await idp?.close()
})

async function signInThroughBrowser (login: string): Promise<Page> {
  const context = await browser.newContext()
  contexts.push(context)
  const page = await context.newPage()
  await page.goto(`${app.origin}/Account/Login`)
  await page.click('a.provider[data-provider="OpenIdConnect"]')
  await loginAtOidcProvider(page, idp.issuer, login)
  await page.waitForURL(`${app.origin}/`)
  return page
}

async function claimRows (page: Page): Promise<string[]> {
  return await page.$$eval('table.claims tbody tr', (rows) => rows.map((row) => [...row.querySelectorAll('td')].slice(0, 2).map((cell) => cell.textContent).join('=')))
}

async function apiStatus (page: Page, path: string): Promise<number> {
  const response = await page.goto(`${app.origin}${path}`)
  assert.ok(response !== null)
  return response.status()
}

async function logout (page: Page): Promise<void> {
  await page.goto(`${app.origin}/`)
  await page.click('#logout')
  await page.waitForURL((url) => url.pathname === '/Account/Login')
  assert.equal(await apiStatus(page, '/api/application-information'), 401)
}

test('Chromium: OpenID Connect sign-in, normalized claims, administrator policy both ways, logout', async () => {
  const ada = await signInThroughBrowser('ada')
  assert.equal(await ada.textContent('#user-name'), 'Ada Lovelace')
  const adaClaims = await claimRows(ada)
  for (const row of ['application:subject=ada', 'application:name=Ada Lovelace', 'application:email=ada@example.test', 'application:role=Administrator']) {
    assert.ok(adaClaims.includes(row), `claim ${row} shown`)
  }
  assert.equal(await apiStatus(ada, '/api/application-information/administration'), 200)
  assert.deepEqual(JSON.parse(await ada.textContent('body') ?? ''), { subject: 'ada', name: 'Ada Lovelace' })
  await logout(ada)

  const bob = await signInThroughBrowser('bob')
  assert.ok((await claimRows(bob)).includes('application:role=Reader'))
  assert.equal(await apiStatus(bob, '/api/application-information/administration'), 403)
  assert.equal(new URL(bob.url()).pathname, '/Account/AccessDenied', 'redirected to the AccessDenied page')
  assert.equal(await bob.textContent('h1'), 'Access denied')
  await logout(bob)

  assert.equal(app.logs.events('external.sign_in.succeeded').length, 2)
  assert.deepEqual(app.logs.events('external.sign_in.failed'), [])
  assert.deepEqual(findPlanted(app.logs.text(), [CLIENT_SECRET, ...idp.issuedCodes, ...idp.issuedTokens]), [])
})
