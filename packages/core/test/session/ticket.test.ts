/**
 * The sealed session record (kept in the state store) and the sealed session reference (the
 * cookie): round trip, and every damaged, foreign or expired form opens as nothing (never
 * throws); key rotation at the ticket level.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { sealBytes } from '../../src/data-protection/authenticated-encryption.js'
import { createKeyRing } from '../../src/data-protection/key-ring.js'
import type { AuthenticationTicket } from '../../src/session/principal.js'
import { MAX_SEALED_LENGTH, openSessionReference, openTicket, sealSessionReference, sealTicket } from '../../src/session/ticket.js'

const NOW = 1_800_000_000
const ring = createKeyRing([randomBytes(32)])
const ticket: AuthenticationTicket = {
  sessionId: 'b6f1c9e2-0000-4000-8000-000000000001',
  scheme: 'OpenIdConnect',
  claims: [
    { type: 'application:subject', value: 'user-1', issuer: 'https://idp.example.test' },
    { type: 'application:role', value: 'Administrator', issuer: 'https://idp.example.test' },
    { type: 'application:role', value: 'Reader', issuer: 'https://idp.example.test' },
    { type: 'application:name', value: 'Zoë "quoted" <b>', issuer: 'LocalFlow' }
  ],
  issuedAt: NOW - 10,
  expiresAt: NOW + 3600,
  absoluteExpiresAt: NOW + 7200,
  tokens: { id_token: 'eyJ.id.token' }
}

function flip (text: string, index: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  const current = text[index] ?? 'A'
  const replacement = alphabet[(alphabet.indexOf(current) + 1) % alphabet.length] ?? 'A'
  return text.slice(0, index) + replacement + text.slice(index + 1)
}

describe('session ticket', () => {
  test('round trip keeps claims (type, value, issuer, order within a type), scheme, times and tokens', () => {
    assert.deepEqual(openTicket(sealTicket(ticket, ring), ring, NOW), ticket)
  })

  test('a ticket without tokens opens without a tokens member', () => {
    const { tokens: _tokens, ...withoutTokens } = ticket
    const opened = openTicket(sealTicket(withoutTokens, ring), ring, NOW)
    assert.deepEqual(opened, withoutTokens)
    assert.ok(opened !== undefined && !('tokens' in opened))
  })

  test('the sealed form does not reveal claim values or tokens', () => {
    const sealed = sealTicket(ticket, ring)
    for (const secret of ['user-1', 'Administrator', 'eyJ.id.token', 'OpenIdConnect']) assert.ok(!sealed.includes(secret))
    assert.match(sealed, /^[A-Za-z0-9_-]{8}\.[A-Za-z0-9_-]+$/)
  })

  test('two seals of the same ticket differ (fresh IV)', () => {
    assert.notEqual(sealTicket(ticket, ring), sealTicket(ticket, ring))
  })

  test('expiry is enforced from the sealed ticket: open at expiresAt - 1, not at expiresAt', () => {
    const sealed = sealTicket(ticket, ring)
    assert.notEqual(openTicket(sealed, ring, ticket.expiresAt - 1), undefined)
    assert.equal(openTicket(sealed, ring, ticket.expiresAt), undefined)
    assert.equal(openTicket(sealed, ring, ticket.expiresAt + 86_400), undefined)
  })

  test('the absolute expiry is enforced too, whatever the sliding expiry says', () => {
    const renewedPastAbsolute = sealTicket({ ...ticket, expiresAt: NOW + 9000, absoluteExpiresAt: NOW + 100 }, ring)
    assert.notEqual(openTicket(renewedPastAbsolute, ring, NOW + 99), undefined)
    assert.equal(openTicket(renewedPastAbsolute, ring, NOW + 100), undefined)
  })

  const sealed = sealTicket(ticket, ring)
  const body = sealed.slice(9)
  const hostile: Array<[string, string]> = [
    ['empty', ''],
    ['key id only', sealed.slice(0, 9)],
    ['truncated by one character', sealed.slice(0, -1)],
    ['truncated to half', sealed.slice(0, Math.floor(sealed.length / 2))],
    ['a flipped ciphertext character', flip(sealed, 30)],
    ['a flipped tag character', flip(sealed, sealed.length - 3)],
    ['a flipped IV character', flip(sealed, 10)],
    ['an unknown key id', `AAAAAAAA.${body}`],
    ['no separator', sealed.replace('.', '')],
    ['standard base64 padding appended', `${sealed}=`],
    ['a foreign character inside the body', `${sealed.slice(0, 40)}*${sealed.slice(40)}`],
    ['whitespace appended', `${sealed} `],
    ['oversized', `${sealed}${'A'.repeat(MAX_SEALED_LENGTH)}`],
    ['plain JSON', JSON.stringify(ticket)]
  ]
  for (const [name, value] of hostile) {
    test(`${name} opens as nothing`, () => {
      assert.notEqual(value, sealed)
      assert.equal(openTicket(value, ring, NOW), undefined)
    })
  }

  test('a non-canonical base64url body (same bytes, different unused bits) opens as nothing', () => {
    // Pick a scheme length whose sealed body leaves unused bits in its last character.
    let canonical = ''
    for (let pad = 0; pad < 3; pad++) {
      canonical = sealTicket({ ...ticket, scheme: `S${'x'.repeat(pad)}` }, ring)
      if (Buffer.from(canonical.slice(9), 'base64url').length % 3 !== 0) break
    }
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    const last = alphabet.indexOf(canonical.at(-1) ?? 'A')
    const variant = `${canonical.slice(0, -1)}${alphabet[last ^ 1] ?? 'A'}`
    assert.ok(Buffer.from(variant.slice(9), 'base64url').equals(Buffer.from(canonical.slice(9), 'base64url')), 'the variant decodes to the same bytes')
    assert.notEqual(openTicket(canonical, ring, NOW), undefined)
    assert.equal(openTicket(variant, ring, NOW), undefined)
  })

  test('a ticket sealed under another key ring opens as nothing', () => {
    const foreign = createKeyRing([randomBytes(32)])
    assert.equal(openTicket(sealTicket(ticket, foreign), ring, NOW), undefined)
  })

  test('a value sealed for another purpose with the same key opens as nothing', () => {
    const payload = JSON.stringify({ v: 1, sid: 's', sch: 'x', iat: NOW, exp: NOW + 60, aexp: NOW + 60, c: [] })
    assert.notEqual(openTicket(sealBytes(payload, ring, Buffer.from('ProjectTemplate.Web.SessionRecord.v1')), ring, NOW), undefined, 'the payload itself is valid')
    assert.equal(openTicket(sealBytes(payload, ring, Buffer.from('ProjectTemplate.Web.Correlation.v2')), ring, NOW), undefined)
    assert.equal(openTicket(sealBytes(payload, ring, Buffer.from('ProjectTemplate.Web.Authentication.v2')), ring, NOW), undefined)
  })

  const malformedPayloads: Array<[string, unknown]> = [
    ['another format version', { v: 2, sid: 's', sch: 'x', iat: NOW, exp: NOW + 60, aexp: NOW + 60, c: [] }],
    ['a missing expiry', { v: 1, sid: 's', sch: 'x', iat: NOW, aexp: NOW + 60, c: [] }],
    ['a missing absolute expiry', { v: 1, sid: 's', sch: 'x', iat: NOW, exp: NOW + 60, c: [] }],
    ['a string expiry', { v: 1, sid: 's', sch: 'x', iat: NOW, exp: String(NOW + 60), aexp: NOW + 60, c: [] }],
    ['claims that are not arrays', { v: 1, sid: 's', sch: 'x', iat: NOW, exp: NOW + 60, aexp: NOW + 60, c: { a: 1 } }],
    ['a numeric claim value', { v: 1, sid: 's', sch: 'x', iat: NOW, exp: NOW + 60, aexp: NOW + 60, c: [['iss', [['t', [1]]]]] }],
    ['non-string tokens', { v: 1, sid: 's', sch: 'x', iat: NOW, exp: NOW + 60, aexp: NOW + 60, c: [], tk: { a: 1 } }],
    ['JSON null', null]
  ]
  for (const [name, payload] of malformedPayloads) {
    test(`an authentic ticket with ${name} opens as nothing`, () => {
      const authentic = sealBytes(JSON.stringify(payload), ring, Buffer.from('ProjectTemplate.Web.SessionRecord.v1'))
      assert.equal(openTicket(authentic, ring, NOW), undefined)
    })
  }

  test('rotation: a ticket sealed with the old key opens while the old key is listed after a new first key', () => {
    const oldKey = randomBytes(32)
    const newKey = randomBytes(32)
    const oldSealed = sealTicket(ticket, createKeyRing([oldKey]))
    const rotated = createKeyRing([newKey, oldKey])
    assert.deepEqual(openTicket(oldSealed, rotated, NOW), ticket)
    const newSealed = sealTicket(ticket, rotated)
    assert.equal(newSealed.slice(0, 8), rotated.sealing.id, 'the first key seals')
    assert.equal(openTicket(newSealed, createKeyRing([oldKey]), NOW), undefined)
    assert.equal(openTicket(oldSealed, createKeyRing([newKey]), NOW), undefined, 'a removed key no longer opens')
  })
})

describe('session reference (the cookie value)', () => {
  const sessionId = 'b6f1c9e2-0000-4000-8000-000000000001'

  test('round trip names the session id and nothing else, in under 200 characters', () => {
    const sealed = sealSessionReference(sessionId, ring)
    assert.ok(sealed.length < 200)
    assert.equal(openSessionReference(sealed, ring), sessionId)
    assert.ok(!sealed.includes(sessionId), 'the id is not readable from the cookie')
  })

  test('a record is not a reference, a reference is not a record, and a foreign key opens neither', () => {
    assert.equal(openSessionReference(sealTicket(ticket, ring), ring), undefined)
    assert.equal(openTicket(sealSessionReference(sessionId, ring), ring, NOW), undefined)
    assert.equal(openSessionReference(sealSessionReference(sessionId, createKeyRing([randomBytes(32)])), ring), undefined)
  })

  test('an authentic reference whose id is not a session id opens as nothing', () => {
    for (const sid of ['', 'x', `${sessionId}\n`, 42]) {
      const sealed = sealBytes(JSON.stringify({ v: 1, sid }), ring, Buffer.from('ProjectTemplate.Web.Authentication.v2'))
      assert.equal(openSessionReference(sealed, ring), undefined, JSON.stringify(sid))
    }
    const valid = sealBytes(JSON.stringify({ v: 1, sid: sessionId }), ring, Buffer.from('ProjectTemplate.Web.Authentication.v2'))
    assert.equal(openSessionReference(valid, ring), sessionId)
  })
})
