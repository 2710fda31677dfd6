/**
 * Identity is (scheme, issuer, subject) (issue 23, item 1): a user of a real OpenID provider
 * (oidc-provider on loopback) and a user of the SAML test IdP whose subject values are equal
 * (`shared-user@example.test`, the OIDC `sub` and the SAML NameID) are two users in every per-user
 * operation: the principal, the session index, "sign out everywhere" from either side,
 * `app.session.revokeUser`, and OpenID Connect back-channel logout by `sub`. Before the fix the
 * index was keyed on the bare subject and "sign out everywhere" from one ended the other's sessions.
 */
import { randomUUID } from 'node:crypto'
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { antiforgeryFor, cookieHeaderFrom } from '../helpers/app.js'
import { HttpSession, isSessionCookie } from '../helpers/providers/http-session.js'
import { throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import { startOidcIdp, type OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startProviderApp, waitUntilReady, type ListeningApp } from '../helpers/providers/provider-app.js'
import { postToAcs, setsSessionCookie, SP_ENTITY_ID, startSaml2SignIn, waitForSaml2 } from '../helpers/saml2/app.js'
import { TestIdentityProvider } from '../helpers/saml2/identity-provider.js'
import { legacySubjectIndexKey, userIndexKey } from '../../src/session/session-store.js'
import { openSessionReference } from '../../src/session/ticket.js'
import { userKeyOf, type UserIdentity } from '../../src/session/user-identity.js'

const SHARED = 'shared-user@example.test'
const CLIENT_ID = 'identity-client'
const WHOAMI = '/test-only/whoami'
const BACK_CHANNEL_PATH = '/backchannel-logout-oidc'
const BACK_CHANNEL_EVENT = 'http://schemas.openid.net/event/backchannel-logout'

interface WhoAmI { scheme: string, issuer: string | null, subject: string | null, userKey: string | null, identity: UserIdentity | null }

describe('two providers issuing the same subject value are two users', () => {
  const saml = new TestIdentityProvider('https://saml-idp.example.test/metadata')
  let oidc: OidcIdp
  let app: ListeningApp
  let oidcUser: UserIdentity
  let samlUser: UserIdentity

  before(async () => {
    await saml.start()
    oidc = await startOidcIdp({
      clientId: CLIENT_ID,
      clientSecret: 'identity-client-secret',
      accounts: { [SHARED]: { name: 'Shared at the OpenID provider' } },
      backChannelLogoutUri: (redirectUri) => `${new URL(redirectUri).origin}${BACK_CHANNEL_PATH}`
    })
    app = await startProviderApp({
      Authentication: {
        Providers: {
          OpenIdConnect: { Enabled: true, Authority: oidc.issuer, ClientId: CLIENT_ID, ClientSecret: 'identity-client-secret', BackChannelLogout: true },
          Saml2: { Enabled: true, EntityId: SP_ENTITY_ID, MetadataUrl: saml.metadataUrl }
        }
      }
    }, (instance) => {
      instance.get(WHOAMI, async (request): Promise<WhoAmI> => ({
        scheme: request.user?.scheme ?? '',
        issuer: request.user?.issuer ?? null,
        subject: request.user?.subject ?? null,
        userKey: request.user?.userKey ?? null,
        identity: request.user?.identity ?? null
      }))
    })
    await oidc.configure(`${app.origin}/signin-oidc`)
    await waitUntilReady(app.origin)
    await waitForSaml2(app.app)
    oidcUser = { scheme: 'OpenIdConnect', issuer: oidc.issuer, subject: SHARED }
    samlUser = { scheme: 'Saml2', issuer: saml.entityId, subject: SHARED }
  })
  after(async () => {
    await app?.close()
    await oidc?.close()
    await saml.stop()
  })

  /** A real OpenID Connect sign-in over HTTP; the app's Cookie header (session cookie only). */
  async function signInOidc (): Promise<string> {
    const browser = new HttpSession()
    const start = await browser.request(`${app.origin}/External/Challenge?provider=OpenIdConnect`)
    const callback = await browser.request(await throughIdpLogin(browser, start.location!, app.origin, SHARED))
    assert.equal(callback.response.status, 302)
    const origin = new URL(app.origin)
    const name = browser.jar.names(origin).find(isSessionCookie)
    assert.ok(name !== undefined, 'signed in with OpenID Connect')
    return `${name}=${browser.jar.get(origin, name) ?? ''}`
  }

  /** A SAML2 sign-in with a response signed by the test IdP; the app's Cookie header. */
  async function signInSaml (): Promise<string> {
    const flow = await startSaml2SignIn(app.app)
    const response = await postToAcs(app.app, {
      SAMLResponse: saml.buildResponse({ acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user: { nameId: SHARED, attributes: {} }, inResponseTo: flow.request.id }),
      RelayState: flow.relayState
    }, flow.cookie)
    assert.ok(setsSessionCookie(response), 'signed in with SAML2')
    return cookieHeaderFrom(response).split('; ').filter((pair) => isSessionCookie(pair.split('=')[0] ?? '')).join('; ')
  }

  async function signedIn (cookie: string): Promise<boolean> {
    const response = await app.app.inject({ url: '/api/application-information', headers: { cookie, accept: 'application/json' } })
    assert.ok(response.statusCode === 200 || response.statusCode === 401, `status ${response.statusCode}`)
    return response.statusCode === 200
  }

  async function whoAmI (cookie: string): Promise<WhoAmI> {
    const response = await app.app.inject({ url: WHOAMI, headers: { cookie, accept: 'application/json' } })
    assert.equal(response.statusCode, 200)
    return response.json()
  }

  async function logoutEverywhere (cookie: string): Promise<void> {
    const { token, cookie: withAntiforgery } = await antiforgeryFor(app.app, cookie)
    const response = await app.app.inject({ method: 'POST', url: '/Account/LogoutEverywhere', headers: { cookie: withAntiforgery }, payload: { __RequestVerificationToken: token } })
    assert.equal(response.statusCode, 302)
  }

  const sessionIdOf = (cookie: string): string => {
    const sessionId = openSessionReference(cookie.slice(cookie.indexOf('=') + 1), app.keyRing)
    assert.ok(sessionId !== undefined)
    return sessionId
  }

  test('the principal names scheme, issuer and subject; the user keys differ', async () => {
    const fromOidc = await whoAmI(await signInOidc())
    const fromSaml = await whoAmI(await signInSaml())
    assert.deepEqual(fromOidc, { ...oidcUser, userKey: userKeyOf(oidcUser), identity: oidcUser })
    assert.deepEqual(fromSaml, { ...samlUser, userKey: userKeyOf(samlUser), identity: samlUser })
    assert.equal(fromOidc.subject, fromSaml.subject, 'the same subject value')
    assert.notEqual(fromOidc.userKey, fromSaml.userKey)
    assert.match(fromOidc.userKey ?? '', /^[A-Za-z0-9_-]{43}$/)
  })

  test('the session index lists each user\'s sessions apart; the bare-subject index is not written', async () => {
    const oidcCookie = await signInOidc()
    const samlCookie = await signInSaml()
    const oidcIndexed = await app.app.state.members(userIndexKey(oidcUser))
    const samlIndexed = await app.app.state.members(userIndexKey(samlUser))
    assert.ok(oidcIndexed.includes(sessionIdOf(oidcCookie)))
    assert.ok(!oidcIndexed.includes(sessionIdOf(samlCookie)))
    assert.ok(samlIndexed.includes(sessionIdOf(samlCookie)))
    assert.ok(!samlIndexed.includes(sessionIdOf(oidcCookie)))
    assert.deepEqual(await app.app.state.members(legacySubjectIndexKey(SHARED)), [])
  })

  test('sign out everywhere from the OpenID Connect session ends that user\'s sessions only; the SAML2 user stays', async () => {
    const oidcLaptop = await signInOidc()
    const oidcPhone = await signInOidc()
    const samlCookie = await signInSaml()
    const from = app.logs.lines.length
    await logoutEverywhere(oidcLaptop)
    assert.equal(await signedIn(oidcLaptop), false)
    assert.equal(await signedIn(oidcPhone), false, 'the same user\'s other session ends')
    assert.equal(await signedIn(samlCookie), true, 'the SAML2 user with the same subject value keeps the session')
    const line = app.logs.records().slice(from).find((record) => record.event === 'session.signed_out_everywhere')
    assert.equal(line?.provider, 'OpenIdConnect')
    assert.equal(line?.issuer, oidc.issuer)
  })

  test('sign out everywhere from the SAML2 session ends that user\'s sessions only; the OpenID Connect user stays', async () => {
    const samlFirst = await signInSaml()
    const samlSecond = await signInSaml()
    const oidcCookie = await signInOidc()
    await logoutEverywhere(samlFirst)
    assert.equal(await signedIn(samlFirst), false)
    assert.equal(await signedIn(samlSecond), false)
    assert.equal(await signedIn(oidcCookie), true)
  })

  test('app.session.revokeUser ends one identity\'s sessions and counts only those', async () => {
    await app.app.session.revokeUser(oidcUser)
    await app.app.session.revokeUser(samlUser)
    const oidcCookie = await signInOidc()
    const samlFirst = await signInSaml()
    const samlSecond = await signInSaml()
    assert.equal(await app.app.session.revokeUser(samlUser), 2)
    assert.equal(await signedIn(samlFirst), false)
    assert.equal(await signedIn(samlSecond), false)
    assert.equal(await signedIn(oidcCookie), true)
    // Same subject and scheme at another issuer: nobody here.
    assert.equal(await app.app.session.revokeUser({ ...oidcUser, issuer: 'https://other-issuer.example.test' }), 0)
    assert.equal(await signedIn(oidcCookie), true)
    assert.equal(await app.app.session.revokeUser(oidcUser), 1)
    assert.equal(await signedIn(oidcCookie), false)
  })

  test('back-channel logout naming the OpenID provider\'s sub ends that provider\'s sessions; the SAML2 user stays', async () => {
    const oidcCookie = await signInOidc()
    const samlCookie = await signInSaml()
    const token = await oidc.sign({ iss: oidc.issuer, aud: CLIENT_ID, iat: Math.floor(Date.now() / 1000), jti: randomUUID(), events: { [BACK_CHANNEL_EVENT]: {} }, sub: SHARED })
    const response = await fetch(`${app.origin}${BACK_CHANNEL_PATH}`, {
      method: 'POST',
      body: new URLSearchParams({ logout_token: token }),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      signal: AbortSignal.timeout(10_000)
    })
    assert.equal(response.status, 200)
    assert.equal(await signedIn(oidcCookie), false)
    assert.equal(await signedIn(samlCookie), true)
  })
})
