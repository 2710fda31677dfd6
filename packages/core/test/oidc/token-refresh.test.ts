/**
 * Token refresh with SaveTokens against oidc-provider on loopback (refresh tokens issued and
 * rotated, short access-token lifetime): `app.session.accessToken(request, reply)` hands out the
 * stored access token while it is valid for more than a minute, else refreshes it first, once per
 * session even with concurrent callers in one process and on two instances sharing a state store
 * (the provider's token endpoint counts the refresh grants). A refresh token the provider refuses
 * ends the session cleanly: no token, the cookie deleted, the next request anonymous, a log line
 * naming the class and no token in any log or cookie.
 */
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildTestApp, storedSession, testKeyRing, testStateStore, type TestApp } from '../helpers/app.js'
import { addTokenRoute, getToken } from '../helpers/providers/access-token-route.js'
import { findPlanted, HttpSession, sessionCookiesSet } from '../helpers/providers/http-session.js'
import { throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import { startOidcIdp, type OidcIdp } from '../helpers/providers/oidc-idp.js'
import { waitUntilReady } from '../helpers/providers/provider-app.js'
import type { AuthenticationTicket } from '../../src/session/principal.js'
import type { KeyRing } from '../../src/data-protection/key-ring.js'
import type { StateStore } from '../../src/state/state-store.js'

const SECRET = 'refresh-client-secret-PLANTED-93'
const CLIENT_ID = 'refresh-client'

interface Instance extends TestApp { readonly origin: string }

async function startInstance (issuer: string, store: StateStore, keyRing: KeyRing): Promise<Instance> {
  const test = await buildTestApp({
    nodeEnv: 'development',
    testSignIn: false,
    stateStore: store,
    keyRing,
    configure: addTokenRoute,
    settings: { Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: issuer, ClientId: CLIENT_ID, ClientSecret: SECRET, SaveTokens: true, Scopes: ['openid', 'profile'] } } } }
  })
  await test.app.listen({ host: '127.0.0.1', port: 0 })
  return { ...test, origin: `http://127.0.0.1:${(test.app.server.address() as AddressInfo).port}` }
}

/** Access tokens of the code grant live `accessTokenTtlSeconds`, refreshed ones an hour. */
async function startSetup (accessTokenTtlSeconds: number, instances: number): Promise<{ idp: OidcIdp, apps: Instance[] }> {
  const idp = await startOidcIdp({
    clientId: CLIENT_ID,
    clientSecret: SECRET,
    accounts: { ada: { name: 'Ada Lovelace' } },
    refreshTokens: { accessTokenTtlSeconds, refreshedAccessTokenTtlSeconds: 3600 }
  })
  const store = testStateStore()
  const keyRing = testKeyRing()
  const apps: Instance[] = []
  for (let index = 0; index < instances; index++) apps.push(await startInstance(idp.issuer, store, keyRing))
  // One redirect URI: every instance serves the same site behind a balancer; the first one's origin stands in for it.
  await idp.configure(`${apps[0]!.origin}/signin-oidc`)
  for (const app of apps) await waitUntilReady(app.origin)
  return { idp, apps }
}

/** Signs in on `app` in a new browser session; returns its Cookie header for the site. */
async function signIn (app: Instance): Promise<string> {
  const session = new HttpSession()
  const start = await session.request(`${app.origin}/External/Challenge?provider=OpenIdConnect`)
  const callbackUrl = await throughIdpLogin(session, start.location!, app.origin, 'ada')
  const callback = await session.request(callbackUrl)
  assert.equal(sessionCookiesSet(callback.response).length, 1, 'signed in')
  return cookieHeader(session, app)
}

/** The same browser's cookies sent to another instance of the same site. */
function cookieHeader (session: HttpSession, app: Instance): string {
  return session.jar.header(new URL(app.origin))
}

/** {@link startSetup} in the suite's `before`, closed in its `after`; the fields are set once `before` has run. */
function useSetup (accessTokenTtlSeconds: number, instances: number): { idp: OidcIdp, apps: Instance[] } {
  const setup = { apps: [] } as unknown as { idp: OidcIdp, apps: Instance[] }
  before(async () => { Object.assign(setup, await startSetup(accessTokenTtlSeconds, instances)) })
  after(async () => {
    for (const app of setup.apps) await app.app.close()
    await setup.idp?.close()
  })
  return setup
}

/** Signs in on the first instance: its Cookie header and the session record as stored. */
async function signInFirst (setup: { apps: Instance[] }): Promise<{ app: Instance, cookie: string, stored: AuthenticationTicket | undefined }> {
  const app = setup.apps[0]!
  const cookie = await signIn(app)
  return { app, cookie, stored: await storedSession(app.app, app.keyRing, cookie) }
}

