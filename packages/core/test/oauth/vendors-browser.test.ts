/**
 * End to end in headless Chromium for the OAuth 2.0 vendor slots: login page -> "VendorA" ->
 * the vendor's authorization server on http://localhost (oauth2-mock-server redirects straight
 * back with a code) -> the app on http://127.0.0.1 shows the normalized claims -> administration
 * allowed (VendorA's user has the Administrator role) -> logout -> "VendorB" -> administration
 * refused (VendorB's user does not) -> logout. The cookies are the production ones (`__Host-`,
 * Secure; Chromium treats http://127.0.0.1 as a secure context): the correlation cookie is
 * SameSite=None and gone after the callback, the session cookie is SameSite=Lax.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import type { BrowserContext, Page } from 'playwright-core'
import { launchChromium, type HeadlessBrowser } from '../helpers/providers/browser.js'
import { findPlanted } from '../helpers/providers/http-session.js'
import { startVendorIdp, type VendorIdp } from '../helpers/providers/oauth-vendor-idp.js'
import { startProviderApp, type ListeningApp } from '../helpers/providers/provider-app.js'

const SECRET_A = 'browser-vendor-a-PLANTED-7a7a'
const SECRET_B = 'browser-vendor-b-PLANTED-8b8b'

let vendorA: VendorIdp
let vendorB: VendorIdp
let app: ListeningApp
let browser: HeadlessBrowser
let context: BrowserContext | undefined

before(async () => {
  vendorA = await startVendorIdp({ id: 1001, login: 'ada-admin', email: 'ada@example.test', roles: ['Administrator'] })
  vendorB = await startVendorIdp({ sub: 'bob-b', name: 'Bob Vendor', groups: ['readers'] })
  app = await startProviderApp({
    Authentication: {
      Providers: { VendorA: vendorA.settings('client-a', SECRET_A), VendorB: vendorB.settings('client-b', SECRET_B) }
    }
  })
  browser = await launchChromium()
})

after(async () => {
  await context?.close().catch(() => {})
  await browser?.close()
  await app?.close()
  await vendorA?.close()
  await vendorB?.close()
})

async function signIn (page: Page, slot: 'VendorA' | 'VendorB'): Promise<void> {
  await page.goto(`${app.origin}/Account/Login`)
  await page.click(`a.provider[data-provider="${slot}"]`)
  await page.waitForURL(`${app.origin}/`)
}

async function statusOf (page: Page, path: string): Promise<number> {
  const response = await page.goto(`${app.origin}${path}`)
  assert.ok(response !== null)
  return response.status()
}

async function claimRows (page: Page): Promise<string[]> {
  return await page.$$eval('table.claims tbody tr', (rows) => rows.map((row) => [...row.querySelectorAll('td')].slice(0, 2).map((cell) => cell.textContent).join('=')))
}

async function logout (page: Page): Promise<void> {
  await page.goto(`${app.origin}/`)
  await page.click('#logout')
  await page.waitForURL((url) => url.pathname === '/Account/Login')
}

test('Chromium: VendorA and VendorB sign-in, normalized claims, administrator policy both ways, logout', async () => {
  context = await browser.newContext()
  const page = await context.newPage()

  await signIn(page, 'VendorA')
  assert.equal(await page.textContent('#user-name'), 'ada-admin')
  const cookies = await context.cookies(app.origin)
  assert.deepEqual(cookies.filter((cookie) => cookie.name.includes('Correlation')), [])
  const session = cookies.find((cookie) => cookie.name === '__Host-ProjectTemplate.Web.Authentication')
  assert.equal(session?.sameSite, 'Lax')
  assert.equal(session?.secure, true)
  assert.equal(session?.httpOnly, true)
  const rowsA = await claimRows(page)
  for (const row of ['application:subject=1001', 'application:name=ada-admin', 'application:email=ada@example.test', 'application:role=Administrator']) {
    assert.ok(rowsA.includes(row), `VendorA claim ${row} shown`)
  }
  assert.equal(await statusOf(page, '/api/application-information/administration'), 200)
  await logout(page)
  assert.equal(await statusOf(page, '/api/application-information'), 401)

  await signIn(page, 'VendorB')
  assert.equal(await page.textContent('#user-name'), 'Bob Vendor')
  assert.ok((await claimRows(page)).includes('application:group=readers'))
  assert.equal(await statusOf(page, '/api/application-information/administration'), 403)
  assert.equal(new URL(page.url()).pathname, '/Account/AccessDenied', 'redirected to the AccessDenied page')
  assert.equal(await page.textContent('h1'), 'Access denied')
  await logout(page)

  assert.deepEqual(app.logs.events('external.sign_in.succeeded').map((record) => record.provider), ['VendorA', 'VendorB'])
  assert.deepEqual(findPlanted(app.logs.text(), [SECRET_A, SECRET_B, ...vendorA.planted, ...vendorB.planted]), [])
})
