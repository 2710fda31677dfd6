/**
 * End to end in headless Chromium: login page -> "OpenID Connect" -> oidc-provider's login and
 * consent pages on http://localhost -> back on the app at http://127.0.0.1 (another site, so the
 * correlation cookie must survive a cross-site navigation) -> the starter page shows normalized
 * claims -> the administration API is allowed for a user whose provider role maps to
 * Administrator and refused for another -> logout. Then one step-up round trip (issue 36, item 3):
 * a route whose policy needs a fresh multi-factor login sends the signed-in browser back to the
 * provider (prompt=login), the user logs in again, and returns with a new session id to the route,
 * now allowed. Production cookies (`__Host-`, Secure): Chromium treats http://127.0.0.1 as a
 * secure context.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import type { BrowserContext, Page } from 'playwright-core'
import { launchChromium, type HeadlessBrowser, loginAtOidcProvider } from '../helpers/providers/browser.js'
import { findPlanted } from '../helpers/providers/http-session.js'
import { storedSession } from '../helpers/app.js'
import type { OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startOidcPair } from '../helpers/providers/oidc-pair.js'
import type { ListeningApp } from '../helpers/providers/provider-app.js'

const CLIENT_SECRET = 'browser-oidc-secret-PLANTED-5e2f'
const HIGH = 'urn:example:loa:high'
/** How the next login at the IdP authenticates: a password, until the step-up test asks for more. */
let nextLogin: { acr: string, amr: string[] } = { acr: 'urn:example:loa:low', amr: ['pwd'] }

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
      },
      acrValues: ['urn:example:loa:low', HIGH],
      loginAuthentication: () => nextLogin
    },
    configure: (instance) => {
      instance.authorization.addPolicy({ name: 'FreshMfa', authentication: { acrValues: [HIGH], amr: ['mfa'], maxAgeSeconds: 0 } })
      instance.get('/step-up', { config: { authorize: 'FreshMfa' } }, async (_request, reply) => await reply.type('text/html').send('<h1 id="stepped-up">Stepped up</h1>'))
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

test('Chromium: step-up round trip: sent back to the provider, logs in again, new session id, the route allowed', async () => {
  const page = await signInThroughBrowser('ada')
  const sessionCookie = async (): Promise<string> => {
    const cookie = (await page.context().cookies(app.origin)).find((candidate) => candidate.name.endsWith('.Authentication'))
    return cookie === undefined ? '' : `${cookie.name}=${cookie.value}`
  }
  const sessionId = async (): Promise<string | undefined> => (await storedSession(app.app, app.keyRing, await sessionCookie()))?.sessionId
  const oldCookie = await sessionCookie()
  const before = await sessionId()
  assert.ok(before !== undefined)
  nextLogin = { acr: HIGH, amr: ['pwd', 'mfa'] }
  await page.goto(`${app.origin}/step-up`)
  // prompt=login: the provider asks the signed-in user to log in again (no consent: given before).
  await page.waitForURL((url) => url.origin === idp.issuer && url.pathname.startsWith('/interaction/'))
  await page.fill('input[name="login"]', 'ada')
  await page.fill('input[name="password"]', 'any-password')
  await page.click('button[type="submit"]')
  await page.waitForURL(`${app.origin}/step-up`)
  assert.equal(await page.textContent('#stepped-up'), 'Stepped up')
  const after = await sessionId()
  assert.ok(after !== undefined && after !== before, 'the session cookie names a new session')
  assert.equal(await storedSession(app.app, app.keyRing, oldCookie), undefined, 'the old session is revoked')
  assert.equal(app.logs.events('external.sign_in.succeeded').at(-1)?.stepUp, true)
  assert.deepEqual(app.logs.events('external.sign_in.failed'), [])
})
