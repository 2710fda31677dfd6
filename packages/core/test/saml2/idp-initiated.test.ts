/**
 * SAML2 IdP-initiated sign-in done safely (RestartUnsolicitedSignIn) and readiness that tells the
 * truth about expired IdP certificates, against the test IdP over HTTP (inject for the app):
 * - an unsolicited response, valid and signed or not, never signs anyone in: it starts a fresh
 *   SP-initiated flow (AuthnRequest, correlation cookie), whose answer signs in and lands on the
 *   RelayState when that is a local URL (otherwise on /);
 * - when every IdP signing certificate is outside its validity and ValidateCertificates is true,
 *   /health/ready reports Saml2 unhealthy (certificate_expired) and the login page shows it as
 *   unavailable; with ValidateCertificates false it stays available.
 */
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, describe, test } from 'node:test'
import { cookieHeaderFrom, type TestApp } from '../helpers/app.js'
import { buildSaml2App, postToAcs, setsSessionCookie, SP_ENTITY_ID, waitForSaml2 } from '../helpers/saml2/app.js'
import { createSigningKey, expiredValidity } from '../helpers/saml2/certificates.js'
import { readAuthnRequest, TestIdentityProvider, type TestUser } from '../helpers/saml2/identity-provider.js'

const USER: TestUser = { nameId: 'tile@example.test', attributes: { role: ['Administrator'] } }
const ACS = 'http://localhost/Saml2/Acs'

describe('RestartUnsolicitedSignIn', () => {
  const idp = new TestIdentityProvider()
  let subject: TestApp
  before(async () => {
    await idp.start()
    subject = await buildSaml2App(idp, { RestartUnsolicitedSignIn: true })
    await waitForSaml2(subject.app)
  })
  after(async () => {
    await subject?.app.close()
    await idp.stop()
  })

  for (const [relayState, expectedReturn] of [
    ['/api/application-information', '/api/application-information'],
    ['https://evil.example/', '/'],
    ['//evil.example/', '/'],
    [undefined, '/']
  ] as const) {
    test(`an unsolicited response with RelayState ${String(relayState)} signs nobody in and restarts as SP-initiated, returning to ${expectedReturn}`, async () => {
      const unsolicited = idp.buildResponse({ acsUrl: ACS, audience: SP_ENTITY_ID, user: USER })
      const acs = await postToAcs(subject.app, { SAMLResponse: unsolicited, RelayState: relayState })
      assert.equal(acs.statusCode, 302)
      assert.equal(setsSessionCookie(acs), false, 'the unsolicited response itself never signs in')
      const location = String(acs.headers.location)
      assert.ok(location.startsWith(`${idp.origin}/sso?`), 'a fresh AuthnRequest to the IdP')
      const request = readAuthnRequest(location)
      assert.equal(subject.logs.events('saml2.unsolicited.restarted').length > 0, true)

      // The IdP answers the new request; that answer is solicited and signs in.
      const answer = idp.buildResponse({ acsUrl: request.acsUrl, audience: SP_ENTITY_ID, user: USER, inResponseTo: request.id })
      const signedIn = await postToAcs(subject.app, { SAMLResponse: answer, RelayState: request.relayState }, cookieHeaderFrom(acs))
      assert.equal(signedIn.statusCode, 302)
      assert.equal(signedIn.headers.location, expectedReturn)
      assert.equal(setsSessionCookie(signedIn), true)
    })
  }

  test('the unsolicited response cannot complete the restarted flow (its InResponseTo is missing): correlation, no session', async () => {
    const probe = await postToAcs(subject.app, { SAMLResponse: idp.buildResponse({ acsUrl: ACS, audience: SP_ENTITY_ID, user: USER }) })
    const acsUrl = readAuthnRequest(String(probe.headers.location)).acsUrl
    const unsolicited = idp.buildResponse({ acsUrl, audience: SP_ENTITY_ID, user: USER })
    const first = await postToAcs(subject.app, { SAMLResponse: unsolicited })
    const request = readAuthnRequest(String(first.headers.location))
    const wrong = await postToAcs(subject.app, { SAMLResponse: unsolicited, RelayState: request.relayState }, cookieHeaderFrom(first))
    assert.equal(wrong.statusCode, 302)
    assert.equal(wrong.headers.location, '/Account/Login?failure=correlation')
    assert.equal(setsSessionCookie(wrong), false)
    assert.equal(subject.logs.events('external.sign_in.failed').at(-1)?.failure, 'correlation')
  })
})

describe('readiness with expired IdP signing certificates', () => {
  const idp = new TestIdentityProvider()
  before(async () => {
    idp.signingKey = createSigningKey('expired-idp', expiredValidity())
    await idp.start()
  })
  after(async () => { await idp.stop() })

  test('ValidateCertificates true: /health/ready 503 with Saml2 certificate_expired, the login page and challenge say unavailable', async (context) => {
    const subject = await buildSaml2App(idp)
    context.after(async () => { await subject.app.close() })
    let body: { checks?: { providers?: { status: string, reasons?: string[] } } } = {}
    const deadline = Date.now() + 5000
    while (Date.now() < deadline) {
      const ready = await subject.app.inject({ method: 'GET', url: '/health/ready' })
      body = ready.json()
      if (body.checks?.providers?.reasons?.includes('certificate_expired') === true) {
        assert.equal(ready.statusCode, 503)
        break
      }
      await sleep(20)
    }
    assert.deepEqual(body.checks?.providers, { status: 'Unhealthy', unavailable: { configured: 1, runtime: 0 }, reasons: ['certificate_expired'] })
    const login = await subject.app.inject({ method: 'GET', url: '/Account/Login' })
    assert.match(login.body, /<span class="provider unavailable" data-provider="Saml2">SAML2 \(unavailable\)<\/span>/)
    const challenge = await subject.app.inject({ method: 'GET', url: '/External/Challenge?provider=Saml2' })
    assert.equal(challenge.statusCode, 503)
    assert.equal(subject.logs.events('saml2.certificates.expired').length, 1)
  })

  test('ValidateCertificates false: the same IdP is available', async (context) => {
    const subject = await buildSaml2App(idp, { ValidateCertificates: false })
    context.after(async () => { await subject.app.close() })
    await waitForSaml2(subject.app)
    const ready = await subject.app.inject({ method: 'GET', url: '/health/ready' })
    assert.equal(ready.statusCode, 200)
  })
})
