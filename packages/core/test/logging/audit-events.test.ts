/**
 * Audit events say who (issue 23, item 7; docs/audit-events.md): against a real OpenID provider
 * (oidc-provider on loopback, with back-channel logout) and the SAML test IdP with Single Logout
 * (samlify answering the LogoutRequest), the log lines are parsed as JSON and every audit event
 * carries the fields the document lists: `provider`, `issuer`, `subject`, `userKey` and
 * `sessionAuditId`, the last one a hash that is neither the session id nor the cookie. No line
 * holds a session cookie value, a session id, a token, an authorization code or the user's
 * e-mail address; a refused sign-in names no identity from the unverified response.
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { antiforgeryFor, cookieHeaderFrom, type TestApp } from '../helpers/app.js'
import { HttpSession, isSessionCookie } from '../helpers/providers/http-session.js'
import { throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import { startOidcIdp, type OidcIdp } from '../helpers/providers/oidc-idp.js'
import { startProviderApp, waitUntilReady, type ListeningApp } from '../helpers/providers/provider-app.js'
import { buildSaml2App, postToAcs, setsSessionCookie, SP_ENTITY_ID, startSaml2SignIn, waitForSaml2 } from '../helpers/saml2/app.js'
import { createSigningKey } from '../helpers/saml2/certificates.js'
import { TestIdentityProvider } from '../helpers/saml2/identity-provider.js'
import { queryOf, samlify, samlifyLogoutIdp, withSingleLogoutService } from '../helpers/saml2/samlify.js'
import { openSessionReference } from '../../src/session/ticket.js'
import { sessionAuditIdOf, userKeyOf } from '../../src/session/user-identity.js'

const SUBJECT = 'audit-user'
const EMAIL = 'planted-audit-mail@example.test'
const CLIENT_ID = 'audit-client'
const CLIENT_SECRET = 'audit-client-secret-PLANTED-77'
const BACK_CHANNEL_PATH = '/backchannel-logout-oidc'
const BACK_CHANNEL_EVENT = 'http://schemas.openid.net/event/backchannel-logout'

/** Every audit event and the fields it must carry (docs/audit-events.md). */
const WHO = ['provider', 'issuer', 'subject', 'userKey', 'sessionAuditId'] as const

type LogRecord = Record<string, unknown>

function sessionValueOf (cookieHeader: string): string {
  const pair = cookieHeader.split('; ').find((entry) => isSessionCookie(entry.split('=')[0] ?? ''))
  assert.ok(pair !== undefined, 'a session cookie')
  return pair.slice(pair.indexOf('=') + 1)
}

/** Fails when any planted value appears in any line. */
function assertAbsent (lines: readonly string[], planted: ReadonlyArray<readonly [string, string]>): void {
  for (const [label, value] of planted) {
    assert.ok(value.length >= 8, `${label} is distinctive`)
    const line = lines.find((text) => text.includes(value))
    assert.equal(line, undefined, `${label} appears in a log line`)
  }
}

function only (records: readonly LogRecord[], event: string): LogRecord {
  const matching = records.filter((record) => record.event === event)
  assert.equal(matching.length, 1, `one ${event} line`)
  return matching[0]!
}

