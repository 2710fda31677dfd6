/**
 * SAML Single Logout started at the IdP (SAML Profiles 4.4; Providers:Saml2:SignOutAtProvider with
 * SigningKey): the test IdP sends a signed LogoutRequest (HTTP-Redirect or HTTP-POST) to
 * /Saml2/Logout; the app ends exactly the sessions it issued for that NameID (and SessionIndex) on
 * every instance, and answers with a LogoutResponse signed with the SP key that samlify's
 * IdentityProvider, an independent implementation, verifies against /Saml2/Metadata. Forged,
 * expired and replayed requests end nothing and get no LogoutResponse.
 */
import assert from 'node:assert/strict'
import { inflateRawSync } from 'node:zlib'
import { after, before, describe, test } from 'node:test'
import { DOMParser } from '@xmldom/xmldom'
import { cookieHeaderFrom, type TestApp } from '../helpers/app.js'
import { buildSaml2App, postToAcs, setsSessionCookie, SP_ENTITY_ID, startSaml2SignIn, waitForSaml2 } from '../helpers/saml2/app.js'
import { createSigningKey } from '../helpers/saml2/certificates.js'
import { TestIdentityProvider, type LogoutRequestOptions, type TestUser } from '../helpers/saml2/identity-provider.js'
import { octetStringOf, POST_BINDING, queryOf, samlify, type SamlifyEntity, type SamlifyIdentityProvider, samlifyTestIdp, withSingleLogoutService } from '../helpers/saml2/samlify.js'

const PROTOCOL_NS = 'urn:oasis:names:tc:SAML:2.0:protocol'
const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success'
const PARTIAL_LOGOUT = 'urn:oasis:names:tc:SAML:2.0:status:PartialLogout'

// Distinctive values, planted so the log scan can prove none of them is ever written.
const ADA: TestUser = { nameId: 'ada.planted-name-id@example.test', attributes: {} }
const BOB: TestUser = { nameId: 'bob.planted-name-id@example.test', attributes: {} }
const FIRST_INDEX = '_planted-session-index-first'
const SECOND_INDEX = '_planted-session-index-second'
const RELAY_STATE = 'planted-relay-state-from-the-idp'

interface LogoutResponseSeen {
  readonly inResponseTo: string | null
  readonly destination: string | null
  readonly issuer: string
  readonly statusCodes: readonly string[]
}

function readLogoutResponse (xml: string): LogoutResponseSeen {
  const root = new DOMParser().parseFromString(xml, 'text/xml').documentElement
  assert.ok(root !== null && root.localName === 'LogoutResponse' && root.namespaceURI === PROTOCOL_NS)
  return {
    inResponseTo: root.getAttribute('InResponseTo'),
    destination: root.getAttribute('Destination'),
    issuer: root.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:assertion', 'Issuer')[0]?.textContent ?? '',
    statusCodes: Array.from(root.getElementsByTagNameNS(PROTOCOL_NS, 'StatusCode')).map((code) => code.getAttribute('Value') ?? '')
  }
}

