/**
 * Several identity providers at once (issue 27): two real OpenID Providers (oidc-provider) and two
 * SAML IdPs (the TestIdentityProvider), each asserting the same subject `ada`, behind one app over
 * real HTTP. The contract sections (Providers:OpenIdConnect, Providers:Saml2) and two named
 * schemes (Schemes:Partners of Type OpenIdConnect, Schemes:Customer of Type Saml2) are set as
 * environment variables (`ProjectTemplate__Authentication__Schemes__Partners__Type`, ...). Each
 * sign-in yields a principal naming its own provider and issuer, four distinct users; sign-out
 * everywhere, RP-initiated logout, back-channel logout and SAML Single Logout in both directions
 * reach the provider that signed the session in and leave the others; e-mail discovery routes by
 * domain.
 */
import assert from 'node:assert/strict'
import { get, type IncomingHttpHeaders } from 'node:http'
import { after, before, describe, test } from 'node:test'
import { findPlanted, HttpSession, sessionCookiesSet } from '../helpers/providers/http-session.js'
import { throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import { startOidcIdp, type OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startProviderApp, waitUntilReady, type ListeningApp } from '../helpers/providers/provider-app.js'
import { antiforgeryTokenIn } from '../helpers/cookies.js'
import { storedSession } from '../helpers/app.js'
import { createSigningKey } from '../helpers/saml2/certificates.js'
import { readAuthnRequest, TestIdentityProvider } from '../helpers/saml2/identity-provider.js'
import { withSingleLogoutService } from '../helpers/saml2/samlify.js'
import { identityOfTicket, userKeyOf } from '../../src/session/user-identity.js'
import type { AuthenticationTicket } from '../../src/session/principal.js'

const SECRET_A = 'several-oidc-a-secret-PLANTED-71'
const SECRET_B = 'several-oidc-b-secret-PLANTED-72'
const SP_A = 'http://127.0.0.1/sp-contract'
const SP_B = 'http://127.0.0.1/sp-customer'
const EVENT = 'http://schemas.openid.net/event/backchannel-logout'

/** One GET with exactly these headers (bounded). */
async function rawGet (url: string, headers: Record<string, string>): Promise<{ status: number, headers: IncomingHttpHeaders, body: string }> {
  return await new Promise((resolve, reject) => {
    const request = get(url, { headers, timeout: 10_000 }, (response) => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => { body += chunk })
      response.on('end', () => { resolve({ status: response.statusCode ?? 0, headers: response.headers, body }) })
    })
    request.on('timeout', () => { request.destroy(new Error('timeout')) })
    request.on('error', reject)
  })
}

