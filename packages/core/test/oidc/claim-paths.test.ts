/**
 * Claims where identity providers really put them (issue 23, item 6), against oidc-provider
 * releasing Keycloak's shapes: `realm_access.roles` and `resource_access.<client>.roles`. A
 * ClaimMappings `From` that is a dotted path or a JSON pointer reaches into them, one application
 * claim per array element, and the role policy then admits the user; without the mapping they
 * stay JSON text and the administration route is refused (the control). The OpenID Connect clock
 * tolerance is `ClockSkewSeconds` (0-300, default 60), against a provider whose tokens the test
 * mints.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { HttpSession, sessionCookiesSet } from '../helpers/providers/http-session.js'
import { startOidcPair, type OidcPair } from '../helpers/providers/oidc-pair.js'
import { throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import { startProviderApp, waitUntilReady, type ListeningApp } from '../helpers/providers/provider-app.js'
import { startTokenIdp, type TokenIdp } from '../helpers/providers/token-idp.js'
import { loadConfiguration } from '../../src/configuration.js'
import { APP_ROOT } from '../helpers/app.js'

const CLIENT_ID = 'keycloak-client'
const CLIENT_SECRET = 'keycloak-secret-PLANTED-6d6d'
const ACCOUNTS = {
  kc: {
    name: 'Kay Cloak',
    realm_access: { roles: ['Administrator', 'offline_access'] },
    resource_access: { 'keycloak-client': { roles: ['application.manage', 'reports.read'] }, account: { roles: ['manage-account'] } }
  }
}
const CLAIMS = { openid: ['sub'], profile: ['name', 'realm_access', 'resource_access'] }

async function signIn (pair: OidcPair) {
  const session = new HttpSession()
  const start = await session.request(`${pair.app.origin}/External/Challenge?provider=OpenIdConnect`)
  const callback = await session.request(await throughIdpLogin(session, start.location!, pair.app.origin, 'kc'))
  return { session, callback }
}

describe('Keycloak roles in nested claims (oidc-provider)', () => {
  let mapped: OidcPair
  let unmapped: OidcPair
  before(async () => {
    const idp = { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, accounts: ACCOUNTS, claims: CLAIMS }
    mapped = await startOidcPair({
      idp,
      openIdConnect: {
        ClaimMappings: [
          { From: 'realm_access.roles', To: 'role' },
          { From: '/resource_access/keycloak-client/roles', To: 'permission' }
        ]
      }
    })
    unmapped = await startOidcPair({ idp })
  })
  after(async () => {
    for (const pair of [mapped, unmapped]) { await pair?.app.close(); await pair?.idp.close() }
  })

  test('realm_access.roles and /resource_access/<client>/roles become one role or permission per value; the role policy admits the user', async () => {
    const { session, callback } = await signIn(mapped)
    assert.equal(callback.location?.pathname, '/')
    assert.equal(sessionCookiesSet(callback.response).length, 1)
    const home = await session.request(`${mapped.app.origin}/`)
    for (const [type, value] of [
      ['application:role', 'Administrator'], ['application:role', 'offline_access'],
      ['application:permission', 'application.manage'], ['application:permission', 'reports.read']
    ]) {
      assert.ok(home.body.includes(`<tr><td>${type}</td><td>${value}</td>`), `${type}=${value}`)
    }
    assert.ok(!home.body.includes('<td>application:permission</td><td>manage-account</td>'), 'another client\'s roles are not mapped')
    const admin = await session.request(`${mapped.app.origin}/api/application-information/administration`, { accept: 'application/json' })
    assert.equal(admin.response.status, 200)
  })

  test('control: without the mapping the nested roles are not roles, and the administration route is refused', async () => {
    const { session, callback } = await signIn(unmapped)
    assert.equal(callback.location?.pathname, '/')
    const home = await session.request(`${unmapped.app.origin}/`)
    assert.ok(!home.body.includes('<td>application:role</td>'))
    const admin = await session.request(`${unmapped.app.origin}/api/application-information/administration`, { accept: 'application/json' })
    assert.equal(admin.response.status, 403)
  })
})

describe('ClockSkewSeconds for OpenID Connect', () => {
  let idp: TokenIdp
  let strict: ListeningApp
  let tolerant: ListeningApp
  const settings = (extra: Record<string, number>) => ({ Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: idp.issuer, ClientId: CLIENT_ID, ClientSecret: CLIENT_SECRET, ...extra } } } })
  before(async () => {
    idp = await startTokenIdp(CLIENT_ID)
    strict = await startProviderApp(settings({}))
    tolerant = await startProviderApp(settings({ ClockSkewSeconds: 240 }))
    await waitUntilReady(strict.origin)
    await waitUntilReady(tolerant.origin)
  })
  after(async () => { await strict?.app.close(); await tolerant?.app.close(); await idp?.close() })

  async function callbackWith (app: ListeningApp, claims: Record<string, number>) {
    const session = new HttpSession()
    const start = await session.request(`${app.origin}/External/Challenge?provider=OpenIdConnect`)
    const nonce = start.location?.searchParams.get('nonce') ?? ''
    const answer = await idp.validAnswer(nonce, claims)
    idp.answer = () => answer
    return await session.request(`${app.origin}/signin-oidc?code=c-${randomBytes(8).toString('hex')}&state=${start.location?.searchParams.get('state') ?? ''}`)
  }

  const now = (): number => Math.floor(Date.now() / 1000)
  for (const [name, claims, failure] of [
    ['expired 2 minutes ago', () => ({ iat: now() - 600, exp: now() - 120 }), 'expired'],
    ['issued 2 minutes in the future', () => ({ iat: now() + 120, exp: now() + 600 }), 'id_token']
  ] as const) {
    test(`an ID token ${name}: refused with the default 60 s (${failure}), accepted with ClockSkewSeconds 240`, async () => {
      const refused = await callbackWith(strict, claims())
      assert.equal(refused.location?.pathname + (refused.location?.search ?? ''), '/Account/Login?failure=failed')
      assert.equal(strict.logs.events('external.sign_in.failed').at(-1)?.failure, failure)
      const accepted = await callbackWith(tolerant, claims())
      assert.equal(accepted.location?.pathname, '/')
      assert.equal(sessionCookiesSet(accepted.response).length, 1)
    })
  }

  test('ClockSkewSeconds is bounded like Saml2:ClockSkewSeconds (0-300)', () => {
    for (const [value, valid] of [['0', true], ['300', true], ['301', false], ['-1', false]] as const) {
      const result = loadConfiguration({ contentRoot: APP_ROOT, env: { XDG_CONFIG_HOME: '/nonexistent-test-config', NODE_ENV: 'development', ProjectTemplate__Authentication__Providers__OpenIdConnect__ClockSkewSeconds: value } })
      assert.equal(result.errors.some((problem) => problem.key === 'ProjectTemplate:Authentication:Providers:OpenIdConnect:ClockSkewSeconds'), !valid, value)
    }
  })
})
