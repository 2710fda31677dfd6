/**
 * The Saml2 provider's surface over HTTP: availability while IdP metadata is missing or invalid,
 * the AuthnRequest and correlation cookie, the SP metadata document, a successful sign-in with
 * claims from attributes, a response larger than the global form limit, the configuration
 * switches (LoadMetadata false, RequireSignedAssertions false, AllowUnsolicitedResponses) and the
 * metadata refresh that follows a signature failure (IdP key rollover).
 */
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, describe, test } from 'node:test'
import { DOMParser } from '@xmldom/xmldom'
import { build, cookieHeaderFrom, storedSession, type TestApp } from '../helpers/app.js'
import { assertNoLeak, buildSaml2App, postToAcs, setsSessionCookie, SP_ENTITY_ID, startSaml2SignIn, waitForSaml2 } from '../helpers/saml2/app.js'
import { createSigningKey } from '../helpers/saml2/certificates.js'
import { TestIdentityProvider, type TestUser } from '../helpers/saml2/identity-provider.js'
import { waitFor } from '../helpers/wait.js'

const ADMIN: TestUser = { nameId: 'grace@example.test', attributes: { role: ['Administrator', 'Auditor'], displayname: ['Grace Hopper'] } }

async function signInOverHttp (subject: TestApp, idp: TestIdentityProvider, user: TestUser, returnUrl = '/') {
  const flow = await startSaml2SignIn(subject.app, returnUrl)
  const samlResponse = idp.buildResponse({ acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user, inResponseTo: flow.request.id })
  return await postToAcs(subject.app, { SAMLResponse: samlResponse, RelayState: flow.relayState }, flow.cookie)
}

describe('Saml2 while the IdP metadata cannot be used', () => {
  const idp = new TestIdentityProvider()
  before(async () => {
    await idp.start()
    idp.documents.set('/metadata-with-doctype', () => `<!DOCTYPE md [<!ENTITY x "y">]>${idp.metadata()}`)
  })
  after(async () => { await idp.stop() })

  for (const [name, path, reason] of [
    ['unreachable', '/no-such-document', 'metadata_unreachable'],
    ['carrying a DOCTYPE', '/metadata-with-doctype', 'metadata_invalid']
  ] as const) {
    test(`metadata ${name}: the app starts, health/ready is 503 counting one configured provider down (${reason}), the login page marks it unavailable`, async (context) => {
      const subject = await build(context, {
        nodeEnv: 'development',
        testSignIn: false,
        settings: { Authentication: { Providers: { Saml2: { Enabled: true, EntityId: SP_ENTITY_ID, MetadataUrl: `${idp.origin}${path}` } } } }
      })
      // Bounded, and generous: on a loaded machine the first metadata fetch can take seconds.
      const deadline = Date.now() + 20_000
      let body: { checks?: { providers?: { status: string, reasons?: string[] } } } = {}
      while (Date.now() < deadline) {
        const ready = await subject.app.inject({ method: 'GET', url: '/health/ready' })
        assert.equal(ready.statusCode, 503)
        body = ready.json()
        if (body.checks?.providers?.reasons?.includes(reason) === true) break
        await sleep(20)
      }
      assert.deepEqual(body.checks?.providers, { status: 'Unhealthy', unavailable: { configured: 1, runtime: 0 }, reasons: [reason] })
      const login = await subject.app.inject({ method: 'GET', url: '/Account/Login' })
      assert.match(login.body, /<span class="provider unavailable" data-provider="Saml2">SAML2 \(unavailable\)<\/span>/)
      const challenge = await subject.app.inject({ method: 'GET', url: '/External/Challenge?provider=Saml2' })
      assert.equal(challenge.statusCode, 503)
      const acs = await postToAcs(subject.app, { SAMLResponse: 'AAAA', RelayState: 'x' })
      assert.equal(acs.statusCode, 302)
      assert.equal(acs.headers.location, '/Account/Login?failure=unavailable')
      assert.equal(subject.logs.events('saml2.metadata.failed').at(-1)?.reason, reason)
    })
  }
})