describe('Saml2 Single Logout started by the IdP (LogoutRequest)', () => {
  const idp = new TestIdentityProvider()
  const spKey = createSigningKey('sp-signing')
  const otherKey = createSigningKey('not-the-idp')
  let redirectApp: TestApp
  let postApp: TestApp
  let noSlo: TestApp
  let samlifyIdp: SamlifyIdentityProvider
  const samlifySp = new Map<TestApp, SamlifyEntity>()
  /** This SP's logout URL as its metadata publishes it (the Destination the IdP must use). */
  let logoutUrl = ''

  before(async () => {
    await idp.start()
    idp.documents.set('/metadata-slo', () => withSingleLogoutService(idp.metadata(), `${idp.origin}/slo`))
    idp.documents.set('/metadata-slo-post', () => withSingleLogoutService(idp.metadata(), `${idp.origin}/slo-post`, POST_BINDING))
    const keys = { SigningKey: spKey.privateKeyPem, SigningCertificate: spKey.certificatePem, SignOutAtProvider: true }
    redirectApp = await buildSaml2App(idp, { MetadataUrl: `${idp.origin}/metadata-slo`, ...keys })
    postApp = await buildSaml2App(idp, { MetadataUrl: `${idp.origin}/metadata-slo-post`, ...keys })
    noSlo = await buildSaml2App(idp, { MetadataUrl: `${idp.origin}/metadata-slo` })
    await waitForSaml2(noSlo.app)
    for (const app of [redirectApp, postApp]) {
      await waitForSaml2(app.app)
      const metadata = (await app.app.inject({ method: 'GET', url: '/Saml2/Metadata' })).body
      samlifySp.set(app, samlify.ServiceProvider({ metadata, wantLogoutResponseSigned: true }))
      logoutUrl = /SingleLogoutService Binding="[^"]+" Location="([^"]+)"/.exec(metadata)?.[1] ?? ''
    }
    samlifyIdp = samlifyTestIdp(idp, { wantLogoutResponseSigned: true })
  })
  after(async () => {
    await redirectApp?.app.close()
    await postApp?.app.close()
    await noSlo?.app.close()
    await idp.stop()
  })

  async function signIn (app: TestApp, user: TestUser, sessionIndex: string): Promise<string> {
    const flow = await startSaml2SignIn(app.app)
    const response = await postToAcs(app.app, { SAMLResponse: idp.buildResponse({ acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user, inResponseTo: flow.request.id, sessionIndex }), RelayState: flow.relayState }, flow.cookie)
    assert.ok(setsSessionCookie(response))
    return cookieHeaderFrom(response)
  }

  async function signedIn (app: TestApp, cookie: string): Promise<boolean> {
    const response = await app.app.inject({ method: 'GET', url: '/api/application-information', headers: { cookie, accept: 'application/json' } })
    assert.ok(response.statusCode === 200 || response.statusCode === 401, `unexpected status ${response.statusCode}`)
    return response.statusCode === 200
  }

  /** Three sessions: Ada twice (two IdP sessions), Bob once under Ada's first SessionIndex value. */
  async function threeSessions (app: TestApp): Promise<{ adaFirst: string, adaSecond: string, bob: string }> {
    return {
      adaFirst: await signIn(app, ADA, FIRST_INDEX),
      adaSecond: await signIn(app, ADA, SECOND_INDEX),
      bob: await signIn(app, BOB, FIRST_INDEX)
    }
  }

  async function sendRedirect (app: TestApp, options: Omit<LogoutRequestOptions, 'destination'> & { destination?: string }) {
    const built = idp.buildLogoutRequest({ destination: logoutUrl, ...options })
    return { built, response: await app.app.inject({ method: 'GET', url: built.redirectPath }) }
  }

  async function sendPost (app: TestApp, options: Omit<LogoutRequestOptions, 'destination'> & { destination?: string }) {
    const built = idp.buildLogoutRequest({ destination: logoutUrl, ...options })
    const response = await app.app.inject({
      method: 'POST',
      url: '/Saml2/Logout',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(built.postFields).toString()
    })
    return { built, response }
  }

  const events = (app: TestApp, from: number, event: string) => app.logs.records().slice(from).filter((record) => record.event === event)

  test('the metadata publishes the SingleLogoutService in both bindings it serves', async () => {
    const metadata = (await redirectApp.app.inject({ method: 'GET', url: '/Saml2/Metadata' })).body
    assert.match(metadata, /SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="http:\/\/localhost(:\d+)?\/Saml2\/Logout"/)
    assert.match(metadata, /SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="http:\/\/localhost(:\d+)?\/Saml2\/Logout"/)
  })

  test('without SignOutAtProvider: no SingleLogoutService in the metadata, no logout endpoint, the session stays', async () => {
    const metadata = (await noSlo.app.inject({ method: 'GET', url: '/Saml2/Metadata' })).body
    assert.doesNotMatch(metadata, /SingleLogoutService/)
    const cookie = await signIn(noSlo, ADA, FIRST_INDEX)
    const built = idp.buildLogoutRequest({ destination: logoutUrl, nameId: ADA.nameId, sessionIndexes: [FIRST_INDEX] })
    const response = await noSlo.app.inject({ method: 'GET', url: built.redirectPath })
    // Not a route: anonymous, it meets the fallback policy's challenge like any unknown path.
    assert.equal(response.statusCode, 302)
    assert.ok(String(response.headers.location).startsWith('/Account/Login'))
    assert.equal(await signedIn(noSlo, cookie), true)
    assert.equal(noSlo.logs.records().some((record) => String(record.event).startsWith('saml2.logout')), false)
  })

  test('HTTP-Redirect: ends exactly the session of that NameID and SessionIndex; the signed LogoutResponse (Success) verifies at the IdP', async () => {
    const sessions = await threeSessions(redirectApp)
    const from = redirectApp.logs.lines.length
    const { built, response } = await sendRedirect(redirectApp, { nameId: ADA.nameId, sessionIndexes: [FIRST_INDEX], relayState: RELAY_STATE })
    assert.equal(response.statusCode, 302)
    assert.equal(response.headers['cache-control'], 'no-store')
    const location = String(response.headers.location)
    assert.ok(location.startsWith(`${idp.origin}/slo?`), 'the LogoutResponse goes to the IdP\'s HTTP-Redirect SingleLogoutService')

    assert.equal(await signedIn(redirectApp, sessions.adaFirst), false)
    assert.equal(await signedIn(redirectApp, sessions.adaSecond), true, 'another SessionIndex of the same user stays')
    assert.equal(await signedIn(redirectApp, sessions.bob), true, 'another user under the same SessionIndex value stays')

    // samlify verifies the query signature against the SP's published signing certificate.
    const parsed = await samlifyIdp.parseLogoutResponse(samlifySp.get(redirectApp) as SamlifyEntity, 'redirect', { query: queryOf(location), octetString: octetStringOf(location, 'SAMLResponse') })
    assert.equal(parsed.sigAlg, 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256')
    const seen = readLogoutResponse(parsed.samlContent)
    assert.equal(seen.inResponseTo, built.id)
    assert.equal(seen.destination, `${idp.origin}/slo`)
    assert.equal(seen.issuer, SP_ENTITY_ID)
    assert.deepEqual(seen.statusCodes, [SUCCESS])
    assert.equal(queryOf(location).RelayState, RELAY_STATE)

    const succeeded = events(redirectApp, from, 'saml2.logout.request.succeeded')
    assert.deepEqual(succeeded.map((record) => [record.sessions, record.binding, record.by]), [[1, 'redirect', 'session_index']])
  })

  test('HTTP-POST, IdP advertising only HTTP-POST: the same, answered by an auto-submitting form the page\'s CSP allows', async () => {
    const sessions = await threeSessions(postApp)
    const { built, response } = await sendPost(postApp, { nameId: ADA.nameId, sessionIndexes: [SECOND_INDEX], relayState: RELAY_STATE })
    assert.equal(response.statusCode, 200)
    assert.equal(response.headers['cache-control'], 'no-store')
    assert.equal(await signedIn(postApp, sessions.adaSecond), false)
    assert.equal(await signedIn(postApp, sessions.adaFirst), true)
    assert.equal(await signedIn(postApp, sessions.bob), true)

    const action = /<form method="post" action="([^"]+)">/.exec(response.body)?.[1]
    assert.equal(action, `${idp.origin}/slo-post`)
    const csp = String(response.headers['content-security-policy'])
    assert.match(csp, new RegExp(`form-action ${idp.origin.replaceAll('.', '\\.')}(;|$)`))
    assert.match(csp, /script-src 'sha256-[A-Za-z0-9+/]+=*'(;|$)/)
    assert.doesNotMatch(csp, /unsafe-inline/)
    assert.match(csp, /frame-ancestors 'none'/)
    const field = (name: string): string | undefined => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(response.body)?.[1]
    const samlResponse = field('SAMLResponse') ?? ''
    assert.equal(field('RelayState'), RELAY_STATE)

    const parsed = await samlifyIdp.parseLogoutResponse(samlifySp.get(postApp) as SamlifyEntity, 'post', { body: { SAMLResponse: samlResponse } })
    const seen = readLogoutResponse(parsed.samlContent)
    assert.equal(seen.inResponseTo, built.id)
    assert.equal(seen.destination, `${idp.origin}/slo-post`)
    assert.deepEqual(seen.statusCodes, [SUCCESS])
  })

  test('without SessionIndex: every session of that NameID at this IdP ends, another user\'s stays', async () => {
    await sendRedirect(redirectApp, { nameId: ADA.nameId }) // Ada's sessions from earlier tests
    const sessions = await threeSessions(redirectApp)
    const from = redirectApp.logs.lines.length
    const { response } = await sendRedirect(redirectApp, { nameId: ADA.nameId })
    assert.equal(response.statusCode, 302)
    assert.equal(await signedIn(redirectApp, sessions.adaFirst), false)
    assert.equal(await signedIn(redirectApp, sessions.adaSecond), false)
    assert.equal(await signedIn(redirectApp, sessions.bob), true)
    assert.deepEqual(events(redirectApp, from, 'saml2.logout.request.succeeded').map((record) => [record.sessions, record.by]), [[2, 'name_id']])
  })

  test('a NameID with another NameQualifier is another principal: nothing ends, PartialLogout', async () => {
    const sessions = await threeSessions(redirectApp)
    const { response } = await sendRedirect(redirectApp, { nameId: ADA.nameId, nameQualifier: 'http://localhost/another-idp' })
    assert.equal(await signedIn(redirectApp, sessions.adaFirst), true)
    const parsed = await samlifyIdp.parseLogoutResponse(samlifySp.get(redirectApp) as SamlifyEntity, 'redirect', { query: queryOf(String(response.headers.location)), octetString: octetStringOf(String(response.headers.location), 'SAMLResponse') })
    assert.deepEqual(readLogoutResponse(parsed.samlContent).statusCodes, [SUCCESS, PARTIAL_LOGOUT])
  })

  test('nothing matched: the signed LogoutResponse says PartialLogout (HTTP-Redirect and HTTP-POST)', async () => {
    const from = redirectApp.logs.lines.length
    const redirect = await sendRedirect(redirectApp, { nameId: 'nobody@example.test', sessionIndexes: ['_unknown'] })
    const location = String(redirect.response.headers.location)
    const parsed = await samlifyIdp.parseLogoutResponse(samlifySp.get(redirectApp) as SamlifyEntity, 'redirect', { query: queryOf(location), octetString: octetStringOf(location, 'SAMLResponse') })
    const seen = readLogoutResponse(parsed.samlContent)
    assert.equal(seen.inResponseTo, redirect.built.id)
    assert.deepEqual(seen.statusCodes, [SUCCESS, PARTIAL_LOGOUT])
    assert.equal(queryOf(location).RelayState, undefined, 'no RelayState sent, none echoed')
    assert.deepEqual(events(redirectApp, from, 'saml2.logout.request.succeeded').map((record) => record.sessions), [0])

    const post = await sendPost(postApp, { nameId: 'nobody@example.test' })
    const samlResponse = /name="SAMLResponse" value="([^"]*)"/.exec(post.response.body)?.[1] ?? ''
    const posted = await samlifyIdp.parseLogoutResponse(samlifySp.get(postApp) as SamlifyEntity, 'post', { body: { SAMLResponse: samlResponse } })
    assert.deepEqual(readLogoutResponse(posted.samlContent).statusCodes, [SUCCESS, PARTIAL_LOGOUT])
  })

  const refusals: ReadonlyArray<readonly [string, 'redirect' | 'post', Omit<LogoutRequestOptions, 'destination' | 'nameId'> & { destination?: string }, string]> = [
    ['unsigned (HTTP-Redirect)', 'redirect', { sign: false }, 'signature'],
    ['unsigned (HTTP-POST)', 'post', { sign: false }, 'signature'],
    ['signed with a key the IdP metadata does not list (HTTP-Redirect)', 'redirect', { signingKey: otherKey }, 'signature'],
    ['signed with a key the IdP metadata does not list (HTTP-POST)', 'post', { signingKey: otherKey }, 'signature'],
    ['another Issuer, signed by the IdP key', 'redirect', { issuer: 'http://localhost/evil-idp' }, 'issuer'],
    ['another Destination', 'post', { destination: 'http://127.0.0.1/other-sp/Saml2/Logout' }, 'destination'],
    ['expired (NotOnOrAfter past, beyond the clock skew)', 'redirect', { notOnOrAfter: new Date(Date.now() - 10 * 60_000), issueInstant: new Date(Date.now() - 15 * 60_000) }, 'expired'],
    ['issued too long ago, without NotOnOrAfter', 'post', { notOnOrAfter: null, issueInstant: new Date(Date.now() - 60 * 60_000) }, 'expired'],
    ['issued in the future', 'redirect', { issueInstant: new Date(Date.now() + 60 * 60_000) }, 'expired'],
    ['a RelayState over 1,024 characters to echo', 'post', { relayState: 'r'.repeat(1025) }, 'malformed']
  ]
  for (const [name, binding, options, failure] of refusals) {
    test(`refused and nothing ends: ${name} (${failure})`, async () => {
      const app = binding === 'redirect' ? redirectApp : postApp
      const sessions = await threeSessions(app)
      const from = app.logs.lines.length
      const request = { nameId: ADA.nameId, sessionIndexes: [FIRST_INDEX], relayState: RELAY_STATE, ...options }
      const { response } = binding === 'redirect' ? await sendRedirect(app, request) : await sendPost(app, request)
      assert.equal(response.statusCode, 302)
      assert.equal(response.headers.location, '/', 'no LogoutResponse goes to the IdP')
      for (const cookie of Object.values(sessions)) assert.equal(await signedIn(app, cookie), true)
      assert.deepEqual(events(app, from, 'saml2.logout.request.rejected').map((record) => record.failure), [failure])
      assert.deepEqual(events(app, from, 'saml2.logout.request.succeeded'), [])
    })
  }

  test('replayed: the second delivery of the same signed LogoutRequest ends nothing (HTTP-Redirect and HTTP-POST)', async () => {
    for (const [app, send] of [[redirectApp, sendRedirect], [postApp, sendPost]] as const) {
      await signIn(app, ADA, FIRST_INDEX)
      const first = await send(app, { nameId: ADA.nameId, sessionIndexes: [FIRST_INDEX] })
      assert.notEqual(first.response.headers.location, '/')
      // The user signs in again under the same IdP session; the captured request comes back.
      const again = await signIn(app, ADA, FIRST_INDEX)
      const from = app.logs.lines.length
      const replayed = app === redirectApp
        ? await app.app.inject({ method: 'GET', url: first.built.redirectPath })
        : await app.app.inject({ method: 'POST', url: '/Saml2/Logout', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(first.built.postFields).toString() })
      assert.equal(replayed.headers.location, '/')
      assert.equal(await signedIn(app, again), true)
      assert.deepEqual(events(app, from, 'saml2.logout.request.rejected').map((record) => record.failure), ['replay'])
    }
  })

  test('a forged request does not burn the ID of the genuine one (the replay record follows the signature check)', async () => {
    const cookie = await signIn(redirectApp, ADA, FIRST_INDEX)
    const id = '_shared-request-id-for-the-replay-order-test'
    const forged = await sendRedirect(redirectApp, { id, nameId: ADA.nameId, sessionIndexes: [FIRST_INDEX], signingKey: otherKey })
    assert.equal(forged.response.headers.location, '/')
    const genuine = await sendRedirect(redirectApp, { id, nameId: ADA.nameId, sessionIndexes: [FIRST_INDEX] })
    assert.ok(String(genuine.response.headers.location).startsWith(`${idp.origin}/slo?`))
    assert.equal(await signedIn(redirectApp, cookie), false)
  })

  test('no log line carries the message, the SessionIndex or the RelayState, and the NameID only as the subject of audit lines', async () => {
    // Every test above ran against these apps and planted these values.
    for (const app of [redirectApp, postApp]) {
      const text = app.logs.text()
      assert.ok(app.logs.records().some((record) => record.event === 'saml2.logout.request.rejected'))
      assert.ok(app.logs.records().some((record) => record.event === 'saml2.logout.request.succeeded'))
      for (const value of [FIRST_INDEX, SECOND_INDEX, 'planted-session-index', RELAY_STATE]) {
        assert.equal(text.includes(value), false, 'a planted value appears in the logs')
      }
      // The NameID is the subject of the sign-in and sign-out audit lines (docs/audit-events.md), nowhere else.
      for (const record of app.logs.records()) {
        for (const nameId of [ADA.nameId, BOB.nameId]) {
          if (!JSON.stringify(record).includes(nameId)) continue
          assert.equal(record.subject, nameId, `${String(record.event)} names the NameID as its subject`)
          assert.equal(JSON.stringify({ ...record, subject: undefined }).includes(nameId), false, `${String(record.event)} names the NameID elsewhere`)
        }
      }
      for (const message of idp.issuedResponses) {
        assert.equal(text.includes(message.slice(0, 60)), false, 'a SAML message appears in the logs')
        assert.equal(text.includes(encodeURIComponent(message).slice(0, 60)), false, 'an encoded SAML message appears in the logs')
      }
    }
  })

  test('the LogoutResponse is deflated XML signed over exactly SAMLResponse, RelayState and SigAlg', async () => {
    const { response } = await sendRedirect(redirectApp, { nameId: 'nobody@example.test', relayState: 'a b&c' })
    const location = String(response.headers.location)
    assert.equal(queryOf(location).RelayState, 'a b&c')
    const xml = inflateRawSync(Buffer.from(queryOf(location).SAMLResponse ?? '', 'base64')).toString('utf8')
    assert.match(xml, /^<samlp:LogoutResponse /)
    await samlifyIdp.parseLogoutResponse(samlifySp.get(redirectApp) as SamlifyEntity, 'redirect', { query: queryOf(location), octetString: octetStringOf(location, 'SAMLResponse') })
  })
})
