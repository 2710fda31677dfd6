/**
 * Hostile SAML responses against the real ACS, each signed (or not) with real XML-DSig by the
 * test IdP: every one ends without a session cookie, without a 5xx, with a safe redirect to the
 * login page and a log line naming the failure class; no log line carries a SAMLResponse.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { testStateStore, type TestApp } from '../helpers/app.js'
import { buildSaml2App, postToAcs, setsSessionCookie, SP_ENTITY_ID, startSaml2SignIn, waitForSaml2, assertNoLeak, type StartedFlow } from '../helpers/saml2/app.js'
import { createSigningKey, expiredValidity } from '../helpers/saml2/certificates.js'
import { TestIdentityProvider, type ResponseOptions, type TestUser } from '../helpers/saml2/identity-provider.js'
import { readResponseEnvelope, Saml2ResponseError, validateResponse } from '../../src/saml2/service-provider.js'
import { ReplayCache } from '../../src/state/replay-cache.js'
import { waitFor } from '../helpers/wait.js'

const USER: TestUser = { nameId: 'ada@example.test', attributes: { role: ['Administrator'] } }
const MINUTE = 60_000

interface HostileCase {
  readonly name: string
  readonly failure: string
  /** The response, RelayState and cookie to post, given a freshly started flow. */
  readonly build: (context: { idp: TestIdentityProvider, flow: StartedFlow, other: StartedFlow, base: ResponseOptions }) => { SAMLResponse: string, RelayState?: string | undefined, cookie?: string }
}

const otherKey = createSigningKey('not-the-idp')

/** Replaces the signed NameID text after signing; canonicalization ignores the comment. */
const injectComment = (xml: string): string => xml.replace('victim@example.test.attacker.test', 'victim@example.test<!---->.attacker.test')