describe('two OpenID providers and two SAML IdPs at once, the same subject at each', () => {
  let oidcA: OidcIdp
  let oidcB: OidcIdp
  const samlA = new TestIdentityProvider('http://localhost/idp-contract')
  const samlB = new TestIdentityProvider('http://localhost/idp-customer')
  const spKey = createSigningKey('customer-sp-signing')
  let app: ListeningApp

  before(async () => {
    const bcl = (path: string) => (redirectUri: string) => `${new URL(redirectUri).origin}${path}`
    oidcA = await startOidcIdp({ clientId: 'client-a', clientSecret: SECRET_A, accounts: { ada: { name: 'Ada at A' } }, backChannelLogoutUri: bcl('/backchannel-logout-oidc') })
    oidcB = await startOidcIdp({ clientId: 'client-b', clientSecret: SECRET_B, accounts: { ada: { name: 'Ada at B' } }, backChannelLogoutUri: bcl('/backchannel-logout-partners') })
    for (const idp of [samlA, samlB]) {
      await idp.start()
      idp.users.set('ada', { nameId: 'ada', attributes: {} })
      idp.nextUser = 'ada'
    }
    samlB.documents.set('/metadata-slo', () => withSingleLogoutService(samlB.metadata(), `${samlB.origin}/slo`))
    app = await startProviderApp({
      Authentication: {
        Providers: {
          OpenIdConnect: { Enabled: true, Authority: oidcA.issuer, ClientId: 'client-a', ClientSecret: SECRET_A, BackChannelLogout: true, Domains: ['a.example'] },
          Saml2: { Enabled: true, EntityId: SP_A, MetadataUrl: samlA.metadataUrl, DisplayName: 'Contract SAML' }
        },
        Schemes: {
          Partners: { Type: 'OpenIdConnect', DisplayName: 'Partner sign-in', Authority: oidcB.issuer, ClientId: 'client-b', ClientSecret: SECRET_B, SignOutAtProvider: true, BackChannelLogout: true, Domains: ['Partner.Example'] },
          Customer: { Type: 'Saml2', DisplayName: 'Customer SSO', EntityId: SP_B, MetadataUrl: `${samlB.origin}/metadata-slo`, SigningKey: spKey.privateKeyPem, SigningCertificate: spKey.certificatePem, SignOutAtProvider: true, Domains: ['customer.example'] }
        }
      }
    })
    await oidcA.configure(`${app.origin}/signin-oidc`)
    await oidcB.configure(`${app.origin}/signin-partners`, [`${app.origin}/signout-callback-partners`])
    await waitUntilReady(app.origin)
  })
  after(async () => {
    await app?.close()
    await oidcA?.close()
    await oidcB?.close()
    await samlA.stop()
    await samlB.stop()
  })

  async function signInOidc (session: HttpSession, scheme: string): Promise<void> {
    const start = await session.request(`${app.origin}/External/Challenge?provider=${scheme}`)
    assert.equal(start.response.status, 302)
    const callback = await session.request(await throughIdpLogin(session, start.location!, app.origin, 'ada'))
    assert.equal(sessionCookiesSet(callback.response).length, 1, `${scheme}: signed in`)
  }

  async function signInSaml (session: HttpSession, scheme: string, idp: TestIdentityProvider, audience: string): Promise<string> {
    const start = await session.request(`${app.origin}/External/Challenge?provider=${scheme}`)
    assert.equal(start.response.status, 302)
    assert.equal(start.location?.origin, idp.origin, `${scheme}: the AuthnRequest goes to its own IdP`)
    const seen = readAuthnRequest(start.location!.href)
    assert.equal(seen.issuer, audience, `${scheme}: its own SP entity id`)
    const sessionIndex = `_index-${scheme}-${Math.random().toString(36).slice(2)}`
    const SAMLResponse = idp.buildResponse({ acsUrl: seen.acsUrl, audience, user: { nameId: 'ada', attributes: {} }, inResponseTo: seen.id, sessionIndex })
    const acs = await session.request(seen.acsUrl, { method: 'POST', form: { SAMLResponse, RelayState: seen.relayState ?? '' } })
    assert.equal(sessionCookiesSet(acs.response).length, 1, `${scheme}: signed in`)
    return sessionIndex
  }

  async function ticketOf (session: HttpSession): Promise<AuthenticationTicket | undefined> {
    return await storedSession(app.app, app.keyRing, session.jar.header(new URL(app.origin)))
  }

  async function signedIn (session: HttpSession): Promise<boolean> {
    const { response } = await session.request(`${app.origin}/api/application-information`, { accept: 'application/json' })
    assert.ok(response.status === 200 || response.status === 401, `status ${response.status}`)
    return response.status === 200
  }

  async function postForm (session: HttpSession, path: string, fields: Record<string, string> = {}) {
    const home = await session.request(`${app.origin}/`)
    const token = antiforgeryTokenIn(home.body)
    assert.ok(token !== undefined, 'the starter page carries an anti-forgery token')
    return await session.request(`${app.origin}${path}`, { method: 'POST', form: { __RequestVerificationToken: token, ...fields } })
  }

  async function fourSessions (): Promise<Record<'oidc' | 'partners' | 'saml' | 'customer', HttpSession> & { customerIndex: string }> {
    const sessions = { oidc: new HttpSession(), partners: new HttpSession(), saml: new HttpSession(), customer: new HttpSession() }
    await signInOidc(sessions.oidc, 'OpenIdConnect')
    await signInOidc(sessions.partners, 'Partners')
    await signInSaml(sessions.saml, 'Saml2', samlA, SP_A)
    const customerIndex = await signInSaml(sessions.customer, 'Customer', samlB, SP_B)
    return { ...sessions, customerIndex }
  }

  test('readiness and the login page list all four providers by DisplayName, with the e-mail field', async () => {
    const ready = await fetch(`${app.origin}/health/ready`)
    assert.equal(ready.status, 200)
    const login = await (await fetch(`${app.origin}/Account/Login`)).text()
    for (const [scheme, label] of [['OpenIdConnect', 'OpenID Connect'], ['Partners', 'Partner sign-in'], ['Saml2', 'Contract SAML'], ['Customer', 'Customer SSO']]) {
      assert.match(login, new RegExp(`data-provider="${scheme}" href="/External/Challenge\\?provider=${scheme}">${label}</a>`))
    }
    assert.match(login, /<form class="email-discovery" method="get" action="\/External\/Challenge">/)
    assert.match(login, /<input id="email" type="email" name="email"/)
  })

  test('each SAML scheme publishes its own SP metadata: its entity id, ACS and logout endpoint', async () => {
    const contract = await (await fetch(`${app.origin}/Saml2/Metadata`)).text()
    const customer = await (await fetch(`${app.origin}/Saml2/Customer/Metadata`)).text()
    assert.match(contract, new RegExp(`entityID="${SP_A}"`))
    assert.match(contract, new RegExp(`Location="${app.origin}/Saml2/Acs"`))
    assert.doesNotMatch(contract, /SingleLogoutService/)
    assert.match(customer, new RegExp(`entityID="${SP_B}"`))
    assert.match(customer, new RegExp(`Location="${app.origin}/Saml2/Customer/Acs"`))
    assert.match(customer, new RegExp(`SingleLogoutService Binding="[^"]+" Location="${app.origin}/Saml2/Customer/Logout"`))
  })

  test('all four sign in; each principal names its provider and issuer; the same subject is four users', async () => {
    const sessions = await fourSessions()
    const expected: Array<[HttpSession, string, string]> = [
      [sessions.oidc, 'OpenIdConnect', oidcA.issuer],
      [sessions.partners, 'Partners', oidcB.issuer],
      [sessions.saml, 'Saml2', samlA.entityId],
      [sessions.customer, 'Customer', samlB.entityId]
    ]
    const userKeys = new Set<string>()
    for (const [session, scheme, issuer] of expected) {
      const ticket = await ticketOf(session)
      assert.ok(ticket !== undefined, scheme)
      const identity = identityOfTicket(ticket)
      assert.deepEqual(identity, { scheme, issuer, subject: 'ada' })
      userKeys.add(userKeyOf(identity))
    }
    assert.equal(userKeys.size, 4)
    const signedInEvents = app.logs.events('external.sign_in.succeeded').slice(-4)
    assert.deepEqual(signedInEvents.map((record) => [record.provider, record.issuer]), expected.map(([, scheme, issuer]) => [scheme, issuer]))
  })

  test('sign-out everywhere from one provider\'s session ends that user\'s sessions only', async () => {
    const sessions = await fourSessions()
    const second = new HttpSession()
    await signInOidc(second, 'Partners')
    const response = await postForm(sessions.partners, '/Account/LogoutEverywhere')
    assert.ok(response.response.status < 400, `status ${response.response.status}`)
    assert.equal(await signedIn(sessions.partners), false)
    assert.equal(await signedIn(second), false, 'the other Partners session of the same user ends too')
    for (const session of [sessions.oidc, sessions.saml, sessions.customer]) assert.equal(await signedIn(session), true, 'the other providers\' ada stays')
  })

  test('RP-initiated logout continues at the provider that signed the session in', async () => {
    const sessions = await fourSessions()
    const partners = await postForm(sessions.partners, '/Account/Logout')
    assert.equal(partners.response.status, 200)
    const href = /<a id="continue-sign-out" href="([^"]+)">/.exec(partners.body)?.[1]
    assert.ok(href !== undefined)
    const endSession = new URL(href.replaceAll('&amp;', '&'))
    assert.equal(`${endSession.origin}${endSession.pathname}`, `${oidcB.issuer}/session/end`)
    assert.equal(endSession.searchParams.get('post_logout_redirect_uri'), `${app.origin}/signout-callback-partners`)
    assert.equal(endSession.searchParams.get('client_id'), 'client-b')
    // The contract OpenIdConnect provider has no SignOutAtProvider: its sign-out stays local.
    const contract = await postForm(sessions.oidc, '/Account/Logout')
    assert.equal(contract.response.status, 302)
    assert.equal(contract.location?.origin, app.origin)
    for (const session of [sessions.saml, sessions.customer]) assert.equal(await signedIn(session), true)
  })

  test('back-channel logout: a provider\'s logout token ends its own sessions, and is refused at the other provider\'s endpoint', async () => {
    const sessions = await fourSessions()
    const token = await oidcB.sign({ iss: oidcB.issuer, aud: 'client-b', iat: Math.floor(Date.now() / 1000), jti: `jti-${Date.now()}`, events: { [EVENT]: {} }, sub: 'ada' }, { typ: 'logout+jwt' })
    const post = async (path: string): Promise<number> => (await fetch(`${app.origin}${path}`, { method: 'POST', body: new URLSearchParams({ logout_token: token }), signal: AbortSignal.timeout(10_000) })).status
    assert.equal(await post('/backchannel-logout-oidc'), 400, 'OpenIdConnect refuses Partners\' token')
    assert.equal(await signedIn(sessions.partners), true)
    assert.equal(await post('/backchannel-logout-partners'), 200)
    assert.equal(await signedIn(sessions.partners), false)
    for (const session of [sessions.oidc, sessions.saml, sessions.customer]) assert.equal(await signedIn(session), true, 'ada at the other providers stays')
  })

  test('SAML Single Logout from the SP goes to the Customer IdP; the IdP\'s LogoutRequest ends only Customer sessions', async () => {
    const sessions = await fourSessions()
    const logout = await postForm(sessions.customer, '/Account/Logout')
    assert.equal(logout.response.status, 200)
    const href = /<a id="continue-sign-out" href="([^"]+)">/.exec(logout.body)?.[1]
    assert.ok(href?.startsWith(`${samlB.origin}/slo?`), 'the LogoutRequest goes to the Customer IdP')
    // The contract Saml2 scheme has no SignOutAtProvider: local only.
    const contract = await postForm(sessions.saml, '/Account/Logout')
    assert.equal(contract.response.status, 302)

    const again = await fourSessions()
    const built = samlB.buildLogoutRequest({ destination: `${app.origin}/Saml2/Customer/Logout`, nameId: 'ada', sessionIndexes: [again.customerIndex] })
    // Sent to the contract Saml2 scheme: it has no logout endpoint (not a route).
    const wrong = await fetch(`${app.origin}${built.redirectPath.replace('/Saml2/Customer/Logout', '/Saml2/Logout')}`, { redirect: 'manual' })
    assert.equal(wrong.status, 302)
    assert.ok(wrong.headers.get('location')?.startsWith('/Account/Login'))
    const right = await fetch(`${app.origin}${built.redirectPath}`, { redirect: 'manual' })
    assert.equal(right.status, 302)
    assert.ok(right.headers.get('location')?.startsWith(`${samlB.origin}/slo?`), 'the LogoutResponse goes back to the Customer IdP')
    assert.equal(await signedIn(again.customer), false)
    for (const session of [again.oidc, again.partners, again.saml]) assert.equal(await signedIn(session), true, 'ada at the other providers stays')
  })

  test('discovery by e-mail domain: the provider whose Domains hold it, login_hint to OpenID Connect; unknown: the login page; malformed: 400', async () => {
    const partners = await fetch(`${app.origin}/External/Challenge?email=${encodeURIComponent('Grace@partner.EXAMPLE')}&returnUrl=%2Forders`, { redirect: 'manual' })
    assert.equal(partners.status, 302)
    const authorize = new URL(partners.headers.get('location') ?? '')
    assert.equal(authorize.origin, new URL(oidcB.issuer).origin)
    assert.equal(authorize.searchParams.get('login_hint'), 'Grace@partner.EXAMPLE')
    assert.equal(authorize.searchParams.get('client_id'), 'client-b')

    const contract = await fetch(`${app.origin}/External/Challenge?email=ada@a.example`, { redirect: 'manual' })
    assert.equal(new URL(contract.headers.get('location') ?? '').searchParams.get('client_id'), 'client-a')

    const customer = await fetch(`${app.origin}/External/Challenge?email=ada@customer.example`, { redirect: 'manual' })
    assert.equal(customer.status, 302)
    assert.equal(readAuthnRequest(customer.headers.get('location') ?? '').issuer, SP_B)

    // A browser's navigation (the login page's e-mail form) gets a no-store page continuing at provider= with the hint:
    // a redirect chain after a form submission would meet the form-action 'self' policy.
    // (node:http: fetch sets Sec-Fetch-Mode itself.)
    const navigate = await rawGet(`${app.origin}/External/Challenge?email=grace@partner.example&returnUrl=%2Forders`, { 'sec-fetch-mode': 'navigate', accept: 'text/html' })
    assert.equal(navigate.status, 200)
    assert.equal(navigate.headers['cache-control'], 'no-store')
    const next = /<a id="continue-sign-in" href="([^"]+)">/.exec(navigate.body)?.[1]?.replaceAll('&amp;', '&')
    assert.equal(next, '/External/Challenge?provider=Partners&login_hint=grace%40partner.example&returnUrl=%2Forders')
    const hop = await fetch(`${app.origin}${next ?? ''}`, { redirect: 'manual' })
    assert.equal(new URL(hop.headers.get('location') ?? '').searchParams.get('login_hint'), 'grace@partner.example')
    const badHint = await fetch(`${app.origin}/External/Challenge?provider=Partners&login_hint=nobody`, { redirect: 'manual', headers: { accept: 'application/json' } })
    assert.equal(badHint.status, 400)

    const unknown = await fetch(`${app.origin}/External/Challenge?email=ada@elsewhere.example`, { redirect: 'manual' })
    assert.equal(unknown.status, 200)
    const page = await unknown.text()
    assert.match(page, /No sign-in is set up for that e-mail address/)
    for (const domain of ['partner.example', 'customer.example', 'a.example']) assert.equal(page.toLowerCase().includes(domain), false, 'no domain is revealed')

    for (const malformed of ['not-an-address', 'a@b', '@partner.example', 'a@partner.example@x.example']) {
      const response = await fetch(`${app.origin}/External/Challenge?email=${encodeURIComponent(malformed)}`, { redirect: 'manual', headers: { accept: 'application/json' } })
      assert.equal(response.status, 400, malformed)
      assert.equal((await response.json() as { code: string }).code, 'APP_ERR_EMAIL_INVALID')
    }
    const offsite = await fetch(`${app.origin}/External/Challenge?email=ada@partner.example&returnUrl=${encodeURIComponent('https://evil.example/')}`, { redirect: 'manual' })
    assert.equal(offsite.status, 400, 'the return-URL rules of provider=')
    assert.deepEqual(findPlanted(app.logs.text(), [SECRET_A, SECRET_B, spKey.privateKeyPem.split('\n')[1]]), [])
  })
})