describe('audit events of OpenID Connect sign-in, sign-out, sign-out everywhere and back-channel logout', () => {
  let idp: OidcIdp
  let app: ListeningApp
  const cookies: string[] = []

  before(async () => {
    idp = await startOidcIdp({
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      accounts: { [SUBJECT]: { name: 'Audit User', email: EMAIL } },
      backChannelLogoutUri: (redirectUri) => `${new URL(redirectUri).origin}${BACK_CHANNEL_PATH}`
    })
    app = await startProviderApp({
      Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: idp.issuer, ClientId: CLIENT_ID, ClientSecret: CLIENT_SECRET, BackChannelLogout: true, SaveTokens: true } } }
    })
    await idp.configure(`${app.origin}/signin-oidc`)
    await waitUntilReady(app.origin)
  })
  after(async () => {
    await app?.close()
    await idp?.close()
  })

  async function signIn (): Promise<string> {
    const browser = new HttpSession()
    const start = await browser.request(`${app.origin}/External/Challenge?provider=OpenIdConnect`)
    const callback = await browser.request(await throughIdpLogin(browser, start.location!, app.origin, SUBJECT))
    assert.equal(callback.response.status, 302)
    const origin = new URL(app.origin)
    const name = browser.jar.names(origin).find(isSessionCookie)
    assert.ok(name !== undefined, 'signed in')
    const cookie = `${name}=${browser.jar.get(origin, name) ?? ''}`
    cookies.push(cookie)
    return cookie
  }

  async function post (path: string, cookie: string): Promise<void> {
    const { token, cookie: withAntiforgery } = await antiforgeryFor(app.app, cookie)
    const response = await app.app.inject({ method: 'POST', url: path, headers: { cookie: withAntiforgery }, payload: { __RequestVerificationToken: token } })
    assert.equal(response.statusCode, 302)
  }

  test('each event names provider, issuer, subject, user key and session audit id; nothing secret or personal besides the subject', async () => {
    const identity = { scheme: 'OpenIdConnect', issuer: idp.issuer, subject: SUBJECT }
    const expectedWho = { provider: 'OpenIdConnect', issuer: idp.issuer, subject: SUBJECT, userKey: userKeyOf(identity) }
    const auditIdOf = (cookie: string): string => sessionAuditIdOf(openSessionReference(sessionValueOf(cookie), app.keyRing) ?? '')

    // Sign in, sign out.
    let from = app.logs.lines.length
    const first = await signIn()
    let records = app.logs.records().slice(from)
    for (const event of ['external.sign_in.succeeded', 'session.signed_in']) {
      const line = only(records, event)
      assert.deepEqual(Object.fromEntries(WHO.map((field) => [field, line[field]])), { ...expectedWho, sessionAuditId: auditIdOf(first) }, event)
    }
    from = app.logs.lines.length
    await post('/Account/Logout', first)
    records = app.logs.records().slice(from)
    assert.deepEqual(Object.fromEntries(WHO.map((field) => [field, only(records, 'session.signed_out')[field]])), { ...expectedWho, sessionAuditId: auditIdOf(first) })

    // Sign out everywhere: the line names the session it was asked from and how many ended.
    const laptop = await signIn()
    await signIn()
    from = app.logs.lines.length
    await post('/Account/LogoutEverywhere', laptop)
    records = app.logs.records().slice(from)
    const everywhere = only(records, 'session.signed_out_everywhere')
    assert.deepEqual(Object.fromEntries(WHO.map((field) => [field, everywhere[field]])), { ...expectedWho, sessionAuditId: auditIdOf(laptop) })
    assert.equal(everywhere.sessions, 2)

    // Back-channel logout by sub: issuer, subject and the audit ids of the sessions it ended.
    const ended = await signIn()
    from = app.logs.lines.length
    const token = await idp.sign({ iss: idp.issuer, aud: CLIENT_ID, iat: Math.floor(Date.now() / 1000), jti: randomUUID(), events: { [BACK_CHANNEL_EVENT]: {} }, sub: SUBJECT })
    const response = await fetch(`${app.origin}${BACK_CHANNEL_PATH}`, { method: 'POST', body: new URLSearchParams({ logout_token: token }), headers: { 'content-type': 'application/x-www-form-urlencoded' }, signal: AbortSignal.timeout(10_000) })
    assert.equal(response.status, 200)
    records = app.logs.records().slice(from)
    const backChannel = only(records, 'oidc.back_channel_logout.succeeded')
    assert.equal(backChannel.provider, 'OpenIdConnect')
    assert.equal(backChannel.issuer, idp.issuer)
    assert.equal(backChannel.subject, SUBJECT)
    assert.deepEqual(backChannel.sessionAuditIds, [auditIdOf(ended)])
    assert.equal(JSON.stringify(records).includes(token), false, 'the logout token is not logged')

    // A refused callback (no correlation) names the provider and no identity.
    from = app.logs.lines.length
    const refused = await app.app.inject({ url: '/signin-oidc?state=AAAAAAAAAAAAAAAAAAAAAA&code=planted-code-value-9f3' })
    assert.equal(refused.statusCode, 302)
    const failed = only(app.logs.records().slice(from), 'external.sign_in.failed')
    assert.equal(failed.provider, 'OpenIdConnect')
    for (const field of ['issuer', 'subject', 'userKey', 'sessionAuditId']) assert.equal(field in failed, false, `failed line without ${field}`)

    // Nothing secret or personal in any line: cookie values, session ids, tokens, codes, e-mail.
    const lines = app.logs.lines
    const planted: Array<readonly [string, string]> = [['the e-mail address', EMAIL], ['the client secret', CLIENT_SECRET], ['a planted code', 'planted-code-value-9f3']]
    for (const cookie of cookies) {
      planted.push(['a session cookie value', sessionValueOf(cookie)])
      planted.push(['a session id', openSessionReference(sessionValueOf(cookie), app.keyRing) ?? 'missing-session-id'])
    }
    for (const value of [...idp.issuedTokenResponseValues, ...idp.issuedCodes, ...idp.issuedTokens]) planted.push(['a provider token or code', value])
    assertAbsent(lines, planted)
    // The subject appears only as the `subject` of lines that carry one.
    for (const record of app.logs.records()) {
      if (!JSON.stringify(record).includes(SUBJECT)) continue
      assert.equal(record.subject, SUBJECT, String(record.event))
    }
  })
})

