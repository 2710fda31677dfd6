/**
 * One real SAML Single Logout in headless Chromium: sign in through the test IdP, press Logout on
 * the starter page; the local session ends, the sign-out page navigates to the IdP's
 * SingleLogoutService (http://localhost:<port>, another site) where samlify's IdentityProvider
 * verifies the SP-signed LogoutRequest and redirects back with its signed LogoutResponse to
 * /Saml2/Logout, which validates it and lands the browser on the local return URL.
 */
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import type { Page } from 'playwright-core'
import type { TestApp } from '../helpers/app.js'
import { launchChromium, type HeadlessBrowser } from '../helpers/providers/browser.js'
import { assertNoLeak, buildSaml2App, SESSION_COOKIE_NAMES, waitForSaml2 } from '../helpers/saml2/app.js'
import { createSigningKey } from '../helpers/saml2/certificates.js'
import { TestIdentityProvider } from '../helpers/saml2/identity-provider.js'
import { octetStringOf, queryOf, samlify, type SamlifyEntity, type SamlifyIdentityProvider, samlifyLogoutIdp, withSingleLogoutService } from '../helpers/saml2/samlify.js'

const WAIT = { timeout: 15_000 }

const idp = new TestIdentityProvider()
const spKey = createSigningKey('sp-signing')
let subject: TestApp
let browser: HeadlessBrowser
let appOrigin: string
let sloServer: Server
let sloOrigin = ''
let samlifyIdp: SamlifyIdentityProvider
let samlifySp: SamlifyEntity
const verifiedLogoutRequests: string[] = []

before(async () => {
  idp.users.set('grace', { nameId: 'grace@example.test', attributes: { displayname: ['Grace Hopper'] } })
  await idp.start()
  // The IdP's SingleLogoutService: samlify verifies the LogoutRequest and answers by redirect.
  sloServer = createServer((request, response) => {
    const location = new URL(request.url ?? '/', sloOrigin).href
    samlifyIdp.parseLogoutRequest(samlifySp, 'redirect', { query: queryOf(location), octetString: octetStringOf(location) }).then((parsed) => {
      verifiedLogoutRequests.push(String(parsed.extract.nameID))
      const answer = samlifyIdp.createLogoutResponse(samlifySp, parsed as { extract: { request: { id: string } } }, 'redirect', queryOf(location).RelayState ?? '')
      response.writeHead(302, { location: answer.context }).end()
    }, () => {
      response.writeHead(400, { 'content-type': 'text/plain' }).end('LogoutRequest refused')
    })
  })
  await new Promise<void>((resolve) => sloServer.listen(0, '127.0.0.1', resolve))
  sloOrigin = `http://localhost:${(sloServer.address() as AddressInfo).port}`
  idp.documents.set('/metadata-slo', () => withSingleLogoutService(idp.metadata(), `${sloOrigin}/slo`))

  subject = await buildSaml2App(idp, { MetadataUrl: `${idp.origin}/metadata-slo`, SigningKey: spKey.privateKeyPem, SigningCertificate: spKey.certificatePem, SignOutAtProvider: true })
  await subject.app.listen({ host: '127.0.0.1', port: 0 })
  appOrigin = `http://127.0.0.1:${(subject.app.server.address() as AddressInfo).port}`
  await waitForSaml2(subject.app)
  const metadata = (await subject.app.inject({ method: 'GET', url: '/Saml2/Metadata', headers: { host: new URL(appOrigin).host } })).body
  samlifySp = samlify.ServiceProvider({ metadata, wantLogoutResponseSigned: true })
  samlifyIdp = samlifyLogoutIdp(idp, `${sloOrigin}/slo`)
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await subject?.app.close()
  sloServer?.closeAllConnections()
  await new Promise<void>((resolve) => { if (sloServer === undefined) resolve(); else sloServer.close(() => { resolve() }) })
  await idp.stop()
})

async function signInThroughIdp (page: Page): Promise<void> {
  idp.nextUser = 'grace'
  await page.goto(`${appOrigin}/Account/Login`, WAIT)
  await page.click('a.provider[data-provider="Saml2"]', WAIT)
  await page.waitForURL((url) => url.origin === idp.origin && url.pathname === '/sso', WAIT)
  await page.click('#idp-continue', WAIT)
  await page.waitForURL(`${appOrigin}/`, WAIT)
}

test('logout in Chromium ends the local session and completes Single Logout at the IdP and back', { timeout: 90_000 }, async () => {
  const context = await browser.newContext()
  const page = await context.newPage()
  const visited: string[] = []
  page.on('request', (request) => { visited.push(new URL(request.url()).origin + new URL(request.url()).pathname) })
  await signInThroughIdp(page)
  assert.equal(await page.textContent('#user-name', WAIT), 'Grace Hopper')

  await page.click('#logout', WAIT)
  await page.waitForURL((url) => url.origin === appOrigin && url.pathname === '/Account/Login', WAIT)
  assert.ok(visited.includes(`${sloOrigin}/slo`), 'the browser went to the IdP SingleLogoutService')
  assert.ok(visited.includes(`${appOrigin}/Saml2/Logout`), 'the IdP sent the browser back to /Saml2/Logout')
  assert.deepEqual(verifiedLogoutRequests, ['grace@example.test'])
  assert.equal(subject.logs.events('saml2.logout.completed').length, 1)
  assert.equal(subject.logs.events('saml2.logout.rejected').length, 0)
  const cookies = await context.cookies(appOrigin)
  assert.equal(cookies.some((cookie) => SESSION_COOKIE_NAMES.includes(cookie.name) && cookie.value !== ''), false, 'session cookie gone')
  await context.close()
  assertNoLeak(subject.logs.text(), idp.issuedResponses)
})