const CASES: readonly HostileCase[] = [
  { name: 'unsigned assertion', failure: 'signature', build: ({ idp, flow, base }) => ({ SAMLResponse: idp.buildResponse({ ...base, signAssertion: false }), RelayState: flow.relayState }) },
  { name: 'assertion signed by another certificate', failure: 'signature', build: ({ idp, flow, base }) => ({ SAMLResponse: idp.buildResponse({ ...base, signingKey: otherKey }), RelayState: flow.relayState }) },
  { name: 'unsigned assertion inside a signed response (RequireSignedAssertions)', failure: 'assertion_unsigned', build: ({ idp, flow, base }) => ({ SAMLResponse: idp.buildResponse({ ...base, signAssertion: false, signResponse: true }), RelayState: flow.relayState }) },
  { name: 'wrong audience', failure: 'audience', build: ({ idp, flow, base }) => ({ SAMLResponse: idp.buildResponse({ ...base, audience: 'http://127.0.0.1/another-sp' }), RelayState: flow.relayState }) },
  { name: 'expired conditions', failure: 'expired', build: ({ idp, flow, base }) => ({ SAMLResponse: idp.buildResponse({ ...base, notBefore: new Date(Date.now() - 30 * MINUTE), notOnOrAfter: new Date(Date.now() - 10 * MINUTE) }), RelayState: flow.relayState }) },
  { name: 'NotBefore in the future', failure: 'expired', build: ({ idp, flow, base }) => ({ SAMLResponse: idp.buildResponse({ ...base, notBefore: new Date(Date.now() + 10 * MINUTE), notOnOrAfter: new Date(Date.now() + 20 * MINUTE) }), RelayState: flow.relayState }) },
  { name: 'unsolicited response', failure: 'unsolicited', build: ({ idp, base }) => ({ SAMLResponse: idp.buildResponse({ ...base, inResponseTo: undefined }), cookie: '' }) },
  { name: 'wrong Destination', failure: 'destination', build: ({ idp, flow, base }) => ({ SAMLResponse: idp.buildResponse({ ...base, destination: 'http://127.0.0.1:9/Saml2/Acs' }), RelayState: flow.relayState }) },
  { name: 'wrong Recipient', failure: 'destination', build: ({ idp, flow, base }) => ({ SAMLResponse: idp.buildResponse({ ...base, recipient: 'http://127.0.0.1:9/Saml2/Acs' }), RelayState: flow.relayState }) },
  { name: 'wrong Issuer', failure: 'issuer', build: ({ idp, flow, base }) => ({ SAMLResponse: idp.buildResponse({ ...base, issuer: 'http://localhost/another-idp' }), RelayState: flow.relayState }) },
  {
    name: 'DOCTYPE with entity expansion',
    failure: 'malformed',
    build: ({ idp, flow, base }) => ({
      SAMLResponse: idp.buildResponse({ ...base, afterSigning: (xml) => `<!DOCTYPE r [<!ENTITY a "${'x'.repeat(64)}"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>${xml}` }),
      RelayState: flow.relayState
    })
  },
  {
    name: 'comment injected inside a signed NameID',
    failure: 'malformed',
    build: ({ idp, flow, base }) => ({ SAMLResponse: idp.buildResponse({ ...base, user: { nameId: 'victim@example.test.attacker.test', attributes: {} }, afterSigning: injectComment }), RelayState: flow.relayState })
  },
  { name: 'missing InResponseTo in a started flow', failure: 'correlation', build: ({ idp, flow, base }) => ({ SAMLResponse: idp.buildResponse({ ...base, inResponseTo: undefined }), RelayState: flow.relayState }) },
  { name: 'mismatched InResponseTo', failure: 'correlation', build: ({ idp, flow, base }) => ({ SAMLResponse: idp.buildResponse({ ...base, inResponseTo: '_0123456789abcdef0123456789abcdef' }), RelayState: flow.relayState }) },
  { name: 'assertion InResponseTo differs from the response', failure: 'correlation', build: ({ idp, flow, base }) => ({ SAMLResponse: idp.buildResponse({ ...base, inResponseTo: '_0123456789abcdef0123456789abcdef', responseInResponseTo: flow.request.id }), RelayState: flow.relayState }) },
  { name: 'missing correlation cookie', failure: 'correlation', build: ({ idp, flow, base }) => ({ SAMLResponse: idp.buildResponse(base), RelayState: flow.relayState, cookie: '' }) },
  { name: 'missing RelayState', failure: 'correlation', build: ({ idp, base }) => ({ SAMLResponse: idp.buildResponse(base) }) },
  { name: 'RelayState and cookie of another flow', failure: 'correlation', build: ({ idp, other, base }) => ({ SAMLResponse: idp.buildResponse(base), RelayState: other.relayState, cookie: other.cookie }) },
  {
    name: 'XSW: a second, unsigned assertion beside the signed one',
    failure: 'malformed',
    build: ({ idp, flow, base }) => ({
      SAMLResponse: idp.buildResponse({ ...base, afterSigning: (xml) => xml.replace('<saml:Assertion ', '<saml:Assertion ID="_evil" Version="2.0" IssueInstant="2026-01-01T00:00:00Z"><saml:Issuer>x</saml:Issuer></saml:Assertion><saml:Assertion ') }),
      RelayState: flow.relayState
    })
  },
  {
    name: 'XSW: signed assertion moved into Extensions, forged assertion in its place',
    failure: 'signature',
    build: ({ idp, flow, base }) => ({
      SAMLResponse: idp.buildResponse({
        ...base,
        afterSigning: (xml) => {
          const start = xml.indexOf('<saml:Assertion ')
          const end = xml.indexOf('</saml:Assertion>') + '</saml:Assertion>'.length
          const signed = xml.slice(start, end)
          const forged = signed.replace('ada@example.test', 'mallory@example.test').replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, '')
          return `${xml.slice(0, start)}<samlp:Extensions>${signed}</samlp:Extensions>${forged}${xml.slice(end)}`
        }
      }),
      RelayState: flow.relayState
    })
  },
  { name: 'not base64', failure: 'malformed', build: ({ flow }) => ({ SAMLResponse: '<samlp:Response/>', RelayState: flow.relayState }) }
]

function assertRejected (subject: TestApp, response: Awaited<ReturnType<typeof postToAcs>>, failure: string, logFrom: number): void {
  assert.ok(response.statusCode < 500, `no 5xx (got ${response.statusCode})`)
  assert.equal(response.statusCode, 302)
  assert.match(String(response.headers.location), /^\/Account\/Login\?failure=[a-z]+$/)
  assert.equal(setsSessionCookie(response), false, 'no session cookie')
  const events = subject.logs.events('external.sign_in.failed').slice(logFrom)
  assert.deepEqual(events.map((event) => [event.provider, event.failure]), [['Saml2', failure]])
}

