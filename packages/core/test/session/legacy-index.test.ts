/**
 * The upgrade path of the per-user session index (issue 23, item 1; docs/security.md, "Sessions
 * from before the per-user index"): sessions stored by the previous version are listed under the
 * bare subject (`index:subject:<sha-256 of the subject>`), two providers' users merged. After the
 * upgrade they keep working until they expire, and every per-user operation still finds them, but
 * ends only those whose own ticket names the same scheme, issuer and subject.
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { describe, test } from 'node:test'
import { antiforgeryFor, buildForSuite, claim, cookieHeaderFrom, TEST_SIGN_IN_PATH } from '../helpers/app.js'
import { legacySubjectIndexKey } from '../../src/session/session-store.js'
import { sealSessionReference, sealTicket } from '../../src/session/ticket.js'
import type { UserIdentity } from '../../src/session/user-identity.js'

const COOKIE = '__Host-ProjectTemplate.Web.Authentication'
const SHARED = 'legacy-shared-user'
const SAML_USER: UserIdentity = { scheme: 'Saml2', issuer: 'https://idp.example.test/saml', subject: SHARED }
const OIDC_USER: UserIdentity = { scheme: 'OpenIdConnect', issuer: 'https://idp.example.test/oidc', subject: SHARED }

describe('sessions stored before the per-user index', () => {
  const t = buildForSuite({
    configure: (app) => {
      app.get('/test-only/whoami', async (request) => ({ identity: request.user?.identity ?? null, userKey: request.user?.userKey ?? null }))
    }
  })

  /** Stores a session as the previous version did (record, and the bare-subject index only); its Cookie header. */
  async function legacySession (user: UserIdentity, absoluteSeconds = 3600): Promise<{ cookie: string, sessionId: string }> {
    const now = Math.floor(Date.now() / 1000)
    const sessionId = randomUUID()
    const ticket = {
      sessionId,
      scheme: user.scheme,
      claims: [claim('application:subject', user.subject, user.issuer), claim('application:name', 'Legacy', user.issuer)],
      issuedAt: now,
      expiresAt: now + Math.min(absoluteSeconds, 3600),
      absoluteExpiresAt: now + absoluteSeconds
    }
    await t.app.state.addMember(legacySubjectIndexKey(user.subject), sessionId, absoluteSeconds * 1000)
    await t.app.state.set(`session:${sessionId}`, sealTicket(ticket, t.keyRing), Math.min(absoluteSeconds, 3600) * 1000)
    return { cookie: `${COOKIE}=${sealSessionReference(sessionId, t.keyRing)}`, sessionId }
  }

  const status = async (cookie: string): Promise<number> =>
    (await t.app.inject({ url: '/api/application-information', headers: { cookie, accept: 'application/json' } })).statusCode

  const legacyListed = async (): Promise<string[]> => await t.app.state.members(legacySubjectIndexKey(SHARED))

  test('they keep working after the upgrade, with the issuer their ticket already held', async () => {
    const { cookie } = await legacySession(SAML_USER)
    assert.equal(await status(cookie), 200)
    const whoami = await t.app.inject({ url: '/test-only/whoami', headers: { cookie, accept: 'application/json' } })
    assert.deepEqual(whoami.json().identity, SAML_USER)
    await t.app.session.revokeUser(SAML_USER)
  })

  test('revokeUser ends the legacy sessions of that identity only; the other provider\'s user with the same subject stays', async () => {
    const saml = await legacySession(SAML_USER)
    const oidc = await legacySession(OIDC_USER)
    assert.equal(await t.app.session.revokeUser(SAML_USER), 1)
    assert.equal(await status(saml.cookie), 401)
    assert.equal(await status(oidc.cookie), 200, 'not merged with the SAML2 user')
    const listed = await legacyListed()
    assert.ok(!listed.includes(saml.sessionId), 'the ended session leaves the legacy index')
    assert.ok(listed.includes(oidc.sessionId), 'the other user\'s entry stays')
    assert.equal(await t.app.session.revokeUser(OIDC_USER), 1)
    assert.equal(await status(oidc.cookie), 401)
  })

  test('sign out everywhere from a new session ends the same user\'s legacy sessions too, and no one else\'s', async () => {
    const legacyOidc = await legacySession(OIDC_USER)
    const legacySaml = await legacySession(SAML_USER)
    const signIn = await t.app.inject({
      method: 'POST',
      url: TEST_SIGN_IN_PATH,
      payload: { scheme: OIDC_USER.scheme, claims: [claim('application:subject', SHARED, OIDC_USER.issuer)] }
    })
    assert.equal(signIn.statusCode, 204)
    const fresh = cookieHeaderFrom(signIn)
    const { token, cookie } = await antiforgeryFor(t.app, fresh)
    const from = t.logs.lines.length
    const response = await t.app.inject({ method: 'POST', url: '/Account/LogoutEverywhere', headers: { cookie }, payload: { __RequestVerificationToken: token } })
    assert.equal(response.statusCode, 302)
    assert.equal(await status(fresh), 401)
    assert.equal(await status(legacyOidc.cookie), 401, 'the legacy session of the same user ends')
    assert.equal(await status(legacySaml.cookie), 200, 'the legacy session of the other provider\'s user stays')
    const line = t.logs.records().slice(from).find((record) => record.event === 'session.signed_out_everywhere')
    assert.equal(line?.sessions, 2)
    await t.app.session.revokeUser(SAML_USER)
  })

  test('logging out of a legacy session removes its legacy index entry; an entry naming no session is dropped when read', async () => {
    const legacy = await legacySession(SAML_USER)
    const { token, cookie } = await antiforgeryFor(t.app, legacy.cookie)
    const response = await t.app.inject({ method: 'POST', url: '/Account/Logout', headers: { cookie }, payload: { __RequestVerificationToken: token } })
    assert.equal(response.statusCode, 302)
    assert.ok(!(await legacyListed()).includes(legacy.sessionId))

    const orphan = randomUUID()
    await t.app.state.addMember(legacySubjectIndexKey(SHARED), orphan, 60_000)
    assert.equal(await t.app.session.revokeUser(SAML_USER), 0)
    assert.ok(!(await legacyListed()).includes(orphan))
  })
})
