/**
 * RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0) against oidc-provider on loopback:
 * with SignOutAtProvider, POST /Account/Logout ends the local session in the same response and
 * sends the browser to the provider's end_session_endpoint with the ID token as id_token_hint,
 * the registered post-logout redirect URI and the local return URL as state; the provider ends
 * its session and returns to SignedOutCallbackPath, which goes back to the local return URL only.
 * The next sign-in meets the provider's login page again. Without the option, logout stays local.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { findPlanted, HttpSession, isSessionCookie, sessionCookiesSet } from '../helpers/providers/http-session.js'
import { confirmIdpLogout, throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import type { OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startOidcPair } from '../helpers/providers/oidc-pair.js'
import type { ListeningApp } from '../helpers/providers/provider-app.js'
import { antiforgeryTokenIn } from '../helpers/cookies.js'

const SECRET = 'logout-client-secret-PLANTED-77'

async function startPair (signOutAtProvider: boolean): Promise<{ idp: OidcIdp, app: ListeningApp }> {
  return await startOidcPair({
    idp: { clientId: 'logout-client', clientSecret: SECRET, accounts: { ada: { name: 'Ada Lovelace' } } },
    openIdConnect: { SignOutAtProvider: signOutAtProvider },
    postLogoutRedirect: true
  })
}

/** Registers before/after hooks for a started pair; its fields are set once `before` has run. */
function usePair (signOutAtProvider: boolean): { idp: OidcIdp, app: ListeningApp } {
  const pair = {} as { idp: OidcIdp, app: ListeningApp }
  before(async () => { Object.assign(pair, await startPair(signOutAtProvider)) })
  after(async () => { await pair.app?.close(); await pair.idp?.close() })
  return pair
}

async function signIn (app: ListeningApp, session: HttpSession): Promise<void> {
  const start = await session.request(`${app.origin}/External/Challenge?provider=OpenIdConnect`)
  const callbackUrl = await throughIdpLogin(session, start.location!, app.origin, 'ada')
  const callback = await session.request(callbackUrl)
  assert.equal(sessionCookiesSet(callback.response).length, 1)
}

function escapeRegExp (text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

function continueUrlOf (body: string): URL {
  const href = /<a id="continue-sign-out" href="([^"]+)">/.exec(body)?.[1]
  assert.ok(href !== undefined, 'the sign-out page links to the provider')
  return new URL(href.replaceAll('&amp;', '&'))
}

async function postLogout (app: ListeningApp, session: HttpSession, returnUrl?: string) {
  const home = await session.request(`${app.origin}/`)
  const token = antiforgeryTokenIn(home.body)
  assert.ok(token !== undefined)
  return await session.request(`${app.origin}/Account/Logout`, { method: 'POST', form: { __RequestVerificationToken: token, ...(returnUrl === undefined ? {} : { returnUrl }) } })
}

describe('SignOutAtProvider true', () => {
  const pair = usePair(true)

  test('logout ends the local session and continues at end_session_endpoint with id_token_hint; the provider returns to the local return URL', async () => {
    const session = new HttpSession()
    await signIn(pair.app, session)
    const logout = await postLogout(pair.app, session, '/Account/Login?signedOut=1')
    // A no-store page that navigates on (a redirect would break CSP form-action 'self').
    assert.equal(logout.response.status, 200)
    assert.equal(logout.response.headers.get('cache-control'), 'no-store')
    const endSession = continueUrlOf(logout.body)
    assert.match(logout.body, new RegExp(`<meta http-equiv="refresh" content="0;url=${escapeRegExp(endSession.href.replaceAll('&', '&amp;'))}">`))
    assert.equal(`${endSession.origin}${endSession.pathname}`, `${pair.idp.issuer}/session/end`)
    assert.equal(endSession.searchParams.get('post_logout_redirect_uri'), `${pair.app.origin}/signout-callback-oidc`)
    assert.equal(endSession.searchParams.get('client_id'), 'logout-client')
    assert.equal(endSession.searchParams.get('state'), '/Account/Login?signedOut=1')
    const hint = endSession.searchParams.get('id_token_hint')
    assert.ok(hint !== null && pair.idp.issuedTokenResponseValues.includes(hint), 'the ID token the provider issued is the hint (kept although SaveTokens is false)')
    // The local session is over before the provider is even contacted.
    assert.deepEqual(session.jar.names(new URL(pair.app.origin)).filter(isSessionCookie), [])
    assert.equal((await session.request(`${pair.app.origin}/api/application-information`, { accept: 'application/json' })).response.status, 401)

    const confirmed = await confirmIdpLogout(session, endSession)
    assert.equal(`${confirmed.location?.origin}${confirmed.location?.pathname}`, `${pair.app.origin}/signout-callback-oidc`)
    assert.equal(pair.idp.endedSessions, 1)
    const back = await session.request(confirmed.location!)
    assert.equal(back.response.status, 302)
    assert.equal(`${back.location?.pathname}${back.location?.search}`, '/Account/Login?signedOut=1')

    // The provider's session is gone: a new sign-in asks for the login again.
    const again = await session.request(`${pair.app.origin}/External/Challenge?provider=OpenIdConnect`)
    const idpPage = await session.follow(again.location!, (url) => url.origin === pair.app.origin)
    assert.match(idpPage.body, /name="prompt" value="login"/)
    assert.equal(pair.app.logs.events('external.sign_out.redirected').length, 1)
    assert.deepEqual(findPlanted(pair.app.logs.text(), [SECRET, ...pair.idp.issuedTokenResponseValues, ...pair.idp.issuedCodes]), [])
  })

  test('the signed-out callback follows only a local state; anything else goes to /', async () => {
    for (const [state, expected] of [['https://evil.example/', '/'], ['//evil.example', '/'], ['/Account/Login', '/Account/Login']]) {
      const response = await fetch(`${pair.app.origin}/signout-callback-oidc?state=${encodeURIComponent(state ?? '')}`, { redirect: 'manual' })
      assert.equal(response.status, 302)
      assert.equal(response.headers.get('location'), expected)
    }
  })
})

describe('SignOutAtProvider false (default)', () => {
  const pair = usePair(false)

  test('logout stays local and the signed-out callback path is not a route', async () => {
    const session = new HttpSession()
    await signIn(pair.app, session)
    const logout = await postLogout(pair.app, session)
    assert.equal(logout.response.status, 302)
    assert.equal(logout.location?.origin, pair.app.origin)
    assert.equal(logout.location?.pathname, '/')
    assert.equal(pair.idp.endedSessions, 0)
    // Not a route: an anonymous request meets the fallback (login), not a redirect to the state.
    const unrouted = await fetch(`${pair.app.origin}/signout-callback-oidc?state=%2FAccount%2FAccessDenied`, { redirect: 'manual' })
    assert.notEqual(unrouted.headers.get('location'), '/Account/AccessDenied')
  })
})