function allLogs (apps: Instance[]): string {
  return apps.map((app) => app.logs.text()).join('\n')
}

describe('an access token valid for longer than the skew', () => {
  const setup = useSetup(3600, 1)

  test('is handed out as stored, without a refresh', async () => {
    const { app, cookie, stored } = await signInFirst(setup)
    const result = await getToken(app.origin, cookie)
    assert.equal(result.status, 200)
    assert.equal(result.token, stored?.tokens?.access_token)
    assert.equal(setup.idp.grants.refresh_token, undefined, 'no refresh grant')
  })

  test('an anonymous caller gets nothing', async () => {
    const result = await getToken(setup.apps[0]!.origin, '')
    assert.equal(result.status, 401)
  })
})

describe('an access token expiring within the skew', () => {
  const setup = useSetup(30, 2)

  test('concurrent callers in one process share one refresh; the new tokens are in the session record only', async () => {
    const { app, cookie, stored: before } = await signInFirst(setup)
    const grantsBefore = setup.idp.grants.refresh_token ?? 0
    const results = await Promise.all(Array.from({ length: 8 }, async () => await getToken(app.origin, cookie)))
    assert.deepEqual(results.map((result) => result.status), Array(8).fill(200))
    assert.equal(new Set(results.map((result) => result.token)).size, 1, 'every caller got the same token')
    assert.equal((setup.idp.grants.refresh_token ?? 0) - grantsBefore, 1, 'exactly one refresh grant at the provider')
    const after = await storedSession(app.app, app.keyRing, cookie)
    assert.equal(after?.tokens?.access_token, results[0]?.token)
    assert.notEqual(after?.tokens?.access_token, before?.tokens?.access_token)
    assert.notEqual(after?.tokens?.refresh_token, before?.tokens?.refresh_token, 'the provider rotated the refresh token')
    assert.equal(after?.sessionId, before?.sessionId, 'the same session')
    // Never in a cookie or a log.
    const planted = [...setup.idp.issuedTokenResponseValues, SECRET]
    assert.deepEqual(findPlanted(results.flatMap((result) => result.setCookie).join('\n'), planted), [])
    assert.deepEqual(findPlanted(allLogs(setup.apps), planted), [])
    assert.ok(app.logs.events('session.token_refresh.succeeded').length >= 1)
  })

  test('concurrent callers on two instances sharing the store share one refresh', async () => {
    const cookie = await signIn(setup.apps[0]!)
    // Both instances have the session cached before the race.
    for (const app of setup.apps) assert.equal((await fetch(`${app.origin}/api/application-information`, { headers: { cookie, accept: 'application/json' } })).status, 200)
    const grantsBefore = setup.idp.grants.refresh_token ?? 0
    const results = await Promise.all(Array.from({ length: 6 }, async (_, index) => await getToken(setup.apps[index % 2]!.origin, cookie)))
    assert.deepEqual(results.map((result) => result.status), Array(6).fill(200))
    assert.equal(new Set(results.map((result) => result.token)).size, 1, 'both instances hand out the same refreshed token')
    assert.equal((setup.idp.grants.refresh_token ?? 0) - grantsBefore, 1, 'exactly one refresh grant for both instances')
    // Valid for an hour now: both instances hand it out without another refresh.
    for (const app of setup.apps) {
      const again = await getToken(app.origin, cookie)
      assert.equal(again.token, results[0]?.token)
    }
    assert.equal((setup.idp.grants.refresh_token ?? 0) - grantsBefore, 1)
  })

  test('a refresh token the provider refuses ends the session cleanly', async () => {
    const { app, cookie, stored } = await signInFirst(setup)
    assert.ok(stored?.tokens?.refresh_token !== undefined)
    await setup.idp.revokeRefreshToken(stored.tokens.refresh_token)
    const result = await getToken(app.origin, cookie)
    assert.equal(result.status, 401)
    assert.ok(result.setCookie.some((line) => /Authentication=;/.test(line)), 'the session cookie is deleted')
    for (const instance of setup.apps) {
      const response = await fetch(`${instance.origin}/api/application-information`, { headers: { cookie, accept: 'application/json' } })
      assert.equal(response.status, 401, 'the old cookie is anonymous on every instance')
    }
    assert.equal(await storedSession(app.app, app.keyRing, cookie), undefined, 'the session record is gone')
    const failed = app.logs.events('session.token_refresh.failed')
    assert.equal(failed.at(-1)?.failure, 'invalid_grant')
    assert.equal(failed.at(-1)?.oauthError, 'invalid_grant')
    assert.deepEqual(findPlanted(allLogs(setup.apps), [...setup.idp.issuedTokenResponseValues, SECRET]), [])
  })
})
