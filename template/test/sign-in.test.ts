/**
 * One sign-in end to end, as a user meets it: this app (core and routes) listening on loopback
 * with OpenID Connect pointed at a real OpenID Provider (oidc-provider) started by the test. The
 * browser is sent from `/` to the login page, follows the provider's link, signs in at the
 * provider, lands back on `/` with the session cookie, sees its claims, reaches the route its role
 * allows and is refused the one it does not, then signs out.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { HttpSession, startOidcProvider, throughIdpLogin, waitFor, type TestOidcProvider } from '@project-template/core/testing'
import { build } from './helpers/app.js'

const CLIENT_ID = 'project-template-web'
const CLIENT_SECRET = 'oidc-client-secret-for-the-app-test'

let idp: TestOidcProvider
let app: FastifyInstance
let origin: string
const cleanups: Array<() => Promise<void>> = []

before(async () => {
  idp = await startOidcProvider({
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    accounts: { grace: { name: 'Grace Hopper', email: 'grace@example.test', roles: ['Administrator'] } }
  })
  // Development: an http provider on loopback is accepted, as an operator would run it locally.
  const built = await build({ after: (fn) => { cleanups.push(fn as () => Promise<void>) } }, {
    nodeEnv: 'development',
    testSignIn: false,
    settings: {
      Authentication: {
        DefaultChallengeScheme: 'OpenIdConnect',
        Providers: { OpenIdConnect: { Enabled: true, Authority: idp.issuer, ClientId: CLIENT_ID, ClientSecret: CLIENT_SECRET } }
      }
    }
  })
  app = built.app
  await app.listen({ host: '127.0.0.1', port: 0 })
  origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  await idp.configure(`${origin}/signin-oidc`)
  await waitFor(async () => {
    const response = await fetch(`${origin}/health/ready`)
    await response.arrayBuffer()
    return response.status === 200
  }, 'the app to become ready', 15_000, 50)
})

after(async () => {
  for (const cleanup of cleanups) await cleanup()
  await idp?.close()
})

test('a user signs in through OpenID Connect, uses the app within their policies, and signs out', async () => {
  const browser = new HttpSession()

  // The starter page challenges with the default challenge scheme: straight to the provider.
  const start = await browser.request(`${origin}/`)
  assert.equal(start.response.status, 302)
  assert.equal(start.location?.origin, idp.issuer)
  assert.equal(start.location?.searchParams.get('redirect_uri'), `${origin}/signin-oidc`)

  const callback = await throughIdpLogin(browser, start.location!, origin, 'grace')
  assert.equal(callback.pathname, '/signin-oidc')
  const completed = await browser.request(callback)
  assert.equal(completed.response.status, 302)
  assert.equal(completed.location?.pathname, '/')

  const home = await browser.request(`${origin}/`)
  assert.equal(home.response.status, 200)
  assert.match(home.body, /<span id="user-name">Grace Hopper<\/span>/)
  assert.match(home.body, /Signed in with OpenID Connect\./)
  assert.ok(home.body.includes(`<tr><td>application:role</td><td>Administrator</td><td>${idp.issuer}</td></tr>`))

  const admin = await browser.request(`${origin}/api/application-information/administration`, { accept: 'application/json' })
  assert.equal(admin.response.status, 200)
  assert.deepEqual(JSON.parse(admin.body), { subject: 'grace', name: 'Grace Hopper' })
  const management = await browser.request(`${origin}/api/application-information/management`, { accept: 'application/json' })
  assert.equal(management.response.status, 403)

  const token = /name="__RequestVerificationToken" value="([^"]+)"/.exec(home.body)?.[1]
  assert.ok(token !== undefined)
  const logout = await browser.request(`${origin}/Account/Logout`, { method: 'POST', form: { __RequestVerificationToken: token } })
  assert.ok([200, 302].includes(logout.response.status))
  const afterLogout = await browser.request(`${origin}/api/application-information`, { accept: 'application/json' })
  assert.equal(afterLogout.response.status, 401)
})
