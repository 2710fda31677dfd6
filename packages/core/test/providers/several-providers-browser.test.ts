/**
 * End to end in headless Chromium with two named schemes beside each other: from the login page
 * through a named OpenID Connect scheme (Schemes:Staff, oidc-provider on http://localhost) and
 * through a named SAML2 scheme (Schemes:Acme, the test IdP's auto-post page), each back on the
 * app with a session whose principal names that scheme and its issuer; then the e-mail field of
 * the login page picks the scheme by domain.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import type { BrowserContext, Page } from 'playwright-core'
import { launchChromium, type HeadlessBrowser, loginAtOidcProvider } from '../helpers/providers/browser.js'
import { startOidcIdp, type OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startProviderApp, waitUntilReady, type ListeningApp } from '../helpers/providers/provider-app.js'
import { TestIdentityProvider } from '../helpers/saml2/identity-provider.js'
import { storedSession } from '../helpers/app.js'
import { identityOfTicket } from '../../src/session/user-identity.js'

const SP_ENTITY_ID = 'http://127.0.0.1/sp-acme'

let oidc: OidcIdp
const saml = new TestIdentityProvider('http://localhost/idp-acme')
let app: ListeningApp
let browser: HeadlessBrowser
const contexts: BrowserContext[] = []

before(async () => {
  oidc = await startOidcIdp({ clientId: 'staff-client', clientSecret: 'staff-secret-PLANTED-81', accounts: { ada: { name: 'Ada at Staff' } } })
  await saml.start()
  saml.users.set('ada', { nameId: 'ada', attributes: { name: ['Ada at Acme'] } })
  saml.nextUser = 'ada'
  app = await startProviderApp({
    Authentication: {
      Schemes: {
        Staff: { Type: 'OpenIdConnect', DisplayName: 'Staff sign-in', Authority: oidc.issuer, ClientId: 'staff-client', ClientSecret: 'staff-secret-PLANTED-81', Domains: ['staff.example'] },
        Acme: { Type: 'Saml2', DisplayName: 'Acme SSO', EntityId: SP_ENTITY_ID, MetadataUrl: saml.metadataUrl, Domains: ['acme.example'] }
      }
    }
  })
  await oidc.configure(`${app.origin}/signin-staff`)
  await waitUntilReady(app.origin)
  browser = await launchChromium()
})

after(async () => {
  for (const context of contexts) await context.close().catch(() => {})
  await browser?.close()
  await app?.close()
  await oidc?.close()
  await saml.stop()
})

async function newPage (): Promise<{ page: Page, context: BrowserContext }> {
  const context = await browser.newContext()
  contexts.push(context)
  return { page: await context.newPage(), context }
}

async function identityIn (context: BrowserContext): Promise<unknown> {
  const cookie = (await context.cookies(app.origin)).map((entry) => `${entry.name}=${entry.value}`).join('; ')
  const ticket = await storedSession(app.app, app.keyRing, cookie)
  return ticket === undefined ? undefined : identityOfTicket(ticket)
}

test('Chromium: the login page lists both named schemes; a named OpenID Connect scheme signs in', async () => {
  const { page, context } = await newPage()
  await page.goto(`${app.origin}/Account/Login`)
  assert.deepEqual(await page.$$eval('a.provider', (links) => links.map((link) => link.textContent)), ['Acme SSO', 'Staff sign-in'])
  await page.click('a.provider[data-provider="Staff"]')
  await loginAtOidcProvider(page, oidc.issuer, 'ada')
  await page.waitForURL(`${app.origin}/`)
  assert.equal(await page.textContent('#user-name'), 'Ada at Staff')
  assert.deepEqual(await identityIn(context), { scheme: 'Staff', issuer: oidc.issuer, subject: 'ada' })
})

test('Chromium: a named SAML2 scheme signs in through its own ACS', async () => {
  const { page, context } = await newPage()
  await page.goto(`${app.origin}/Account/Login`)
  await page.click('a.provider[data-provider="Acme"]')
  await page.waitForURL((url) => url.origin === saml.origin && url.pathname === '/sso')
  assert.equal(saml.requests.at(-1)?.acsUrl, `${app.origin}/Saml2/Acme/Acs`)
  await page.click('#idp-continue')
  await page.waitForURL(`${app.origin}/`)
  assert.deepEqual(await identityIn(context), { scheme: 'Acme', issuer: saml.entityId, subject: 'ada' })
})

test('Chromium: the login page\'s e-mail field starts the sign-in at the scheme serving the domain', async () => {
  const { page, context } = await newPage()
  const authorizationRequests: URL[] = []
  page.on('request', (request) => { const url = new URL(request.url()); if (url.origin === new URL(oidc.issuer).origin && url.searchParams.has('client_id')) authorizationRequests.push(url) })
  await page.goto(`${app.origin}/Account/Login?ReturnUrl=%2FAccount%2FAccessDenied`)
  await page.fill('#email', 'ada@STAFF.example')
  await page.click('form.email-discovery button[type="submit"]')
  await page.waitForURL((url) => url.origin === new URL(oidc.issuer).origin)
  await loginAtOidcProvider(page, oidc.issuer, 'ada')
  await page.waitForURL(`${app.origin}/Account/AccessDenied`)
  assert.equal(authorizationRequests[0]?.searchParams.get('login_hint'), 'ada@STAFF.example', 'the address reaches the provider as login_hint')
  assert.deepEqual(await identityIn(context), { scheme: 'Staff', issuer: oidc.issuer, subject: 'ada' })

  const { page: other } = await newPage()
  await other.goto(`${app.origin}/Account/Login`)
  await other.fill('#email', 'ada@nowhere.example')
  await other.click('form.email-discovery button[type="submit"]')
  await other.waitForURL((url) => url.pathname === '/External/Challenge')
  assert.match(await other.textContent('p.alert') ?? '', /No sign-in is set up for that e-mail address/)
})
