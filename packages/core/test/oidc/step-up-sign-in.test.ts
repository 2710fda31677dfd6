/**
 * Step-up authentication through the app, against oidc-provider on loopback (issue 36, item 3):
 * a route whose policy requires an `acr`, `amr` methods and a maximum authentication age sends a
 * session that does not satisfy it back to the provider that signed it in, with the policy's
 * `acr_values`, `max_age` (and `prompt=login` for 0), never the query string's. The response
 * must prove it: an `acr` not requested, a missing `amr` method or another user is refused with
 * the failure page and one `external.sign_in.failed` line, never a session. A step-up that proves
 * it upgrades the session: the old id revoked, a new one issued with the proof recorded. A
 * provider from the app's provider source steps up the same way, at its own IdP.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { storedSession } from '../helpers/app.js'
import { findPlanted, HttpSession, isSessionCookie, type Exchange } from '../helpers/providers/http-session.js'
import { throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import type { OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startOidcPair } from '../helpers/providers/oidc-pair.js'
import type { ListeningApp } from '../helpers/providers/provider-app.js'
import { startOidcIdp } from '../helpers/providers/oidc-idp.js'
import type { RuntimeProviderDefinition } from '../../src/providers/runtime-definitions.js'

const LOW = 'urn:example:loa:low'
const HIGH = 'urn:example:loa:high'
/** How the next login at the IdP authenticates (the test sets it before each login). */
let nextLogin: { acr?: string, amr?: string[] } = { acr: LOW, amr: ['pwd'] }

let idp: OidcIdp
/** A customer's IdP, reached through a provider from the provider source (scheme Contoso). */
let customerIdp: OidcIdp
let app: ListeningApp
let definitions: RuntimeProviderDefinition[] = []

before(async () => {
  customerIdp = await startOidcIdp({ clientId: 'contoso-app', clientSecret: 'contoso-secret-PLANTED-77aa', accounts: { ada: { name: 'Ada at Contoso' } }, acrValues: [LOW, HIGH], loginAuthentication: () => nextLogin })
  ;({ idp, app } = await startOidcPair({
    idp: {
      clientId: 'step-up-web',
      clientSecret: 'step-up-secret-PLANTED-51c0',
      accounts: { ada: { name: 'Ada' }, bob: { name: 'Bob' } },
      acrValues: [LOW, HIGH],
      loginAuthentication: () => nextLogin
    },
    openIdConnect: { Scopes: ['openid', 'profile'] },
    providerSource: async () => definitions,
    configure: (instance) => {
      // Within five minutes at a high assurance level with MFA.
      instance.authorization.addPolicy({ name: 'Recent', authentication: { acrValues: [HIGH], amr: ['mfa'], maxAgeSeconds: 300 } })
      // Authenticate again now, whatever the provider's session.
      instance.authorization.addPolicy({ name: 'Now', authentication: { acrValues: [HIGH], amr: ['mfa'], maxAgeSeconds: 0 } })
      instance.get('/recent', { config: { authorize: 'Recent' } }, async () => 'recent')
      instance.get('/now', { config: { authorize: 'Now' } }, async () => 'now')
    }
  }))
  await customerIdp.configure(`${app.origin}/signin-contoso`)
})

after(async () => {
  await app?.close()
  await idp?.close()
  await customerIdp?.close()
})

function sessionCookieOf (session: HttpSession): string | undefined {
  const origin = new URL(app.origin)
  const name = session.jar.names(origin).find(isSessionCookie)
  return name === undefined ? undefined : `${name}=${session.jar.get(origin, name) ?? ''}`
}

async function signIn (login: string, provider = 'OpenIdConnect'): Promise<HttpSession> {
  nextLogin = { acr: LOW, amr: ['pwd'] }
  const session = new HttpSession()
  const start = await session.request(`${app.origin}/External/Challenge?provider=${provider}&returnUrl=%2F`)
  const back = await throughIdpLogin(session, start.location!, app.origin, login)
  const callback = await session.request(back)
  assert.equal(callback.response.status, 302)
  assert.equal(callback.location?.pathname, '/')
  return session
}

