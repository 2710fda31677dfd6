/**
 * SAML Single Logout, SP-initiated (Providers:Saml2:SignOutAtProvider with SigningKey): after
 * POST /Account/Logout has ended the local session, the browser carries a LogoutRequest signed
 * with the SP key (HTTP-Redirect) to the IdP's SingleLogoutService. samlify's IdentityProvider,
 * an independent implementation, verifies that signature against the SP's /Saml2/Metadata,
 * reads the NameID and SessionIndex the IdP issued at sign-in, and answers with a signed
 * LogoutResponse (HTTP-Redirect or HTTP-POST) to /Saml2/Logout, which validates it and returns
 * to the local return URL. Every rejection lands on / with a `saml2.logout.rejected` line.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { antiforgeryFor, cookieHeaderFrom, loadTestConfiguration, type TestApp } from '../helpers/app.js'
import { buildSaml2App, postToAcs, setsSessionCookie, SP_ENTITY_ID, startSaml2SignIn, waitForSaml2 } from '../helpers/saml2/app.js'
import { createSigningKey } from '../helpers/saml2/certificates.js'
import { TestIdentityProvider, type TestUser } from '../helpers/saml2/identity-provider.js'
import { octetStringOf, queryOf, samlify, type SamlifyEntity, type SamlifyIdentityProvider, type SamlifyParseResult, samlifyLogoutIdp, withSingleLogoutService } from '../helpers/saml2/samlify.js'

const ADA: TestUser = { nameId: 'ada@example.test', attributes: {} }

function continueUrlOf (body: string): string {
  const href = /<a id="continue-sign-out" href="([^"]+)">/.exec(body)?.[1]
  assert.ok(href !== undefined, 'the sign-out page links to the IdP')
  return href.replaceAll('&amp;', '&')
}

function sessionIndexIssued (idp: TestIdentityProvider): string {
  const xml = Buffer.from(idp.issuedResponses.at(-1) ?? '', 'base64').toString('utf8')
  const index = /SessionIndex="([^"]+)"/.exec(xml)?.[1]
  assert.ok(index !== undefined)
  return index
}

describe('Saml2 Single Logout (SP-initiated)', () => {
  const idp = new TestIdentityProvider()
  const spKey = createSigningKey('sp-signing')
  let subject: TestApp
  let noSlo: TestApp
  let samlifyIdp: SamlifyIdentityProvider
  let samlifySp: SamlifyEntity
  let unsignedSp: SamlifyEntity

  before(async () => {
    await idp.start()
    idp.documents.set('/metadata-slo', () => withSingleLogoutService(idp.metadata(), `${idp.origin}/slo`))
    subject = await buildSaml2App(idp, { MetadataUrl: `${idp.origin}/metadata-slo`, SigningKey: spKey.privateKeyPem, SigningCertificate: spKey.certificatePem, SignOutAtProvider: true })
    noSlo = await buildSaml2App(idp, { SigningKey: spKey.privateKeyPem, SigningCertificate: spKey.certificatePem, SignOutAtProvider: true })
    await waitForSaml2(subject.app)
    await waitForSaml2(noSlo.app)
    const metadata = (await subject.app.inject({ method: 'GET', url: '/Saml2/Metadata' })).body
    samlifySp = samlify.ServiceProvider({ metadata, wantLogoutResponseSigned: true })
    unsignedSp = samlify.ServiceProvider({ metadata, wantLogoutResponseSigned: false })
    samlifyIdp = samlifyLogoutIdp(idp, `${idp.origin}/slo`)
  })
  after(async () => {
    await subject?.app.close()
    await noSlo?.app.close()
    await idp.stop()
  })

  async function signIn (app: TestApp): Promise<string> {
    const flow = await startSaml2SignIn(app.app)
    const response = await postToAcs(app.app, { SAMLResponse: idp.buildResponse({ acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user: ADA, inResponseTo: flow.request.id }), RelayState: flow.relayState }, flow.cookie)
    assert.ok(setsSessionCookie(response))
    return cookieHeaderFrom(response)
  }

  async function logout (app: TestApp, cookie: string, returnUrl = '/Account/Login?signedOut=1') {
    const { token, cookie: withAntiforgery } = await antiforgeryFor(app.app, cookie)
    return await app.app.inject({
      method: 'POST',
      url: '/Account/Logout',
      headers: { cookie: withAntiforgery, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ __RequestVerificationToken: token, returnUrl }).toString()
    })
  }

  /** Signs in, logs out, and has samlify's IdP verify and parse the LogoutRequest. */
  async function logoutAtIdp (): Promise<{ parsed: SamlifyParseResult, relayState: string, cookie: string, sessionIndex: string }> {
    const cookie = await signIn(subject)
    const sessionIndex = sessionIndexIssued(idp)
    const response = await logout(subject, cookie)
    assert.equal(response.statusCode, 200)
    assert.equal(response.headers['cache-control'], 'no-store')
    const location = continueUrlOf(response.body)
    assert.ok(location.startsWith(`${idp.origin}/slo?`))
    const parsed = await samlifyIdp.parseLogoutRequest(samlifySp, 'redirect', { query: queryOf(location), octetString: octetStringOf(location) })
    return { parsed, relayState: queryOf(location).RelayState ?? '', cookie, sessionIndex }
  }

  test('the metadata publishes the SingleLogoutService (Redirect and POST) and the signing key', async () => {
    const metadata = (await subject.app.inject({ method: 'GET', url: '/Saml2/Metadata' })).body
    assert.match(metadata, /SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="http:\/\/localhost(:\d+)?\/Saml2\/Logout"/)
    assert.match(metadata, /SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"/)
    assert.match(metadata, /AuthnRequestsSigned="true"/)
  })

  test('logout ends the local session, samlify verifies the signed LogoutRequest naming the NameID and SessionIndex; its signed LogoutResponse returns to the local URL', async () => {
    const { parsed, relayState, cookie, sessionIndex } = await logoutAtIdp()
    assert.equal(parsed.extract.nameID, ADA.nameId)
    assert.deepEqual(parsed.extract.sessionIndex, sessionIndex)
    assert.equal(parsed.extract.issuer, SP_ENTITY_ID)
    assert.equal(parsed.sigAlg, 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256')
    // The local session is over before the IdP is even contacted.
    const api = await subject.app.inject({ method: 'GET', url: '/api/application-information', headers: { cookie, accept: 'application/json' } })
    assert.equal(api.statusCode, 401)

    const answer = samlifyIdp.createLogoutResponse(samlifySp, parsed as { extract: { request: { id: string } } }, 'redirect', relayState)
    const back = new URL(answer.context)
    assert.equal(back.pathname, '/Saml2/Logout')
    const from = subject.logs.lines.length
    const returned = await subject.app.inject({ method: 'GET', url: `${back.pathname}${back.search}` })
    assert.equal(returned.statusCode, 302)
    assert.equal(returned.headers.location, '/Account/Login?signedOut=1')
    assert.equal(subject.logs.records().slice(from).filter((record) => record.event === 'saml2.logout.completed').length, 1)

    // The same LogoutResponse again: used.
    const again = await subject.app.inject({ method: 'GET', url: `${back.pathname}${back.search}` })
    assert.equal(again.headers.location, '/')
    assert.ok(subject.logs.records().slice(from).some((record) => record.event === 'saml2.logout.rejected' && record.failure === 'replay'))

    // Neither message nor the SessionIndex reaches a log line (request logging included); the
    // NameID only as the `subject` of the audit lines (docs/audit-events.md).
    const logText = subject.logs.text()
    const sent = queryOf(answer.context).SAMLResponse ?? ''
    for (const value of [sent, encodeURIComponent(sent), sessionIndex, relayState]) assert.equal(logText.includes(value), false)
    for (const record of subject.logs.records()) {
      if (!JSON.stringify(record).includes(ADA.nameId)) continue
      assert.equal(record.subject, ADA.nameId, `${String(record.event)} names the NameID as its subject`)
      assert.equal(JSON.stringify({ ...record, subject: undefined }).includes(ADA.nameId), false, `${String(record.event)} names the NameID elsewhere`)
    }
  })

  for (const [name, change, failure] of [
    ['an unsigned LogoutResponse', 'unsigned', 'signature'],
    ['a LogoutResponse brought back with an unknown RelayState', 'tampered', 'correlation'],
    ['a LogoutResponse whose Signature bytes were altered', 'bad-signature', 'signature'],
    ['a second SAMLResponse under an encoded parameter name', 'smuggled', 'malformed']
  ] as const) {
    test(`${name}: rejected (${failure}), back to /`, async () => {
      const { parsed, relayState } = await logoutAtIdp()
      const answer = samlifyIdp.createLogoutResponse(change === 'unsigned' ? unsignedSp : samlifySp, parsed as { extract: { request: { id: string } } }, 'redirect', relayState)
      const back = new URL(answer.context)
      if (change === 'tampered') back.searchParams.set('RelayState', 'AAAAAAAAAAAAAAAAAAAAAA')
      if (change === 'bad-signature') back.searchParams.set('Signature', Buffer.from('forged').toString('base64'))
      const search = change === 'smuggled' ? `${back.search}&SAMLRespons%65=${encodeURIComponent(Buffer.from('<samlp:LogoutResponse/>').toString('base64'))}` : back.search
      const from = subject.logs.lines.length
      const returned = await subject.app.inject({ method: 'GET', url: `${back.pathname}${search}` })
      assert.equal(returned.statusCode, 302)
      assert.equal(returned.headers.location, '/')
      const rejected = subject.logs.records().slice(from).filter((record) => record.event === 'saml2.logout.rejected')
      assert.deepEqual(rejected.map((record) => record.failure), [failure])
    })
  }

  test('a LogoutResponse answering another LogoutRequest (InResponseTo) is rejected as correlation', async () => {
    const first = await logoutAtIdp()
    const second = await logoutAtIdp()
    // The IdP answers the first request, but the browser brings the second's RelayState.
    const answer = samlifyIdp.createLogoutResponse(samlifySp, first.parsed as { extract: { request: { id: string } } }, 'redirect', second.relayState)
    const back = new URL(answer.context)
    const from = subject.logs.lines.length
    const returned = await subject.app.inject({ method: 'GET', url: `${back.pathname}${back.search}` })
    assert.equal(returned.headers.location, '/')
    assert.deepEqual(subject.logs.records().slice(from).filter((record) => record.event === 'saml2.logout.rejected').map((record) => record.failure), ['correlation'])
  })

  test('the RelayState of another pending logout swapped into a signed LogoutResponse: the query signature fails', async () => {
    const first = await logoutAtIdp()
    const second = await logoutAtIdp()
    const back = new URL(samlifyIdp.createLogoutResponse(samlifySp, second.parsed as { extract: { request: { id: string } } }, 'redirect', first.relayState).context)
    back.searchParams.set('RelayState', second.relayState)
    const from = subject.logs.lines.length
    const returned = await subject.app.inject({ method: 'GET', url: `${back.pathname}${back.search}` })
    assert.equal(returned.headers.location, '/')
    assert.deepEqual(subject.logs.records().slice(from).filter((record) => record.event === 'saml2.logout.rejected').map((record) => record.failure), ['signature'])
  })

  test('HTTP-POST binding: samlify\'s XML-signed LogoutResponse is accepted; the same message with its Issuer changed is not', async () => {
    const { parsed, relayState } = await logoutAtIdp()
    const answer = samlifyIdp.createLogoutResponse(samlifySp, parsed as { extract: { request: { id: string } } }, 'post', relayState)
    const post = async (samlResponse: string, relay: string) => await subject.app.inject({
      method: 'POST',
      url: '/Saml2/Logout',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ SAMLResponse: samlResponse, RelayState: relay }).toString()
    })
    const from = subject.logs.lines.length
    const returned = await post(answer.context, relayState)
    assert.equal(returned.headers.location, '/Account/Login?signedOut=1')
    assert.equal(subject.logs.records().slice(from).filter((record) => record.event === 'saml2.logout.completed').length, 1)

    const other = await logoutAtIdp()
    const signed = Buffer.from(samlifyIdp.createLogoutResponse(samlifySp, other.parsed as { extract: { request: { id: string } } }, 'post', other.relayState).context, 'base64').toString('utf8')
    const forged = Buffer.from(signed.replace(idp.entityId, 'http://localhost/evil-idp'), 'utf8').toString('base64')
    const rejected = await post(forged, other.relayState)
    assert.equal(rejected.headers.location, '/')
    assert.ok(subject.logs.records().slice(from).some((record) => record.event === 'saml2.logout.rejected' && record.failure === 'signature'))
  })

  test('an IdP without a SingleLogoutService: logout stays local and goes straight to the return URL', async () => {
    const cookie = await signIn(noSlo)
    const response = await logout(noSlo, cookie, '/Account/Login?signedOut=1')
    assert.equal(response.statusCode, 302)
    assert.equal(response.headers.location, '/Account/Login?signedOut=1')
  })

  test('SignOutAtProvider without SigningKey stops startup naming SigningKey', () => {
    const loaded = loadTestConfiguration({
      nodeEnv: 'development',
      settings: { Authentication: { Providers: { Saml2: { Enabled: true, EntityId: SP_ENTITY_ID, MetadataUrl: 'http://127.0.0.1:9/metadata', SignOutAtProvider: true } } } }
    })
    assert.deepEqual(loaded.errors.map((error) => error.key), ['ProjectTemplate:Authentication:Providers:Saml2:SigningKey'])
  })
})
