/**
 * Entra ID group overage (issue 23, item 3), against the real IdPs the suites start: oidc-provider
 * releasing `_claim_names.groups` (a distributed claim) or `hasgroups: true` from userinfo, the
 * SAML test IdP sending `http://schemas.microsoft.com/claims/groups.link`, and a vendor slot whose
 * user information carries `_claim_names.groups`. By default each sign-in is refused with its own
 * failure class and login-page text and logged as `external.sign_in.group_overage`; with the
 * provider's AcceptGroupOverage it signs in without group claims. A user with a plain `groups`
 * claim is the control.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { HttpSession, sessionCookiesSet, type Exchange } from '../helpers/providers/http-session.js'
import { startOidcPair, type OidcPair } from '../helpers/providers/oidc-pair.js'
import { throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import { startVendorIdp, type VendorIdp } from '../helpers/providers/oauth-vendor-idp.js'
import { startProviderApp, type ListeningApp } from '../helpers/providers/provider-app.js'
import { buildSaml2App, postToAcs, setsSessionCookie, SP_ENTITY_ID, startSaml2SignIn, waitForSaml2 } from '../helpers/saml2/app.js'
import { TestIdentityProvider, type TestUser } from '../helpers/saml2/identity-provider.js'
import type { TestApp } from '../helpers/app.js'
import { GROUPS_LINK_ATTRIBUTE } from '../../src/sign-in/group-overage.js'
import { SIGN_IN_OUTCOMES } from '../../src/sign-in/sign-in-failure.js'

const CLIENT_ID = 'overage-client'
const CLIENT_SECRET = 'overage-secret-PLANTED-77c1'
const ACCOUNTS = {
  // Entra ID above 200 groups: the groups are at Microsoft Graph, named by a distributed claim.
  many: { name: 'Many Groups', _claim_names: { groups: 'src1' }, _claim_sources: { src1: { endpoint: 'https://graph.windows.net/tenant/users/many/getMemberObjects' } } },
  flagged: { name: 'Flagged', hasgroups: true },
  // The same flag as a string or a number (issue 26, item 7): each signed in without groups before.
  flaggedText: { name: 'Flagged Text', hasgroups: 'True' },
  flaggedNumber: { name: 'Flagged Number', hasgroups: 1 },
  few: { name: 'Few Groups', groups: ['staff'] }
}
const CLAIMS = { openid: ['sub'], profile: ['name', 'groups', 'hasgroups'] }

async function oidcSignIn (pair: OidcPair, login: string): Promise<{ session: HttpSession, callback: Exchange }> {
  const session = new HttpSession()
  const start = await session.request(`${pair.app.origin}/External/Challenge?provider=OpenIdConnect`)
  assert.equal(start.response.status, 302)
  const callback = await session.request(await throughIdpLogin(session, start.location!, pair.app.origin, login))
  return { session, callback }
}

async function claimsOf (origin: string, session: HttpSession): Promise<string> {
  const home = await session.request(`${origin}/`)
  assert.equal(home.response.status, 200)
  return home.body
}

describe('OpenID Connect group overage (oidc-provider)', () => {
  let refusing: OidcPair
  let accepting: OidcPair
  before(async () => {
    const idp = { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, accounts: ACCOUNTS, claims: CLAIMS }
    refusing = await startOidcPair({ idp })
    accepting = await startOidcPair({ idp, openIdConnect: { AcceptGroupOverage: true } })
  })
  after(async () => {
    for (const pair of [refusing, accepting]) { await pair?.app.close(); await pair?.idp.close() }
  })

  for (const [login, indicator] of [['many', 'claim_names'], ['flagged', 'hasgroups'], ['flaggedText', 'hasgroups'], ['flaggedNumber', 'hasgroups']] as const) {
    test(`${indicator} (${login}): refused by default (group_overage), its own event and login-page text, no session`, async () => {
      const { session, callback } = await oidcSignIn(refusing, login)
      assert.equal(callback.response.status, 302)
      assert.deepEqual(sessionCookiesSet(callback.response), [])
      assert.equal(callback.location?.pathname + (callback.location?.search ?? ''), '/Account/Login?failure=group_overage')
      const event = refusing.app.logs.events('external.sign_in.group_overage').at(-1)
      assert.deepEqual({ provider: event?.provider, indicator: event?.indicator, accepted: event?.accepted, setting: event?.setting, level: event?.level }, {
        provider: 'OpenIdConnect', indicator, accepted: false, setting: 'ProjectTemplate:Authentication:Providers:OpenIdConnect:AcceptGroupOverage', level: 40
      })
      const failed = refusing.app.logs.events('external.sign_in.failed').at(-1)
      assert.equal(failed?.failure, 'group_overage')
      assert.equal(failed?.code, 'APP_ERR_AUTH_PROVIDER_FAILED')
      const page = await session.request(callback.location!)
      assert.equal(page.response.status, 200)
      assert.ok(page.body.includes('group overage'), 'the login page names the cause')
      assert.ok(page.body.includes(SIGN_IN_OUTCOMES.group_overage.message.replaceAll("'", '&#39;').slice(0, 60)))
    })
  }

  test('control: a user with a groups claim signs in with application:group', async () => {
    const { session, callback } = await oidcSignIn(refusing, 'few')
    assert.equal(callback.location?.pathname, '/')
    assert.equal(sessionCookiesSet(callback.response).length, 1)
    assert.match(await claimsOf(refusing.app.origin, session), /application:group[\s\S]{0,80}staff/)
  })

  test('AcceptGroupOverage true: signs in without group claims, logged as accepted', async () => {
    const { session, callback } = await oidcSignIn(accepting, 'many')
    assert.equal(callback.location?.pathname, '/')
    assert.equal(sessionCookiesSet(callback.response).length, 1)
    assert.doesNotMatch(await claimsOf(accepting.app.origin, session), /application:group/)
    const event = accepting.app.logs.events('external.sign_in.group_overage').at(-1)
    assert.equal(event?.accepted, true)
    assert.equal(event?.indicator, 'claim_names')
    assert.equal(accepting.app.logs.events('external.sign_in.succeeded').length, 1)
  })
})

describe('SAML2 group overage (test IdP, groups.link attribute)', () => {
  const idp = new TestIdentityProvider()
  let refusing: TestApp
  let accepting: TestApp
  const overage: TestUser = { nameId: 'many@example.test', attributes: { [GROUPS_LINK_ATTRIBUTE]: ['https://graph.windows.net/tenant/users/many/getMemberObjects'] } }
  before(async () => {
    await idp.start()
    refusing = await buildSaml2App(idp)
    accepting = await buildSaml2App(idp, { AcceptGroupOverage: true })
    await waitForSaml2(refusing.app)
    await waitForSaml2(accepting.app)
  })
  after(async () => { await refusing?.app.close(); await accepting?.app.close(); await idp.stop() })

  async function post (subject: TestApp, user: TestUser) {
    const flow = await startSaml2SignIn(subject.app)
    return await postToAcs(subject.app, { SAMLResponse: idp.buildResponse({ acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user, inResponseTo: flow.request.id }), RelayState: flow.relayState }, flow.cookie)
  }

  test('refused by default (group_overage) with its own event; no session', async () => {
    const response = await post(refusing, overage)
    assert.equal(response.headers.location, '/Account/Login?failure=group_overage')
    assert.equal(setsSessionCookie(response), false)
    const event = refusing.logs.events('external.sign_in.group_overage').at(-1)
    assert.equal(event?.indicator, 'groups_link')
    assert.equal(event?.accepted, false)
    assert.equal(event?.setting, 'ProjectTemplate:Authentication:Providers:Saml2:AcceptGroupOverage')
    assert.equal(refusing.logs.events('external.sign_in.failed').at(-1)?.failure, 'group_overage')
  })

  test('a groups.link attribute with an empty value is refused too (issue 26, item 7)', async () => {
    const response = await post(refusing, { nameId: 'empty-link@example.test', attributes: { [GROUPS_LINK_ATTRIBUTE]: [''] } })
    assert.equal(response.headers.location, '/Account/Login?failure=group_overage')
    assert.equal(setsSessionCookie(response), false)
    assert.equal(refusing.logs.events('external.sign_in.group_overage').at(-1)?.indicator, 'groups_link')
  })

  test('control: groups as attribute values sign in', async () => {
    const response = await post(refusing, { nameId: 'few@example.test', attributes: { 'http://schemas.microsoft.com/ws/2008/06/identity/claims/groups': ['g-1'] } })
    assert.equal(response.headers.location, '/')
    assert.ok(setsSessionCookie(response))
  })

  test('AcceptGroupOverage true: signs in, logged as accepted', async () => {
    const response = await post(accepting, overage)
    assert.equal(response.headers.location, '/')
    assert.ok(setsSessionCookie(response))
    assert.equal(accepting.logs.events('external.sign_in.group_overage').at(-1)?.accepted, true)
  })
})

describe('vendor slot group overage (user information with _claim_names.groups)', () => {
  let vendor: VendorIdp
  let app: ListeningApp
  before(async () => {
    vendor = await startVendorIdp({ id: 7, login: 'many', _claim_names: { groups: 'src1' } })
    app = await startProviderApp({ Authentication: { Providers: { VendorB: vendor.settings('client-b', 'vendor-secret-PLANTED-0b0b') } } })
  })
  after(async () => { await app?.close(); await vendor?.close() })

  test('refused by default (group_overage)', async () => {
    const session = new HttpSession()
    const start = await session.request(`${app.origin}/External/Challenge?provider=VendorB`)
    const authorize = await session.request(start.location!)
    const callback = await session.request(authorize.location!)
    assert.equal(callback.location?.pathname + (callback.location?.search ?? ''), '/Account/Login?failure=group_overage')
    assert.deepEqual(sessionCookiesSet(callback.response), [])
    assert.equal(app.logs.events('external.sign_in.group_overage').at(-1)?.indicator, 'claim_names')
  })
})