/** Requests `path` and follows the step-up challenge through the IdP (logging in as `login` when it asks) and the callback. */
async function stepUp (session: HttpSession, path: string, login: string, issuer = idp.issuer): Promise<{ challenge: URL, callback: Exchange }> {
  const first = await session.request(`${app.origin}${path}`)
  assert.equal(first.response.status, 302, 'the route sends the session back to its provider')
  assert.equal(first.location?.origin, issuer)
  const back = await throughIdpLogin(session, first.location, app.origin, login)
  return { challenge: first.location, callback: await session.request(back) }
}

const failuresSince = (count: number): Array<Record<string, unknown>> => app.logs.events('external.sign_in.failed').slice(count)

describe('a session signed in with a password only', () => {
  test('records what the provider proved: acr, amr, auth_time and the scheme', async () => {
    const before = Math.floor(Date.now() / 1000)
    const session = await signIn('ada')
    const ticket = await storedSession(app.app, app.keyRing, sessionCookieOf(session)!)
    assert.equal(ticket?.scheme, 'OpenIdConnect')
    assert.equal(ticket?.authentication?.acr, LOW)
    assert.deepEqual(ticket?.authentication?.amr, ['pwd'])
    const authTime = ticket?.authentication?.authTime ?? 0
    assert.ok(authTime >= before - 5 && authTime <= Math.floor(Date.now() / 1000) + 5, 'auth_time of this login')
  })

  test('a step-up route sends it to its provider with the policy\'s acr_values and max_age; the query string changes nothing', async () => {
    const session = await signIn('ada')
    const challenge = await session.request(`${app.origin}/recent?acr_values=${encodeURIComponent(LOW)}&max_age=99999&prompt=none`)
    assert.equal(challenge.response.status, 302)
    const query = challenge.location!.searchParams
    assert.equal(query.get('acr_values'), HIGH)
    assert.equal(query.get('max_age'), '300')
    assert.equal(query.get('prompt'), null)
    const now = await session.request(`${app.origin}/now`)
    assert.equal(now.location?.searchParams.get('max_age'), '0')
    assert.equal(now.location?.searchParams.get('prompt'), 'login')
    assert.equal(app.logs.events('authorization.step_up.required').at(-1)?.policy, 'Now')
  })

  test('a JSON call to a step-up route: 401 problem, no redirect', async () => {
    const session = await signIn('ada')
    const call = await session.request(`${app.origin}/recent`, { accept: 'application/json' })
    assert.equal(call.response.status, 401)
    assert.match(call.response.headers.get('content-type') ?? '', /^application\/problem\+json/)
    assert.equal((JSON.parse(call.body) as { code?: string }).code, 'APP_ERR_AUTH_STEP_UP_REQUIRED')
  })
})

describe('the step-up response must prove the requirement', () => {
  test('the provider answers with an acr that was not requested: refused as acr, the session unchanged', async () => {
    const session = await signIn('ada')
    const cookie = sessionCookieOf(session)
    const count = app.logs.events('external.sign_in.failed').length
    // max_age 300 is met by the provider's own session: it answers at once, with the low acr.
    const { callback } = await stepUp(session, '/recent', 'ada')
    assert.equal(callback.response.status, 302)
    assert.equal(callback.location?.pathname, '/Account/Login')
    assert.equal(callback.location?.searchParams.get('failure'), 'failed')
    assert.deepEqual(failuresSince(count).map((line) => [line.failure, line.errorCode]), [['acr', 'ACR_NOT_REQUESTED']])
    assert.equal(sessionCookieOf(session), cookie, 'no new session')
    assert.equal((await session.request(`${app.origin}/`)).response.status, 200, 'the old session still signs in')
  })

  test('an amr without mfa: refused as amr', async () => {
    const session = await signIn('ada')
    const count = app.logs.events('external.sign_in.failed').length
    nextLogin = { acr: HIGH, amr: ['pwd'] }
    const { callback } = await stepUp(session, '/now', 'ada')
    assert.equal(callback.location?.pathname, '/Account/Login')
    assert.deepEqual(failuresSince(count).map((line) => [line.failure, line.errorCode]), [['amr', 'AMR_MISSING_METHOD']])
  })

  test('another user at the provider: refused as step_up_user, never a session of that user', async () => {
    const session = await signIn('ada')
    const cookie = sessionCookieOf(session)
    const count = app.logs.events('external.sign_in.failed').length
    nextLogin = { acr: HIGH, amr: ['pwd', 'mfa'] }
    // Without its session at the provider (oidc-provider would first end ada's to log bob in).
    const provider = new URL(idp.issuer)
    for (const name of session.jar.names(provider)) session.jar.delete(provider, name)
    const { callback } = await stepUp(session, '/now', 'bob')
    assert.equal(callback.location?.pathname, '/Account/Login')
    const failures = failuresSince(count)
    assert.deepEqual(failures.map((line) => [line.failure, line.subject]), [['step_up_user', 'bob']])
    assert.equal(sessionCookieOf(session), cookie)
    const ticket = await storedSession(app.app, app.keyRing, cookie!)
    assert.equal(ticket?.claims.find((claim) => claim.type === 'application:subject')?.value, 'ada')
  })
})

