/**
 * One real SAML Single Logout in headless Chromium: sign in through the test IdP, press Logout on
 * the starter page; the local session ends, the sign-out page navigates to the IdP's
 * SingleLogoutService (http://localhost:<port>, another site) where samlify's IdentityProvider
 * verifies the SP-signed LogoutRequest and redirects back with its signed LogoutResponse to
 * /Saml2/Logout, which validates it and lands the browser on the local return URL.
 */
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { test } from 'node:test'
import { assertNoLeak, SESSION_COOKIE_NAMES } from '../helpers/saml2/app.js'
import { signInThroughIdp, useSaml2LogoutBrowserApp } from '../helpers/saml2/browser-app.js'
import { TestIdentityProvider } from '../helpers/saml2/identity-provider.js'
import { octetStringOf, queryOf, samlifyLogoutIdp } from '../helpers/saml2/samlify.js'

const WAIT = { timeout: 15_000 }

const idp = new TestIdentityProvider()
idp.users.set('grace', { nameId: 'grace@example.test', attributes: { displayname: ['Grace Hopper'] } })
const verifiedLogoutRequests: string[] = []

// The IdP's SingleLogoutService: samlify verifies the LogoutRequest and answers by redirect.
const sloServer = createServer((request, response) => {
  const location = new URL(request.url ?? '/', app.sloOrigin).href
  app.samlifyIdp.parseLogoutRequest(app.samlifySp, 'redirect', { query: queryOf(location), octetString: octetStringOf(location) }).then((parsed) => {
    verifiedLogoutRequests.push(String(parsed.extract.nameID))
    const answer = app.samlifyIdp.createLogoutResponse(app.samlifySp, parsed as { extract: { request: { id: string } } }, 'redirect', queryOf(location).RelayState ?? '')
    response.writeHead(302, { location: answer.context }).end()
  }, () => {
    response.writeHead(400, { 'content-type': 'text/plain' }).end('LogoutRequest refused')
  })
})
const app = useSaml2LogoutBrowserApp(idp, { sloServer, sloPath: '/slo', samlifyIdp: (sloLocation) => samlifyLogoutIdp(idp, sloLocation) })

test('logout in Chromium ends the local session and completes Single Logout at the IdP and back', { timeout: 90_000 }, async () => {
  const context = await app.browser.newContext()
  const page = await context.newPage()
  const visited: string[] = []
  page.on('request', (request) => { visited.push(new URL(request.url()).origin + new URL(request.url()).pathname) })
  await signInThroughIdp(page, idp, app.origin, 'grace')
  assert.equal(await page.textContent('#user-name', WAIT), 'Grace Hopper')

  await page.click('#logout', WAIT)
  await page.waitForURL((url) => url.origin === app.origin && url.pathname === '/Account/Login', WAIT)
  assert.ok(visited.includes(`${app.sloOrigin}/slo`), 'the browser went to the IdP SingleLogoutService')
  assert.ok(visited.includes(`${app.origin}/Saml2/Logout`), 'the IdP sent the browser back to /Saml2/Logout')
  assert.deepEqual(verifiedLogoutRequests, ['grace@example.test'])
  assert.equal(app.subject.logs.events('saml2.logout.completed').length, 1)
  assert.equal(app.subject.logs.events('saml2.logout.rejected').length, 0)
  const cookies = await context.cookies(app.origin)
  assert.equal(cookies.some((cookie) => SESSION_COOKIE_NAMES.includes(cookie.name) && cookie.value !== ''), false, 'session cookie gone')
  await context.close()
  assertNoLeak(app.subject.logs.text(), idp.issuedResponses)
})
