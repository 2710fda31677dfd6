/**
 * In real headless Chromium: a cross-site form post to /Account/Logout arrives without the Lax
 * session cookie, signs nobody out (a challenge is the answer), and the session stays intact.
 * The app is served as http://localhost:<port>, the attacker page as http://127.0.0.1:<port>:
 * different sites, so SameSite is enforced for real.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { buildTestApp, standardUser, type TestApp } from '../helpers/app.js'
import { launchChromium, type HeadlessBrowser } from '../helpers/providers/browser.js'

let t: TestApp
let browser: HeadlessBrowser
let attacker: Server
/** Where the app and the attacker's page listen: two origins, so the form post is cross-site. */
const origins = { app: '', attacker: '' }

before(async () => {
  t = await buildTestApp({
    configure: (app) => {
      // Test-only: lets the browser receive the session cookie the way it would after a provider callback.
      app.get('/test-only/browser-sign-in', { config: { allowAnonymous: true } }, async (_request, reply) => {
        await reply.signIn({ scheme: 'TestFlow', claims: standardUser() })
        return reply.redirect('/', 302)
      })
    }
  })
  await t.app.listen({ host: '127.0.0.1', port: 0 })
  origins.app = `http://localhost:${(t.app.server.address() as AddressInfo).port}`
  attacker = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html' })
    response.end(`<!doctype html><form id="f" method="post" action="${origins.app}/Account/Logout">
<input type="hidden" name="returnUrl" value="/"></form><script>document.getElementById('f').submit()</script>`)
  })
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve))
  origins.attacker = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await new Promise<void>((resolve) => { attacker?.close(() => { resolve() }) ?? resolve() })
  await t?.app.close()
})

test('a cross-site form post does not sign the user out', { timeout: 60_000 }, async () => {
  const context = await browser.newContext()
  const page = await context.newPage()
  await page.goto(`${origins.app}/test-only/browser-sign-in`, { timeout: 15_000 })
  const cookies = await context.cookies(origins.app)
  assert.ok(cookies.some((cookie) => cookie.name === '__Host-ProjectTemplate.Web.Authentication' && cookie.sameSite === 'Lax' && cookie.secure))
  assert.equal(await page.textContent('#user-name', { timeout: 5_000 }), 'Ada Lovelace', 'signed in before the attack')

  const logoutRequests: Array<{ cookie: string | undefined }> = []
  page.on('request', (request) => {
    if (request.url().endsWith('/Account/Logout')) logoutRequests.push({ cookie: request.headers().cookie })
  })
  await page.goto(`${origins.attacker}/`, { timeout: 15_000 })
  await page.waitForURL((url) => url.pathname === '/Account/Login', { timeout: 15_000 })
  assert.equal(logoutRequests.length, 1, 'the forged post reached the app')
  assert.ok(!(logoutRequests[0]?.cookie ?? '').includes('Web.Authentication'), 'without the Lax session cookie')

  await page.goto(`${origins.app}/`, { timeout: 15_000 })
  assert.equal(await page.textContent('#user-name', { timeout: 5_000 }), 'Ada Lovelace', 'session intact after the attack')
  await context.close()
})
