/**
 * One real IdP-initiated SAML Single Logout in headless Chromium, HTTP-POST both ways: sign in
 * through the test IdP; the IdP's portal page (another site) posts a signed LogoutRequest to
 * /Saml2/Logout; the app ends the session and answers with its auto-submitting page, whose own
 * Content-Security-Policy must let Chromium run the one hashed script and post to the IdP's
 * SingleLogoutService, where samlify verifies the SP-signed LogoutResponse.
 */
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import type { TestApp } from '../helpers/app.js'
import { launchChromium, type HeadlessBrowser } from '../helpers/providers/browser.js'
import { buildSaml2App, waitForSaml2 } from '../helpers/saml2/app.js'
import { createSigningKey } from '../helpers/saml2/certificates.js'
import { TestIdentityProvider } from '../helpers/saml2/identity-provider.js'
import { POST_BINDING, samlify, type SamlifyEntity, type SamlifyIdentityProvider, withSingleLogoutService } from '../helpers/saml2/samlify.js'

const WAIT = { timeout: 15_000 }

const idp = new TestIdentityProvider()
const spKey = createSigningKey('sp-signing')
let subject: TestApp
let browser: HeadlessBrowser
let appOrigin = ''
let portal: Server
let portalOrigin = ''
let samlifyIdp: SamlifyIdentityProvider
let samlifySp: SamlifyEntity
let portalForm = ''
const verifiedResponses: string[] = []

before(async () => {
  idp.users.set('grace', { nameId: 'grace@example.test', attributes: { displayname: ['Grace Hopper'] } })
  await idp.start()
  // The IdP's portal (GET /sign-out: the page that starts Single Logout) and its HTTP-POST
  // SingleLogoutService (POST /slo-post: samlify verifies the LogoutResponse).
  portal = createServer((request, response) => {
    if (request.method === 'GET' && request.url === '/sign-out') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(portalForm)
      return
    }
    let body = ''
    request.on('data', (chunk: Buffer) => { body += chunk.toString('utf8') })
    request.on('end', () => {
      const fields = Object.fromEntries(new URLSearchParams(body).entries())
      samlifyIdp.parseLogoutResponse(samlifySp, 'post', { body: fields }).then((parsed) => {
        verifiedResponses.push(parsed.samlContent)
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>IdP</title><p id="idp-signed-out">Signed out everywhere</p>')
      }, () => {
        response.writeHead(400, { 'content-type': 'text/plain' }).end('LogoutResponse refused')
      })
    })
  })
  await new Promise<void>((resolve) => portal.listen(0, '127.0.0.1', resolve))
  portalOrigin = `http://localhost:${(portal.address() as AddressInfo).port}`
  idp.documents.set('/metadata-slo-post', () => withSingleLogoutService(idp.metadata(), `${portalOrigin}/slo-post`, POST_BINDING))

  subject = await buildSaml2App(idp, { MetadataUrl: `${idp.origin}/metadata-slo-post`, SigningKey: spKey.privateKeyPem, SigningCertificate: spKey.certificatePem, SignOutAtProvider: true })
  await subject.app.listen({ host: '127.0.0.1', port: 0 })
  appOrigin = `http://127.0.0.1:${(subject.app.server.address() as AddressInfo).port}`
  await waitForSaml2(subject.app)
  const metadata = (await subject.app.inject({ method: 'GET', url: '/Saml2/Metadata', headers: { host: new URL(appOrigin).host } })).body
  samlifySp = samlify.ServiceProvider({ metadata, wantLogoutResponseSigned: true })
  samlifyIdp = samlify.IdentityProvider({
    entityID: idp.entityId,
    wantLogoutResponseSigned: true,
    signingCert: idp.signingKey.certificatePem,
    privateKey: idp.signingKey.privateKeyPem,
    singleSignOnService: [{ Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect', Location: `${idp.origin}/sso` }]
  })
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await subject?.app.close()
  portal?.closeAllConnections()
  await new Promise<void>((resolve) => { if (portal === undefined) resolve(); else portal.close(() => { resolve() }) })
  await idp.stop()
})

test('sign-out at the IdP in Chromium: the LogoutRequest ends the session, the auto-posted LogoutResponse verifies at the IdP under the page\'s CSP', { timeout: 90_000 }, async () => {
  const context = await browser.newContext()
  const page = await context.newPage()
  const violations: string[] = []
  page.on('console', (message) => { if (/Content Security Policy/i.test(message.text())) violations.push(message.text()) })
  idp.nextUser = 'grace'
  await page.goto(`${appOrigin}/Account/Login`, WAIT)
  await page.click('a.provider[data-provider="Saml2"]', WAIT)
  await page.waitForURL((url) => url.origin === idp.origin && url.pathname === '/sso', WAIT)
  await page.click('#idp-continue', WAIT)
  await page.waitForURL(`${appOrigin}/`, WAIT)
  assert.equal(await page.textContent('#user-name', WAIT), 'Grace Hopper')

  const sessionIndex = /SessionIndex="([^"]+)"/.exec(Buffer.from(idp.issuedResponses.at(-1) ?? '', 'base64').toString('utf8'))?.[1] ?? ''
  const built = idp.buildLogoutRequest({ destination: `${appOrigin}/Saml2/Logout`, nameId: 'grace@example.test', sessionIndexes: [sessionIndex], relayState: 'portal' })
  portalForm = `<!doctype html><title>IdP portal</title><form method="post" action="${appOrigin}/Saml2/Logout">` +
    Object.entries(built.postFields).map(([name, value]) => `<input type="hidden" name="${name}" value="${value}">`).join('') +
    '<button type="submit" id="idp-sign-out">Sign out everywhere</button></form>'
  await page.goto(`${portalOrigin}/sign-out`, WAIT)
  await page.click('#idp-sign-out', WAIT)
  // No click on the app's page: its script submits the form to the IdP.
  await page.waitForSelector('#idp-signed-out', WAIT)
  assert.equal(new URL(page.url()).origin + new URL(page.url()).pathname, `${portalOrigin}/slo-post`)
  assert.deepEqual(violations, [])
  assert.equal(verifiedResponses.length, 1)
  assert.match(verifiedResponses[0] ?? '', new RegExp(`InResponseTo="${built.id}"`))
  assert.match(verifiedResponses[0] ?? '', /StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"\/>/)
  assert.equal(subject.logs.events('saml2.logout.request.succeeded').length, 1)

  // The session is over: the start page challenges again.
  await page.goto(`${appOrigin}/`, WAIT)
  assert.equal(new URL(page.url()).pathname === '/' && await page.$('#user-name') !== null, false)
  await context.close()
})
