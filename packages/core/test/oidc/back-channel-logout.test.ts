/**
 * OpenID Connect Back-Channel Logout 1.0 against oidc-provider on loopback (features.backchannelLogout,
 * backchannel_logout_session_required): a logout at the provider makes it POST a signed logout
 * token to BackChannelLogoutPath, and the session of that provider sid is over at once (the old
 * cookie is anonymous) while a session of another provider sid stays. Logout tokens signed with the
 * provider's own key but defective in one point each are refused with 400, Cache-Control no-store,
 * a log line naming the class and no token in the log.
 */
import { randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { generateKeyPair, SignJWT } from 'jose'
import { findPlanted, HttpSession, sessionCookiesSet } from '../helpers/providers/http-session.js'
import { waitFor } from '../helpers/wait.js'
import { confirmIdpLogout, throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import { startOidcIdp, type OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startOidcPair } from '../helpers/providers/oidc-pair.js'
import { startProviderApp, type ListeningApp } from '../helpers/providers/provider-app.js'

const SECRET = 'bcl-client-secret-PLANTED-41'
const CLIENT_ID = 'bcl-client'
const EVENT = 'http://schemas.openid.net/event/backchannel-logout'
const PATH = '/backchannel-logout-oidc'

async function signIn (app: ListeningApp, session: HttpSession, login = 'ada'): Promise<void> {
  const start = await session.request(`${app.origin}/External/Challenge?provider=OpenIdConnect`)
  const callbackUrl = await throughIdpLogin(session, start.location!, app.origin, login)
  const callback = await session.request(callbackUrl)
  assert.equal(sessionCookiesSet(callback.response).length, 1, 'signed in')
}

async function signedIn (app: ListeningApp, session: HttpSession): Promise<boolean> {
  const { response } = await session.request(`${app.origin}/api/application-information`, { accept: 'application/json' })
  assert.ok(response.status === 200 || response.status === 401, `status ${response.status}`)
  return response.status === 200
}

async function postLogoutToken (app: ListeningApp, token: string | undefined): Promise<Response> {
  const body = new URLSearchParams(token === undefined ? {} : { logout_token: token })
  return await fetch(`${app.origin}${PATH}`, { method: 'POST', redirect: 'manual', body, headers: { 'content-type': 'application/x-www-form-urlencoded' }, signal: AbortSignal.timeout(10_000) })
}

describe('BackChannelLogout true', () => {
  let idp: OidcIdp
  let app: ListeningApp
  const planted: string[] = []

  before(async () => {
    ({ idp, app } = await startOidcPair({
      idp: {
        clientId: CLIENT_ID,
        clientSecret: SECRET,
        accounts: { ada: { name: 'Ada Lovelace' }, grace: { name: 'Grace Hopper' } },
        backChannelLogoutUri: (redirectUri) => `${new URL(redirectUri).origin}${PATH}`
      },
      openIdConnect: { BackChannelLogout: true }
    }))
  })
  after(async () => {
    await app?.close()
    await idp?.close()
  })

  const validClaims = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
    iss: idp.issuer,
    aud: CLIENT_ID,
    iat: Math.floor(Date.now() / 1000),
    jti: randomUUID(),
    events: { [EVENT]: {} },
    sub: 'nobody',
    ...overrides
  })

  test('a logout at the provider ends the session of that provider sid; another sid of the same user stays', async () => {
    const first = new HttpSession()
    const second = new HttpSession()
    await signIn(app, first)
    await signIn(app, second)
    assert.equal(await signedIn(app, first), true)
    assert.equal(await signedIn(app, second), true)

    // At the provider: end the first browser's session there ("Yes, sign me out").
    const confirmed = await confirmIdpLogout(first, new URL(`${idp.issuer}/session/end`))
    assert.ok(confirmed.response.status < 500)
    await waitFor(() => idp.backChannelLogouts.length > 0, 'the provider\'s back-channel POST', 10_000)
    assert.deepEqual(idp.backChannelLogouts, [{ status: 200 }], 'the app answered the provider 200')

    assert.equal(await signedIn(app, first), false, 'the old cookie is anonymous')
    assert.equal(await signedIn(app, second), true, 'a session of another provider sid stays')
    const [success] = app.logs.events('oidc.back_channel_logout.succeeded')
    assert.equal(success?.by, 'sid')
    assert.equal(success?.sessions, 1)
    assert.deepEqual(findPlanted(app.logs.text(), [SECRET, ...idp.issuedTokenResponseValues, ...idp.issuedCodes]), [])
  })

  test('a logout token naming only a sub ends every session of that provider subject', async () => {
    const first = new HttpSession()
    const second = new HttpSession()
    const other = new HttpSession()
    await signIn(app, first, 'grace')
    await signIn(app, second, 'grace')
    await signIn(app, other, 'ada')
    const token = await idp.sign(validClaims({ sub: 'grace' }), { typ: 'logout+jwt' })
    planted.push(token)
    const response = await postLogoutToken(app, token)
    assert.equal(response.status, 200)
    assert.equal(response.headers.get('cache-control'), 'no-store')
    assert.equal(await signedIn(app, first), false)
    assert.equal(await signedIn(app, second), false)
    assert.equal(await signedIn(app, other), true, 'another subject keeps its session')
    assert.equal(app.logs.events('oidc.back_channel_logout.succeeded').at(-1)?.sessions, 2)
  })

  test('defective logout tokens: 400, no-store, a log line naming the class, no token in the log, the session untouched', async () => {
    const session = new HttpSession()
    await signIn(app, session, 'ada')
    const { privateKey: foreignKey } = await generateKeyPair('RS256', { extractable: true })
    const hsKey = new TextEncoder().encode('a-shared-secret-of-at-least-32-bytes!!')
    const cases: Array<[string, () => Promise<string | undefined>]> = [
      ['signature', async () => await new SignJWT(validClaims({ sub: 'ada' })).setProtectedHeader({ alg: 'RS256', kid: 'test-rs256' }).sign(foreignKey)],
      ['signature', async () => await new SignJWT(validClaims({ sub: 'ada' })).setProtectedHeader({ alg: 'HS256' }).sign(hsKey)],
      ['events', async () => await idp.sign(validClaims({ sub: 'ada', events: undefined }))],
      ['events', async () => await idp.sign(validClaims({ sub: 'ada', events: { 'http://example.test/other-event': {} } }))],
      ['nonce', async () => await idp.sign(validClaims({ sub: 'ada', nonce: 'n-0S6_WzA2Mj' }))],
      ['audience', async () => await idp.sign(validClaims({ sub: 'ada', aud: 'another-client' }))],
      ['issuer', async () => await idp.sign(validClaims({ sub: 'ada', iss: 'http://localhost:1/' }))],
      ['expired', async () => await idp.sign(validClaims({ sub: 'ada', iat: Math.floor(Date.now() / 1000) - 3600 }))],
      ['identifiers', async () => await idp.sign(validClaims({ sub: undefined }))],
      ['claims', async () => await idp.sign(validClaims({ sub: 'ada', jti: undefined }))],
      ['malformed', async () => await idp.sign(validClaims({ sub: 'ada' }), { typ: 'at+jwt' })],
      ['malformed', async () => 'not.a.jwt'],
      ['malformed', async () => undefined]
    ]
    for (const [failure, make] of cases) {
      const token = await make()
      if (token !== undefined) planted.push(token)
      const before = app.logs.events('oidc.back_channel_logout.rejected').length
      const response = await postLogoutToken(app, token)
      assert.equal(response.status, 400, failure)
      assert.equal(response.headers.get('cache-control'), 'no-store', failure)
      assert.deepEqual(await response.json(), { error: 'invalid_request' })
      const logged = app.logs.events('oidc.back_channel_logout.rejected')
      assert.equal(logged.length, before + 1, failure)
      assert.equal(logged.at(-1)?.failure, failure)
    }
    assert.equal(await signedIn(app, session), true, 'no refused token ended the session')
    assert.deepEqual(findPlanted(app.logs.text(), planted.map((token) => token.split('.')[2])), [], 'no token (signature part) in the log')
    assert.deepEqual(findPlanted(app.logs.text(), planted), [])
  })

  test('a replayed jti is refused (400, replay) and ends nothing more', async () => {
    const session = new HttpSession()
    await signIn(app, session, 'ada')
    const token = await idp.sign(validClaims({ sub: 'someone-else' }))
    planted.push(token)
    assert.equal((await postLogoutToken(app, token)).status, 200)
    const replay = await postLogoutToken(app, token)
    assert.equal(replay.status, 400)
    assert.equal(replay.headers.get('cache-control'), 'no-store')
    assert.equal(app.logs.events('oidc.back_channel_logout.rejected').at(-1)?.failure, 'replay')
    assert.equal(await signedIn(app, session), true)
    assert.deepEqual(findPlanted(app.logs.text(), planted), [])
  })

  test('GET is not a logout, and a valid logout token in any body but a form is refused with 400 and ends nothing', async () => {
    const get = await fetch(`${app.origin}${PATH}`, { redirect: 'manual' })
    assert.notEqual(get.status, 200)
    const session = new HttpSession()
    await signIn(app, session, 'grace')
    const token = await idp.sign(validClaims({ sub: 'grace' }), { typ: 'logout+jwt' })
    planted.push(token)
    const json = await fetch(`${app.origin}${PATH}`, { method: 'POST', body: JSON.stringify({ logout_token: token }), headers: { 'content-type': 'application/json' } })
    assert.equal(json.status, 400)
    assert.deepEqual(await json.json(), { error: 'invalid_request' })
    assert.equal(app.logs.events('oidc.back_channel_logout.rejected').at(-1)?.errorCode, 'CONTENT_TYPE_NOT_FORM')
    assert.equal(await signedIn(app, session), true, 'the session stays')
    assert.equal((await postLogoutToken(app, token)).status, 200, 'the same token, form-encoded, is accepted')
    assert.equal(await signedIn(app, session), false)
  })
})

describe('BackChannelLogout false (default)', () => {
  test('the path is not a logout endpoint', async () => {
    const idp = await startOidcIdp({ clientId: CLIENT_ID, clientSecret: SECRET, accounts: { ada: {} } })
    const app = await startProviderApp({
      Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: idp.issuer, ClientId: CLIENT_ID, ClientSecret: SECRET } } }
    })
    try {
      await idp.configure(`${app.origin}/signin-oidc`)
      const response = await postLogoutToken(app, await idp.sign({ iss: idp.issuer }))
      assert.notEqual(response.status, 200)
      assert.equal(app.logs.events('oidc.back_channel_logout.rejected').length, 0)
    } finally {
      await app.close()
      await idp.close()
    }
  })
})