describe('SAML2 ACS refuses hostile responses', () => {
  const idp = new TestIdentityProvider()
  let subject: TestApp
  const started = Date.now()

  before(async () => {
    await idp.start()
    subject = await buildSaml2App(idp)
    await waitForSaml2(subject.app)
  })

  after(async () => {
    await subject?.app.close()
    await idp.stop()
    assert.ok(Date.now() - started < 60_000, 'bounded run time')
  })

  for (const hostile of CASES) {
    test(`${hostile.name}: no session, failure class ${hostile.failure}`, async () => {
      const flow = await startSaml2SignIn(subject.app)
      const other = await startSaml2SignIn(subject.app)
      const base: ResponseOptions = { acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user: USER, inResponseTo: flow.request.id }
      const posted = hostile.build({ idp, flow, other, base })
      const logFrom = subject.logs.events('external.sign_in.failed').length
      const response = await postToAcs(subject.app, posted, posted.cookie ?? flow.cookie)
      assertRejected(subject, response, hostile.failure, logFrom)
    })
  }

  test('a replayed response is refused the second time (replay)', async () => {
    const flow = await startSaml2SignIn(subject.app)
    const samlResponse = idp.buildResponse({ acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user: USER, inResponseTo: flow.request.id })
    const first = await postToAcs(subject.app, { SAMLResponse: samlResponse, RelayState: flow.relayState }, flow.cookie)
    assert.equal(first.statusCode, 302)
    assert.equal(first.headers.location, '/')
    assert.equal(setsSessionCookie(first), true)
    const logFrom = subject.logs.events('external.sign_in.failed').length
    const replayed = await postToAcs(subject.app, { SAMLResponse: samlResponse, RelayState: flow.relayState }, flow.cookie)
    assertRejected(subject, replayed, 'replay', logFrom)
  })

  test('no log line carries a SAMLResponse', () => {
    assert.ok(idp.issuedResponses.length >= CASES.length)
    assertNoLeak(subject.logs.text(), idp.issuedResponses)
  })
})

describe('SAML2 with ValidateCertificates true refuses an expired IdP signing certificate', () => {
  const idp = new TestIdentityProvider()
  let subject: TestApp

  before(async () => {
    await idp.start()
    idp.signingKey = createSigningKey('expired-idp', expiredValidity())
    subject = await buildSaml2App(idp, { ValidateCertificates: true })
    await waitFor(() => subject.logs.events('saml2.metadata.loaded').length > 0, 'the metadata to load', 5000)
  })

  after(async () => {
    await subject?.app.close()
    await idp.stop()
  })

  test('no sign-in can start (certificate_expired), and a response signed with the expired certificate posted anyway creates no session', async () => {
    assert.deepEqual(subject.app.authentication.providers.get('Saml2')?.status(), { available: false, reason: 'certificate_expired' })
    assert.equal((await subject.app.inject({ method: 'GET', url: '/External/Challenge?provider=Saml2' })).statusCode, 503)
    const samlResponse = idp.buildResponse({ acsUrl: 'http://localhost:80/Saml2/Acs', audience: SP_ENTITY_ID, user: USER })
    const response = await postToAcs(subject.app, { SAMLResponse: samlResponse })
    assertRejected(subject, response, 'unsolicited', 0)
    assert.equal(subject.logs.events('saml2.certificates.outside_validity').length >= 1, true)
    assertNoLeak(subject.logs.text(), idp.issuedResponses)
  })

  test('the ACS validation itself still refuses the expired certificate (certificate), should a flow exist', async () => {
    const description = { entityId: idp.entityId, singleSignOnUrl: `${idp.origin}/sso`, signingCertificates: [idp.signingKey.certificateBase64] }
    const acsUrl = 'http://127.0.0.1/Saml2/Acs'
    const envelope = readResponseEnvelope(idp.buildResponse({ acsUrl, audience: SP_ENTITY_ID, user: USER, inResponseTo: '_request-1' }))
    await assert.rejects(validateResponse({
      envelope,
      settings: { entityId: SP_ENTITY_ID, requireSignedAssertions: true, validateCertificates: true, allowUnsolicitedResponses: false, clockSkewSeconds: 60, sectionKey: 'ProjectTemplate:Authentication:Providers:Saml2' },
      idp: description,
      acsUrl,
      expectedRequestId: '_request-1',
      replayCache: new ReplayCache(testStateStore(), 'saml2-assertion')
    }), (error: unknown) => error instanceof Saml2ResponseError && error.failure === 'certificate')
  })
})