describe('Saml2 with metadata loaded from MetadataUrl', () => {
  const idp = new TestIdentityProvider()
  let subject: TestApp

  before(async () => {
    await idp.start()
    subject = await buildSaml2App(idp)
    await waitForSaml2(subject.app)
  })
  after(async () => { await subject?.app.close(); await idp.stop() })

  test('health/ready is 200 and the login page links the SAML2 challenge', async () => {
    const ready = await subject.app.inject({ method: 'GET', url: '/health/ready' })
    assert.equal(ready.statusCode, 200)
    const login = await subject.app.inject({ method: 'GET', url: '/Account/Login' })
    assert.match(login.body, /<a class="provider" data-provider="Saml2" href="\/External\/Challenge\?provider=Saml2">SAML2<\/a>/)
  })

  test('the challenge redirects to the IdP SSO URL with an AuthnRequest and a SameSite=None correlation cookie', async () => {
    const response = await subject.app.inject({ method: 'GET', url: '/External/Challenge?provider=Saml2&returnUrl=%2Fapi%2Fapplication-information' })
    assert.equal(response.statusCode, 302)
    const location = new URL(String(response.headers.location))
    assert.equal(`${location.origin}${location.pathname}`, `${idp.origin}/sso`)
    const flowId = location.searchParams.get('RelayState') ?? ''
    assert.match(flowId, /^[A-Za-z0-9_-]{22}$/)
    const correlation = response.cookies.find((cookie) => /^__Host-ProjectTemplate\.Correlation\.[0-3]$/.test(cookie.name))
    assert.ok(correlation !== undefined)
    assert.equal(correlation.sameSite, 'None')
    assert.equal(correlation.secure, true)
    assert.equal(correlation.httpOnly, true)
    assert.equal(correlation.path, '/')
    const seen = idp.requests.length
    const request = (await import('../helpers/saml2/identity-provider.js')).readAuthnRequest(location.href)
    assert.equal(idp.requests.length, seen)
    assert.equal(request.issuer, SP_ENTITY_ID)
    assert.equal(request.acsUrl, 'http://localhost:80/Saml2/Acs')
    assert.match(request.id, /^_[0-9a-f]{40}$/)
    assert.equal(correlation.value.includes(request.id), false, 'the request id is sealed, not readable')
  })

  test('the SP metadata is published anonymously at /Saml2/Metadata', async () => {
    const response = await subject.app.inject({ method: 'GET', url: '/Saml2/Metadata' })
    assert.equal(response.statusCode, 200)
    assert.match(String(response.headers['content-type']), /^application\/samlmetadata\+xml/)
    const root = new DOMParser().parseFromString(response.body, 'text/xml').documentElement
    assert.equal(root?.getAttribute('entityID'), SP_ENTITY_ID)
    const sp = root?.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:metadata', 'SPSSODescriptor')[0]
    assert.equal(sp?.getAttribute('WantAssertionsSigned'), 'true')
    const acs = sp?.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:metadata', 'AssertionConsumerService')[0]
    assert.equal(acs?.getAttribute('Location'), 'http://localhost:80/Saml2/Acs')
    assert.equal(acs?.getAttribute('Binding'), 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST')
    assert.ok(subject.app.authorization.anonymousRoutes().includes('GET /Saml2/Metadata'))
    assert.ok(subject.app.authorization.anonymousRoutes().includes('POST /Saml2/Acs'))
  })

  test('a signed response signs the user in, returns to the returnUrl, and each attribute value becomes a claim', async () => {
    const response = await signInOverHttp(subject, idp, ADMIN, '/api/application-information')
    assert.equal(response.statusCode, 302)
    assert.equal(response.headers.location, '/api/application-information')
    assert.equal(setsSessionCookie(response), true)
    const cookie = cookieHeaderFrom(response)
    const administration = await subject.app.inject({ method: 'GET', url: '/api/application-information/administration', headers: { cookie } })
    assert.equal(administration.statusCode, 200)
    assert.deepEqual(administration.json(), { subject: 'grace@example.test', name: 'Grace Hopper' })
    const home = await subject.app.inject({ method: 'GET', url: '/', headers: { cookie } })
    for (const row of ['<td>application:role</td><td>Administrator</td>', '<td>application:role</td><td>Auditor</td>', '<td>NameID</td><td>grace@example.test</td>']) {
      assert.ok(home.body.includes(row), row)
    }
  })

  test('a response larger than the 16 KB form limit is accepted at the ACS (route body limit 256 KB); complex attribute values are not claims', async () => {
    const flow = await startSaml2SignIn(subject.app)
    const samlResponse = idp.buildResponse({
      acsUrl: flow.request.acsUrl,
      audience: SP_ENTITY_ID,
      user: ADMIN,
      inResponseTo: flow.request.id,
      extraAttributeXml: `<saml:Attribute Name="urn:test:blob"><saml:AttributeValue><t:Blob xmlns:t="urn:test">${'x'.repeat(40 * 1024)}</t:Blob></saml:AttributeValue></saml:Attribute>`
    })
    assert.ok(samlResponse.length > 48 * 1024)
    const response = await postToAcs(subject.app, { SAMLResponse: samlResponse, RelayState: flow.relayState }, flow.cookie)
    assert.equal(response.statusCode, 302)
    assert.equal(setsSessionCookie(response), true)
    const home = await subject.app.inject({ method: 'GET', url: '/', headers: { cookie: cookieHeaderFrom(response) } })
    assert.equal(home.body.includes('urn:test:blob'), false)
  })

  test('a principal in 600 groups signs in: the session lives in the state store, the cookie stays small', async () => {
    const groups = Array.from({ length: 600 }, (_, index) => `group-${index}-${'x'.repeat(40)}`)
    const crowded: TestUser = { nameId: 'crowded@example.test', attributes: { memberOf: groups } }
    const response = await signInOverHttp(subject, idp, crowded)
    assert.equal(response.statusCode, 302)
    assert.equal(response.headers.location, '/')
    assert.equal(setsSessionCookie(response), true)
    const cookie = cookieHeaderFrom(response)
    assert.ok(cookie.length < 300, `one small cookie (${cookie.length} characters)`)
    const stored = await storedSession(subject.app, subject.keyRing, cookie)
    assert.equal(stored?.claims.filter((claim) => claim.value.startsWith('group-')).length, 1200, 'every group, as the original and the normalized claim')
  })

  test('a signature failure after an IdP key rollover refreshes the metadata, and the next sign-in succeeds', async () => {
    const fetches = idp.metadataFetches
    const loads = subject.logs.events('saml2.metadata.loaded').length
    idp.signingKey = createSigningKey('rolled-over-idp')
    const first = await signInOverHttp(subject, idp, ADMIN)
    assert.equal(setsSessionCookie(first), false)
    assert.equal(subject.logs.events('external.sign_in.failed').at(-1)?.failure, 'signature')
    await waitFor(() => subject.logs.events('saml2.metadata.loaded').length > loads, 'the refreshed metadata to be loaded', 20_000)
    assert.ok(idp.metadataFetches > fetches, 'metadata fetched again')
    assert.ok(subject.logs.events('saml2.metadata.loaded').length > loads, 'the refreshed metadata was loaded')
    const second = await signInOverHttp(subject, idp, ADMIN)
    assert.equal(setsSessionCookie(second), true)
  })

  test('no log line carries a SAMLResponse', () => {
    assertNoLeak(subject.logs.text(), idp.issuedResponses)
  })
})

describe('Saml2 configuration switches', () => {
  const idp = new TestIdentityProvider()
  before(async () => { await idp.start() })
  after(async () => { await idp.stop() })

  test('LoadMetadata false: the Idp* extension keys describe the IdP and sign-in works without fetching metadata', async (context) => {
    const subject = await buildSaml2App(idp, {
      LoadMetadata: false,
      MetadataUrl: '',
      IdpEntityId: idp.entityId,
      IdpSingleSignOnUrl: `${idp.origin}/sso`,
      IdpSigningCertificates: [idp.signingKey.certificatePem]
    })
    context.after(async () => { await subject.app.close() })
    assert.equal(subject.app.authentication.providers.get('Saml2')?.status().available, true)
    const response = await signInOverHttp(subject, idp, ADMIN)
    assert.equal(setsSessionCookie(response), true)
    assert.equal(idp.metadataFetches, 0)
  })

  test('RequireSignedAssertions false: a signed response around an unsigned assertion is accepted; nothing signed still is not', async (context) => {
    const subject = await buildSaml2App(idp, { RequireSignedAssertions: false })
    context.after(async () => { await subject.app.close() })
    await waitForSaml2(subject.app)
    let flow = await startSaml2SignIn(subject.app)
    const signedResponse = idp.buildResponse({ acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user: ADMIN, inResponseTo: flow.request.id, signAssertion: false, signResponse: true })
    assert.equal(setsSessionCookie(await postToAcs(subject.app, { SAMLResponse: signedResponse, RelayState: flow.relayState }, flow.cookie)), true)
    flow = await startSaml2SignIn(subject.app)
    const unsigned = idp.buildResponse({ acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user: ADMIN, inResponseTo: flow.request.id, signAssertion: false })
    assert.equal(setsSessionCookie(await postToAcs(subject.app, { SAMLResponse: unsigned, RelayState: flow.relayState }, flow.cookie)), false)
    assert.equal(subject.logs.events('external.sign_in.failed').at(-1)?.failure, 'signature')
  })

  test('AllowUnsolicitedResponses true: an IdP-initiated response signs in to /, one claiming an InResponseTo without a flow does not', async (context) => {
    const subject = await buildSaml2App(idp, { AllowUnsolicitedResponses: true })
    context.after(async () => { await subject.app.close() })
    await waitForSaml2(subject.app)
    const acsUrl = 'http://localhost:80/Saml2/Acs'
    const unsolicited = await postToAcs(subject.app, { SAMLResponse: idp.buildResponse({ acsUrl, audience: SP_ENTITY_ID, user: ADMIN }) })
    assert.equal(unsolicited.headers.location, '/')
    assert.equal(setsSessionCookie(unsolicited), true)
    const orphan = await postToAcs(subject.app, { SAMLResponse: idp.buildResponse({ acsUrl, audience: SP_ENTITY_ID, user: ADMIN, inResponseTo: '_0123456789abcdef0123456789abcdef' }) })
    assert.equal(setsSessionCookie(orphan), false)
    assert.equal(subject.logs.events('external.sign_in.failed').at(-1)?.failure, 'correlation')
  })
})
