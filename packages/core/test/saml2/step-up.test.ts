/**
 * Step-up authentication with SAML2 (issue 36, item 3; src/saml2/step-up.ts), against the test IdP
 * through the real ACS: a SAML2 session sent back to its IdP asks for `ForceAuthn` (a maximum
 * age) and `RequestedAuthnContext` (the policy's class references, `exact` or `minimum`); the
 * assertion must carry a requested `AuthnContextClassRef` and an `AuthnInstant` after the request,
 * else the sign-in fails (`authn_context`, `auth_time`) without a session. A proven step-up
 * reissues the session with the proof recorded.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { cookieHeaderFrom, storedSession, type TestApp } from '../helpers/app.js'
import { buildSaml2App, postToAcs, setsSessionCookie, SP_ENTITY_ID, startSaml2SignIn, waitForSaml2 } from '../helpers/saml2/app.js'
import { readAuthnRequest, TestIdentityProvider, type TestUser } from '../helpers/saml2/identity-provider.js'

const USER: TestUser = { nameId: 'ada@example.test', attributes: {} }
const PASSWORD = 'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport'
const TWO_FACTOR = 'urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorContract'

describe('SAML2 step-up', () => {
  const idp = new TestIdentityProvider()
  let subject: TestApp

  before(async () => {
    await idp.start()
    subject = await buildSaml2App(idp, {}, {
      configure: (app) => {
        app.authorization.addPolicy({ name: 'TwoFactor', authentication: { acrValues: [TWO_FACTOR], maxAgeSeconds: 300, authnContextComparison: 'minimum' } })
        app.authorization.addPolicy({ name: 'ExactContext', authentication: { acrValues: [TWO_FACTOR] } })
        app.get('/two-factor', { config: { authorize: 'TwoFactor' } }, async () => 'two-factor')
        app.get('/exact', { config: { authorize: 'ExactContext' } }, async () => 'exact')
      }
    })
    await waitForSaml2(subject.app)
  })
  after(async () => {
    await subject?.app.close()
    await idp.stop()
  })

  /** A session signed in with a password (the IdP's default class reference). */
  async function signIn (): Promise<string> {
    const flow = await startSaml2SignIn(subject.app)
    const response = await postToAcs(subject.app, { SAMLResponse: idp.buildResponse({ acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user: USER, inResponseTo: flow.request.id }), RelayState: flow.relayState }, flow.cookie)
    assert.equal(setsSessionCookie(response), true)
    return cookieHeaderFrom(response)
  }

  /** The step-up challenge a page navigation to `path` gets: the AuthnRequest and the cookies (session and correlation). */
  async function stepUpFrom (session: string, path: string): Promise<{ request: ReturnType<typeof readAuthnRequest>, cookie: string }> {
    const response = await subject.app.inject({ url: path, headers: { cookie: session, accept: 'text/html' } })
    assert.equal(response.statusCode, 302)
    const request = readAuthnRequest(String(response.headers.location))
    return { request, cookie: `${session}; ${cookieHeaderFrom(response)}` }
  }

  test('sign-in records the AuthnContextClassRef as acr and the AuthnInstant as auth time', async () => {
    const ticket = await storedSession(subject.app, subject.keyRing, await signIn())
    assert.equal(ticket?.scheme, 'Saml2')
    assert.equal(ticket?.authentication?.acr, PASSWORD)
    assert.ok(Math.abs((ticket?.authentication?.authTime ?? 0) - Date.now() / 1000) < 10)
  })

  test('the AuthnRequest asks for ForceAuthn and RequestedAuthnContext (minimum); without a maximum age, exact and no ForceAuthn', async () => {
    const session = await signIn()
    const { request } = await stepUpFrom(session, '/two-factor')
    assert.equal(request.forceAuthn, true)
    assert.deepEqual(request.requestedAuthnContext, { comparison: 'minimum', classRefs: [TWO_FACTOR] })
    const exact = await stepUpFrom(session, '/exact')
    assert.equal(exact.request.forceAuthn, false)
    assert.deepEqual(exact.request.requestedAuthnContext, { comparison: 'exact', classRefs: [TWO_FACTOR] })
    // An ordinary sign-in asks for neither.
    const plain = await startSaml2SignIn(subject.app)
    assert.equal(plain.request.forceAuthn, false)
    assert.equal(plain.request.requestedAuthnContext, undefined)
  })

  const refused: Array<{ name: string, options: { authnContextClassRef?: string | null, authnInstant?: Date }, failure: string }> = [
    { name: 'no AuthnContextClassRef', options: { authnContextClassRef: null }, failure: 'authn_context' },
    { name: 'a class reference not requested (password)', options: { authnContextClassRef: PASSWORD }, failure: 'authn_context' },
    { name: 'an AuthnInstant from before the request (no fresh authentication)', options: { authnContextClassRef: TWO_FACTOR, authnInstant: new Date(Date.now() - 10 * 60_000) }, failure: 'auth_time' }
  ]
  for (const entry of refused) {
    test(`${entry.name}: refused as ${entry.failure}, no session, the old one kept`, async () => {
      const session = await signIn()
      const { request, cookie } = await stepUpFrom(session, '/two-factor')
      const logFrom = subject.logs.events('external.sign_in.failed').length
      const response = await postToAcs(subject.app, { SAMLResponse: idp.buildResponse({ acsUrl: request.acsUrl, audience: SP_ENTITY_ID, user: USER, inResponseTo: request.id, ...entry.options }), RelayState: request.relayState }, cookie)
      assert.equal(response.statusCode, 302)
      assert.equal(response.headers.location, '/Account/Login?failure=failed')
      assert.equal(setsSessionCookie(response), false)
      assert.deepEqual(subject.logs.events('external.sign_in.failed').slice(logFrom).map((line) => [line.provider, line.failure]), [['Saml2', entry.failure]])
      assert.notEqual(await storedSession(subject.app, subject.keyRing, session), undefined, 'the old session is kept')
    })
  }

  test('the requested class and a fresh AuthnInstant: the session is reissued with the proof, the old one revoked, the route allowed', async () => {
    const session = await signIn()
    const { request, cookie } = await stepUpFrom(session, '/two-factor')
    const response = await postToAcs(subject.app, { SAMLResponse: idp.buildResponse({ acsUrl: request.acsUrl, audience: SP_ENTITY_ID, user: USER, inResponseTo: request.id, authnContextClassRef: TWO_FACTOR }), RelayState: request.relayState }, cookie)
    assert.equal(response.headers.location, '/two-factor')
    assert.equal(setsSessionCookie(response), true)
    const upgraded = cookieHeaderFrom(response)
    assert.equal((await storedSession(subject.app, subject.keyRing, upgraded))?.authentication?.acr, TWO_FACTOR)
    assert.equal(await storedSession(subject.app, subject.keyRing, session), undefined, 'the old session is revoked')
    const allowed = await subject.app.inject({ url: '/two-factor', headers: { cookie: upgraded, accept: 'text/html' } })
    assert.equal(allowed.statusCode, 200)
  })
})
