/**
 * The user key and the audit session id (src/session/user-identity.ts): derived from all three
 * parts of an identity with no way for one part to spill into another, stable (pinned vectors:
 * apps key their data on the user key), and never the session id itself.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { test } from 'node:test'
import { auditFieldsOf, checkedUserIdentity, identityOfTicket, sameIdentity, sessionAuditIdOf, userKeyOf } from '../../src/session/user-identity.js'

const SESSION_ID = '0f8fad5b-d9cb-469f-a165-70867728950e'

test('the user key is base64url(SHA-256) of the JSON array [scheme, issuer, subject], pinned', () => {
  const identity = { scheme: 'OpenIdConnect', issuer: 'https://login.example.test', subject: 'user-1' }
  const expected = createHash('sha256').update('["OpenIdConnect","https://login.example.test","user-1"]').digest('base64url')
  assert.equal(userKeyOf(identity), expected)
  assert.equal(userKeyOf(identity), '-hRRncF4L0jrC5yVFb_soCwJtD6XNQ_YKud3AHUfWdc')
})

test('every part counts, and no separator can be forged by moving characters between parts', () => {
  const base = { scheme: 'Saml2', issuer: 'https://idp', subject: 'a' }
  const keys = new Set([
    base,
    { ...base, scheme: 'OpenIdConnect' },
    { ...base, issuer: 'https://idp2' },
    { ...base, subject: 'b' },
    { scheme: 'Saml2', issuer: 'https://idp\u0000a', subject: '' },
    { scheme: 'Saml2', issuer: 'https://idp","a', subject: '' },
    { scheme: 'Saml2', issuer: 'https://idp', subject: 'a","' }
  ].map(userKeyOf))
  assert.equal(keys.size, 7)
})

test('the identity of a ticket is its scheme with the subject claim\'s issuer and value; none without a subject', () => {
  const claims = [{ type: 'application:subject', value: 'u', issuer: 'https://idp' }, { type: 'application:email', value: 'u@example.test', issuer: 'https://idp' }]
  assert.deepEqual(identityOfTicket({ scheme: 'Saml2', claims }), { scheme: 'Saml2', issuer: 'https://idp', subject: 'u' })
  assert.equal(identityOfTicket({ scheme: 'Saml2', claims: claims.slice(1) }), undefined)
})

test('audit fields: provider, issuer, subject, user key and a session audit id that is not the session id; never the e-mail', () => {
  const claims = [{ type: 'application:subject', value: 'u', issuer: 'https://idp' }, { type: 'application:email', value: 'u@example.test', issuer: 'https://idp' }]
  const fields = auditFieldsOf({ sessionId: SESSION_ID, scheme: 'Saml2', claims })
  assert.deepEqual(Object.keys(fields), ['provider', 'issuer', 'subject', 'userKey', 'sessionAuditId'])
  assert.equal(fields.sessionAuditId, sessionAuditIdOf(SESSION_ID))
  assert.match(fields.sessionAuditId ?? '', /^[A-Za-z0-9_-]{22}$/)
  assert.equal(JSON.stringify(fields).includes(SESSION_ID), false)
  assert.equal(JSON.stringify(fields).includes('u@example.test'), false)
  assert.deepEqual(auditFieldsOf({ sessionId: SESSION_ID, scheme: 'TestFlow', claims: [] }), { provider: 'TestFlow', sessionAuditId: sessionAuditIdOf(SESSION_ID) })
})

test('a client acting as itself (kind client) is never the user of the same scheme, issuer and subject (issue 40, item 6)', () => {
  const user = { scheme: 'Api', issuer: 'https://login.example.test', subject: 'billing' }
  const client = { ...user, kind: 'client' as const }
  assert.equal(userKeyOf(client), createHash('sha256').update('["Api","https://login.example.test","billing","client"]').digest('base64url'))
  assert.notEqual(userKeyOf(client), userKeyOf(user))
  assert.equal(userKeyOf(user), createHash('sha256').update('["Api","https://login.example.test","billing"]').digest('base64url'), 'users keep their keys')
  assert.equal(sameIdentity(user, client), false)
  assert.equal(sameIdentity(client, { ...client }), true)
  const claims = [{ type: 'application:subject', value: 'billing', issuer: user.issuer }]
  assert.deepEqual(identityOfTicket({ scheme: 'Api', claims, kind: 'client' }), client)
  assert.deepEqual(identityOfTicket({ scheme: 'Api', claims }), user)
  assert.equal(auditFieldsOf({ sessionId: SESSION_ID, scheme: 'Api', claims, kind: 'client' }).userKey, userKeyOf(client))
  assert.throws(() => checkedUserIdentity({ ...user, kind: 'robot' }, 'app.session.revokeUser'), /identity\.kind/)
})
