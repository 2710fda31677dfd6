/**
 * A sign-in ends the session the browser had, even when it completes through a cross-site POST
 * (issue 26, item 6; docs/security.md, "Revocation"). In real headless Chromium: the test IdP on
 * http://localhost:<port> (another site than the app on http://127.0.0.1:<port>), alice signs in,
 * then bob in the same browser. The ACS POST from the IdP's page does not carry the SameSite=Lax
 * session cookie (asserted), so only the session id sealed into the correlation cookie at the
 * challenge can end alice's session: afterwards her copied cookie is anonymous.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Page } from 'playwright-core'
import { SESSION_COOKIE_NAMES } from '../helpers/saml2/app.js'
import { useSaml2BrowserApp } from '../helpers/saml2/browser-app.js'
import { TestIdentityProvider } from '../helpers/saml2/identity-provider.js'

const WAIT = { timeout: 15_000 }
const API = '/api/application-information'

const idp = new TestIdentityProvider()
const app = useSaml2BrowserApp(idp)
idp.users.set('alice', { nameId: 'alice@example.test', attributes: { displayname: ['Alice'] } })
idp.users.set('bob', { nameId: 'bob@example.test', attributes: { displayname: ['Bob'] } })

async function signInThroughIdp (page: Page, user: string): Promise<void> {
  idp.nextUser = user
  await page.goto(`${app.origin}/External/Challenge?provider=Saml2`, WAIT)
  await page.waitForURL((url) => url.origin === idp.origin && url.pathname === '/sso', WAIT)
  await page.click('#idp-continue', WAIT)
  await page.waitForURL(`${app.origin}/`, WAIT)
}

async function sessionCookie (page: Page): Promise<string> {
  const cookie = (await page.context().cookies(app.origin)).find((candidate) => SESSION_COOKIE_NAMES.includes(candidate.name) && candidate.value !== '')
  assert.ok(cookie !== undefined, 'a session cookie')
  return `${cookie.name}=${cookie.value}`
}

async function apiStatus (cookie: string): Promise<number> {
  const response = await fetch(`${app.origin}${API}`, { headers: { cookie, accept: 'application/json' }, redirect: 'manual', signal: AbortSignal.timeout(10_000) })
  await response.arrayBuffer()
  return response.status
}

test('bob signing in by a cross-site SAML POST in alice\'s browser ends alice\'s session', { timeout: 90_000 }, async () => {
  const context = await app.browser.newContext()
  const page = await context.newPage()
  const acsCookieHeaders: Array<Promise<string | null>> = []
  page.on('request', (request) => {
    if (request.method() === 'POST' && request.url() === `${app.origin}/Saml2/Acs`) acsCookieHeaders.push(request.headerValue('cookie'))
  })
  await signInThroughIdp(page, 'alice')
  const alice = await sessionCookie(page)
  assert.equal(await apiStatus(alice), 200, 'alice is signed in')

  await signInThroughIdp(page, 'bob')
  const bob = await sessionCookie(page)
  assert.notEqual(bob, alice)
  assert.equal(await page.textContent('#user-name', WAIT), 'Bob')
  // The case at hand: the second ACS POST came without the Lax session cookie.
  assert.equal(acsCookieHeaders.length, 2)
  const secondAcs = await acsCookieHeaders[1] ?? ''
  assert.ok(secondAcs.includes('ProjectTemplate.Correlation.'), 'the correlation cookie rode along')
  assert.ok(!SESSION_COOKIE_NAMES.some((name) => secondAcs.includes(`${name}=`)), 'the session cookie did not')

  assert.equal(await apiStatus(alice), 401, "alice's old cookie no longer answers")
  assert.equal(await apiStatus(bob), 200)
  await context.close()
})
