/**
 * One real sign-in in headless Chromium per user: login page -> SAML2 button -> test IdP
 * (http://localhost:<port>, another site) -> form POST of a signed response to the ACS at
 * http://127.0.0.1:<port>/Saml2/Acs (the SameSite=None correlation cookie must ride along) ->
 * back on `/` with normalized claims -> the administrator API allowed or AccessDenied by the
 * role attribute -> logout.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Page } from 'playwright-core'
import { assertNoLeak, SESSION_COOKIE_NAMES } from '../helpers/saml2/app.js'
import { signInThroughIdp, useSaml2BrowserApp } from '../helpers/saml2/browser-app.js'
import { TestIdentityProvider } from '../helpers/saml2/identity-provider.js'

const ROLE_URI = 'http://schemas.microsoft.com/ws/2008/06/identity/claims/role'
const EMAIL_URI = 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress'
const WAIT = { timeout: 15_000 }

const idp = new TestIdentityProvider()
const app = useSaml2BrowserApp(idp)

idp.users.set('grace', {
  nameId: 'grace@example.test',
  attributes: { [ROLE_URI]: ['Administrator'], [EMAIL_URI]: ['grace@example.test'], displayname: ['Grace Hopper'], groups: ['compilers', 'navy'] }
})
idp.users.set('alan', { nameId: 'alan@example.test', attributes: { [ROLE_URI]: ['Reader'], displayname: ['Alan Turing'] } })

async function claimRows (page: Page): Promise<string[]> {
  const cells = await page.locator('table.claims tbody tr').evaluateAll((rows) =>
    rows.map((row) => [row.children[0]?.textContent ?? '', row.children[1]?.textContent ?? '']))
  return cells.map(([type, value]) => `${type} = ${value}`)
}

async function signOut (page: Page): Promise<void> {
  await page.click('#logout', WAIT)
  await page.waitForURL((url) => url.pathname === '/Account/Login', WAIT)
  const cookies = await page.context().cookies(app.origin)
  assert.equal(cookies.some((cookie) => SESSION_COOKIE_NAMES.includes(cookie.name) && cookie.value !== ''), false, 'session cookie gone')
}

test('an administrator signs in through the SAML2 IdP, reaches the administration API and signs out', { timeout: 90_000 }, async () => {
  const context = await app.browser.newContext()
  const page = await context.newPage()
  const acsCookies: Array<Promise<string | null>> = []
  page.on('request', (request) => {
    if (request.method() === 'POST' && request.url() === `${app.origin}/Saml2/Acs`) acsCookies.push(request.headerValue('cookie'))
  })
  await signInThroughIdp(page, idp, app.origin, 'grace')
  assert.equal(acsCookies.length, 1)
  assert.ok((await acsCookies[0] ?? '').includes('ProjectTemplate.Correlation.'), 'the cross-site POST carried the correlation cookie')

  assert.equal(await page.textContent('#user-name', WAIT), 'Grace Hopper')
  const rows = await claimRows(page)
  for (const expected of ['application:subject = grace@example.test', 'application:name = Grace Hopper', 'application:email = grace@example.test',
    'application:role = Administrator', 'application:group = compilers', 'application:group = navy', 'NameID = grace@example.test']) {
    assert.ok(rows.includes(expected), `claim ${expected}`)
  }

  const administration = await page.goto(`${app.origin}/api/application-information/administration`, WAIT)
  assert.equal(administration?.status(), 200)
  assert.deepEqual(JSON.parse(await administration.text()), { subject: 'grace@example.test', name: 'Grace Hopper' })

  await page.goto(`${app.origin}/`, WAIT)
  await signOut(page)
  await context.close()
})

test('a reader signed in through the SAML2 IdP gets AccessDenied from the administration API', { timeout: 90_000 }, async () => {
  const context = await app.browser.newContext()
  const page = await context.newPage()
  await signInThroughIdp(page, idp, app.origin, 'alan')
  assert.equal(await page.textContent('#user-name', WAIT), 'Alan Turing')
  assert.ok((await claimRows(page)).includes('application:role = Reader'))

  // A browser navigation the policy refuses is redirected to the AccessDenied page (403).
  const administration = await page.goto(`${app.origin}/api/application-information/administration`, WAIT)
  assert.equal(administration?.status(), 403)
  assert.equal(new URL(page.url()).pathname, '/Account/AccessDenied')
  assert.equal(new URL(page.url()).searchParams.get('ReturnUrl'), '/api/application-information/administration')
  assert.equal(await page.textContent('h1', WAIT), 'Access denied')
  assert.match(await page.textContent('header', WAIT) ?? '', /Signed in as Alan Turing/)

  await page.goto(`${app.origin}/`, WAIT)
  await signOut(page)
  await context.close()
})

test('the browser runs left no SAMLResponse in the logs', () => {
  assert.equal(idp.issuedResponses.length, 2)
  assertNoLeak(app.subject.logs.text(), idp.issuedResponses)
  assert.equal(app.subject.logs.events('external.sign_in.succeeded').length, 2)
})