describe('a step-up that proves it', () => {
  test('upgrades the session: old id revoked, new one issued with the proof, the route allowed', async () => {
    const session = await signIn('ada')
    const oldCookie = sessionCookieOf(session)!
    const oldTicket = await storedSession(app.app, app.keyRing, oldCookie)
    nextLogin = { acr: HIGH, amr: ['pwd', 'mfa'] }
    const { challenge, callback } = await stepUp(session, '/now', 'ada')
    assert.equal(challenge.searchParams.get('prompt'), 'login')
    assert.equal(callback.response.status, 302)
    assert.equal(callback.location?.pathname, '/now')
    const newCookie = sessionCookieOf(session)!
    assert.notEqual(newCookie, oldCookie)
    const ticket = await storedSession(app.app, app.keyRing, newCookie)
    assert.notEqual(ticket?.sessionId, oldTicket?.sessionId)
    assert.equal(ticket?.authentication?.acr, HIGH)
    assert.deepEqual(ticket?.authentication?.amr, ['pwd', 'mfa'])
    assert.equal(await storedSession(app.app, app.keyRing, oldCookie), undefined, 'the old session is revoked')
    const allowed = await session.request(`${app.origin}/now`)
    assert.equal(allowed.response.status, 200)
    assert.equal(allowed.body, 'now')
    // The same session meets the five-minute policy too, without another trip.
    assert.equal((await session.request(`${app.origin}/recent`)).response.status, 200)
    assert.equal(app.logs.events('external.sign_in.succeeded').at(-1)?.stepUp, true)
  })
})

describe('a provider from the provider source', () => {
  test('steps up at its own IdP: the session of scheme Contoso is reissued, the route allowed', async () => {
    definitions = [{ scheme: 'Contoso', settings: { Type: 'OpenIdConnect', Authority: customerIdp.issuer, ClientId: 'contoso-app', ClientSecret: 'contoso-secret-PLANTED-77aa', Scopes: ['openid', 'profile'] } }]
    assert.deepEqual((await app.app.authentication.reloadProviders()).added, ['Contoso'])
    const session = await signIn('ada', 'Contoso')
    const oldCookie = sessionCookieOf(session)!
    nextLogin = { acr: HIGH, amr: ['pwd', 'mfa'] }
    const { challenge, callback } = await stepUp(session, '/now', 'ada', customerIdp.issuer)
    assert.equal(challenge.searchParams.get('acr_values'), HIGH)
    assert.equal(callback.location?.pathname, '/now')
    const ticket = await storedSession(app.app, app.keyRing, sessionCookieOf(session)!)
    assert.equal(ticket?.scheme, 'Contoso')
    assert.equal(ticket?.authentication?.acr, HIGH)
    assert.equal(await storedSession(app.app, app.keyRing, oldCookie), undefined)
    assert.equal((await session.request(`${app.origin}/now`)).response.status, 200)
  })
})

test('no log line carries a client secret, an authorization code or a token', () => {
  const planted = ['step-up-secret-PLANTED-51c0', 'contoso-secret-PLANTED-77aa', ...idp.issuedCodes, ...idp.issuedTokenResponseValues, ...customerIdp.issuedCodes, ...customerIdp.issuedTokenResponseValues]
  assert.ok(planted.length > 10)
  assert.deepEqual(findPlanted(app.logs.text(), planted), [])
})
