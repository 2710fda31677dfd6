/**
 * One real IdP-initiated SAML Single Logout in headless Chromium, HTTP-POST both ways: sign in
 * through the test IdP; the IdP's portal page (another site) posts a signed LogoutRequest to
 * /Saml2/Logout; the app ends the session and answers with its auto-submitting page, whose own
 * Content-Security-Policy must let Chromium run the one hashed script and post to the IdP's
 * SingleLogoutService, where samlify verifies the SP-signed LogoutResponse.
 */
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { test } from 'node:test'
import { signInThroughIdp, useSaml2LogoutBrowserApp } from '../helpers/saml2/browser-app.js'
import { TestIdentityProvider } from '../helpers/saml2/identity-provider.js'
import { POST_BINDING, samlifyTestIdp } from '../helpers/saml2/samlify.js'

const WAIT = { timeout: 15_000 }

const idp = new TestIdentityProvider()
idp.users.set('grace', { nameId: 'grace@example.test', attributes: { displayname: ['Grace Hopper'] } })
let portalForm = ''
const verifiedResponses: string[] = []

// The IdP's portal (GET /sign-out: the page that starts Single Logout) and its HTTP-POST
// SingleLogoutService (POST /slo-post: samlify verifies the LogoutResponse), at app.sloOrigin.
const portal = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/sign-out') {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(portalForm)
    return
  }
  let body = ''
  request.on('data', (chunk: Buffer) => { body += chunk.toString('utf8') })
  request.on('end', () => {
    const fields = Object.fromEntries(new URLSearchParams(body).entries())
    app.samlifyIdp.parseLogoutResponse(app.samlifySp, 'post', { body: fields }).then((parsed) => {
      verifiedResponses.push(parsed.samlContent)
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>IdP</title><p id="idp-signed-out">Signed out everywhere</p>')
    }, () => {
      response.writeHead(400, { 'content-type': 'text/plain' }).end('LogoutResponse refused')
    })
  })
})
const app = useSaml2LogoutBrowserApp(idp, { sloServer: portal, sloPath: '/slo-post', binding: POST_BINDING, samlifyIdp: () => samlifyTestIdp(idp, { wantLogoutResponseSigned: true }) })

test('sign-out at the IdP in Chromium: the LogoutRequest ends the session, the auto-posted LogoutResponse verifies at the IdP under the page\'s CSP', { timeout: 90_000 }, async () => {
  const context = await app.browser.newContext()
  const page = await context.newPage()
  const violations: string[] = []
  page.on('console', (message) => { if (/Content Security Policy/i.test(message.text())) violations.push(message.text()) })
  await signInThroughIdp(page, idp, app.origin, 'grace')
  assert.equal(await page.textContent('#user-name', WAIT), 'Grace Hopper')

  const sessionIndex = /SessionIndex="([^"]+)"/.exec(Buffer.from(idp.issuedResponses.at(-1) ?? '', 'base64').toString('utf8'))?.[1] ?? ''
  const built = idp.buildLogoutRequest({ destination: `${app.origin}/Saml2/Logout`, nameId: 'grace@example.test', sessionIndexes: [sessionIndex], relayState: 'portal' })
  portalForm = `<!doctype html><title>IdP portal</title><form method="post" action="${app.origin}/Saml2/Logout">` +
    Object.entries(built.postFields).map(([name, value]) => `<input type="hidden" name="${name}" value="${value}">`).join('') +
    '<button type="submit" id="idp-sign-out">Sign out everywhere</button></form>'
  await page.goto(`${app.sloOrigin}/sign-out`, WAIT)
  await page.click('#idp-sign-out', WAIT)
  // No click on the app's page: its script submits the form to the IdP.
  await page.waitForSelector('#idp-signed-out', WAIT)
  assert.equal(new URL(page.url()).origin + new URL(page.url()).pathname, `${app.sloOrigin}/slo-post`)
  assert.deepEqual(violations, [])
  assert.equal(verifiedResponses.length, 1)
  assert.match(verifiedResponses[0] ?? '', new RegExp(`InResponseTo="${built.id}"`))
  assert.match(verifiedResponses[0] ?? '', /StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"\/>/)
  assert.equal(app.subject.logs.events('saml2.logout.request.succeeded').length, 1)

  // The session is over: the start page challenges again.
  await page.goto(`${app.origin}/`, WAIT)
  assert.equal(new URL(page.url()).pathname === '/' && await page.$('#user-name') !== null, false)
  await context.close()
})