describe('audit events of SAML2 sign-in and Single Logout', () => {
  const idp = new TestIdentityProvider()
  const spKey = createSigningKey('sp-signing-audit')
  let subject: TestApp

  before(async () => {
    await idp.start()
    idp.documents.set('/metadata-slo', () => withSingleLogoutService(idp.metadata(), `${idp.origin}/slo`))
    subject = await buildSaml2App(idp, { MetadataUrl: `${idp.origin}/metadata-slo`, SigningKey: spKey.privateKeyPem, SigningCertificate: spKey.certificatePem, SignOutAtProvider: true })
    await waitForSaml2(subject.app)
  })
  after(async () => {
    await subject?.app.close()
    await idp.stop()
  })

  test('sign-in, sign-out and the LogoutResponse name the SAML2 IdP and the user; the LogoutResponse line links to the session by its audit id', async () => {
    const nameId = 'saml-audit-user@idp.example.test'
    const flow = await startSaml2SignIn(subject.app)
    const from = subject.logs.lines.length
    const acs = await postToAcs(subject.app, { SAMLResponse: idp.buildResponse({ acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user: { nameId, attributes: { email: [EMAIL] } }, inResponseTo: flow.request.id }), RelayState: flow.relayState }, flow.cookie)
    assert.ok(setsSessionCookie(acs))
    const cookie = cookieHeaderFrom(acs)
    const sessionId = openSessionReference(sessionValueOf(cookie), subject.keyRing)
    assert.ok(sessionId !== undefined)
    const identity = { scheme: 'Saml2', issuer: idp.entityId, subject: nameId }
    const who = { provider: 'Saml2', issuer: idp.entityId, subject: nameId, userKey: userKeyOf(identity), sessionAuditId: sessionAuditIdOf(sessionId) }

    const { token, cookie: withAntiforgery } = await antiforgeryFor(subject.app, cookie)
    const logout = await subject.app.inject({ method: 'POST', url: '/Account/Logout', headers: { cookie: withAntiforgery, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ __RequestVerificationToken: token }).toString() })
    assert.equal(logout.statusCode, 200)
    const href = /<a id="continue-sign-out" href="([^"]+)">/.exec(logout.body)?.[1]?.replaceAll('&amp;', '&')
    assert.ok(href !== undefined)
    const metadata = (await subject.app.inject({ method: 'GET', url: '/Saml2/Metadata' })).body
    const sp = samlify.ServiceProvider({ metadata, wantLogoutResponseSigned: true })
    const samlifyIdp = samlifyLogoutIdp(idp, `${idp.origin}/slo`)
    const parsed = await samlifyIdp.parseLogoutRequest(sp, 'redirect', { query: queryOf(href), octetString: href.split('?')[1]?.split('&').filter((part) => /^(SAMLRequest|RelayState|SigAlg)=/.test(part)).join('&') ?? '' })
    const answer = new URL(samlifyIdp.createLogoutResponse(sp, parsed as { extract: { request: { id: string } } }, 'redirect', queryOf(href).RelayState ?? '').context)
    const back = await subject.app.inject({ method: 'GET', url: `${answer.pathname}${answer.search}` })
    assert.equal(back.statusCode, 302)

    const records = subject.logs.records().slice(from)
    for (const event of ['external.sign_in.succeeded', 'session.signed_in', 'session.signed_out']) {
      const line = only(records, event)
      assert.deepEqual(Object.fromEntries(WHO.map((field) => [field, line[field]])), who, event)
    }
    const completed = only(records, 'saml2.logout.completed')
    assert.deepEqual({ provider: completed.provider, issuer: completed.issuer, userKey: completed.userKey, sessionAuditId: completed.sessionAuditId },
      { provider: 'Saml2', issuer: idp.entityId, userKey: who.userKey, sessionAuditId: who.sessionAuditId })

    assertAbsent(subject.logs.lines, [
      ['the e-mail attribute', EMAIL],
      ['the session cookie value', sessionValueOf(cookie)],
      ['the session id', sessionId],
      ['the SAMLResponse', idp.issuedResponses.at(-1) ?? 'missing-response']
    ])
  })
})
