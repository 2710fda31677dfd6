/**
 * Which routes the rate limits cover (issue 29, item 2), by behaviour: with every group's limit
 * set to 1, an app with every provider enabled (OpenID Connect with RP-initiated and back-channel
 * logout against oidc-provider, SAML2 against the test IdP, the three vendor slots against an
 * OAuth mock) answers the second request from one client with 429 on each limited endpoint, and
 * never on the pages outside the groups. Guards the route metadata (`config.rateLimitBucket`)
 * wherever providers register their routes. (The OpenID Connect callback's POST form exists only
 * with ResponseMode form_post; it carries the same metadata.)
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { startOidcIdp, type OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startVendorIdp, type VendorIdp } from '../helpers/providers/oauth-vendor-idp.js'
import { startProviderApp, waitUntilReady, type ListeningApp } from '../helpers/providers/provider-app.js'
import { SP_ENTITY_ID, waitForSaml2 } from '../helpers/saml2/app.js'
import { TestIdentityProvider } from '../helpers/saml2/identity-provider.js'
import { createSigningKey } from '../helpers/saml2/certificates.js'
import { buildTestApp, signIn, standardUser } from '../helpers/app.js'

const LIMITED: ReadonlyArray<readonly ['GET' | 'POST', string]> = [
  ['GET', '/External/Challenge?provider=Nope'],
  ['GET', '/signin-oidc'],
  ['GET', '/signout-callback-oidc'],
  ['POST', '/backchannel-logout-oidc'],
  ['GET', '/signin-vendora'],
  ['GET', '/signin-vendorb'],
  ['GET', '/signin-vendorc'],
  ['POST', '/Saml2/Acs'],
  ['GET', '/Saml2/Logout'],
  ['POST', '/Saml2/Logout']
]
const UNLIMITED = ['/Account/Login', '/Account/AccessDenied', '/health/live', '/Saml2/Metadata']

const saml = new TestIdentityProvider()
let oidc: OidcIdp
let vendor: VendorIdp
let app: ListeningApp

before(async () => {
  await saml.start()
  const spKey = createSigningKey('sp-signing')
  oidc = await startOidcIdp({ clientId: 'routes-client', clientSecret: 'routes-secret-PLANTED-3c9', accounts: { alice: {} } })
  vendor = await startVendorIdp({ id: 'v-1' })
  app = await startProviderApp({
    RateLimits: { ChallengePerWindow: 1, CallbackPerWindow: 1, SignOutPerWindow: 1, LogoutReceiverPerWindow: 1 },
    Authentication: {
      Providers: {
        OpenIdConnect: { Enabled: true, Authority: oidc.issuer, ClientId: 'routes-client', ClientSecret: 'routes-secret-PLANTED-3c9', SignOutAtProvider: true, BackChannelLogout: true },
        Saml2: { Enabled: true, EntityId: SP_ENTITY_ID, MetadataUrl: saml.metadataUrl, SignOutAtProvider: true, SigningKey: spKey.privateKeyPem, SigningCertificate: spKey.certificatePem },
        VendorA: vendor.settings('client-a', 'secret-a'),
        VendorB: vendor.settings('client-b', 'secret-b'),
        VendorC: vendor.settings('client-c', 'secret-c')
      }
    }
  })
  await oidc.configure(`${app.origin}/signin-oidc`, [`${app.origin}/signout-callback-oidc`])
  await waitUntilReady(app.origin)
  await waitForSaml2(app.app)
})
after(async () => {
  await app?.close()
  await oidc?.close()
  await vendor?.close()
  await saml.stop()
})

/** A request from `client` (the connection's address: no trusted proxy here). */
const send = async (method: 'GET' | 'POST', url: string, client = '10.0.0.1'): Promise<number> => (await app.app.inject({
  method,
  url,
  remoteAddress: client,
  headers: method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {},
  ...(method === 'POST' ? { payload: '' } : {})
})).statusCode

test('every sign-in, callback, ACS, sign-out and logout receiver endpoint answers 429 over its limit', async () => {
  // A client of its own per endpoint: the endpoints of one group share the client's count.
  for (const [index, [method, url]] of LIMITED.entries()) {
    const client = `10.1.0.${index + 1}`
    assert.notEqual(await send(method, url, client), 429, `${method} ${url} is limited at the first request`)
    assert.equal(await send(method, url, client), 429, `${method} ${url} is not rate limited`)
  }
})

test('the endpoints of one group share a client\'s count; another group counts apart', async () => {
  assert.notEqual(await send('GET', '/signin-oidc', '10.2.0.1'), 429)
  assert.equal(await send('POST', '/Saml2/Acs', '10.2.0.1'), 429, 'callback group')
  assert.notEqual(await send('GET', '/External/Challenge?provider=Nope', '10.2.0.1'), 429, 'challenge group')
})

test('logout endpoints count a signed-in user\'s requests (an anonymous one is challenged first)', async (t) => {
  const subject = await buildTestApp({ settings: { RateLimits: { SignOutPerWindow: 1 } } })
  t.after(async () => { await subject.app.close() })
  const cookie = await signIn(subject.app, standardUser())
  for (const url of ['/Account/Logout', '/Account/LogoutEverywhere']) {
    // Without an anti-forgery token: refused (400) after it is counted, so the session stays.
    const first = await subject.app.inject({ method: 'POST', url, headers: { cookie }, payload: {} })
    assert.equal(first.statusCode, url === '/Account/Logout' ? 400 : 429, url)
  }
  const again = await subject.app.inject({ method: 'POST', url: '/Account/Logout', headers: { cookie }, payload: {} })
  assert.equal(again.statusCode, 429)
})

test('pages outside the groups are not limited', async () => {
  for (const url of UNLIMITED) {
    const statuses = [await send('GET', url), await send('GET', url), await send('GET', url)]
    assert.ok(!statuses.includes(429), `${url}: ${statuses.join(' ')}`)
  }
})
