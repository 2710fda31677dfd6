/**
 * Protected secrets (data-protection/secrets.ts): a secret the app keeps at rest round-trips with
 * the app's key ring, still opens after a new first key is added and fails clearly once its key
 * is removed; it never opens as a session ticket or cookie, nor they as a secret; an altered,
 * truncated or foreign value fails with APP_ERR_SECRET_INVALID, and no error carries the secret.
 * Through the app: `app.dataProtection` seals with the app's own ring, and the provider source is
 * given the app so it can open its rows' sealed client secrets.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { AppError } from '../../src/errors.js'
import { createKeyRing, type KeyRing } from '../../src/data-protection/key-ring.js'
import { openBytes, sealBytes } from '../../src/data-protection/authenticated-encryption.js'
import { MAX_PROTECTED_SECRET_LENGTH, protectSecret, unprotectSecret } from '../../src/data-protection/secrets.js'
import { openSessionReference, openTicket, sealSessionReference, sealTicket } from '../../src/session/ticket.js'
import { PURPOSES } from '../../src/application-name.js'
import { build } from '../helpers/app.js'
import type { RuntimeProviderDefinition } from '../../src/providers/runtime-definitions.js'

const SECRET = 'client-secret-PLANTED-7731-ÿ€'
const oldKey = randomBytes(32)
const newKey = randomBytes(32)

function assertInvalid (action: () => unknown, reason: RegExp): void {
  assert.throws(action, (error: unknown) => {
    assert.ok(error instanceof AppError)
    assert.equal(error.code, 'APP_ERR_SECRET_INVALID')
    assert.equal(error.statusCode, 500)
    assert.match(error.message, /^A protected secret could not be opened: /)
    assert.match(error.message, reason)
    assert.ok(!error.message.includes('PLANTED'), 'the secret is in the message')
    assert.ok(!JSON.stringify(error).includes('PLANTED'), 'the secret is in the serialized error')
    assert.ok(!String(error.stack).includes('PLANTED'), 'the secret is in the stack')
    return true
  })
}

/** One character of the base64url body changed at `index` (from the end when negative). */
function flipped (sealed: string, index: number): string {
  const at = index < 0 ? sealed.length + index : index
  const replacement = sealed[at] === 'A' ? 'B' : 'A'
  return sealed.slice(0, at) + replacement + sealed.slice(at + 1)
}

describe('protected secrets', () => {
  test('round trip: the plaintext comes back, the stored text holds neither it nor its encoding, and each seal differs', () => {
    const ring = createKeyRing([oldKey], 'Production')
    const sealed = protectSecret(ring, SECRET)
    assert.match(sealed, /^[A-Za-z0-9_-]{8}\.[A-Za-z0-9_-]+$/)
    assert.ok(!sealed.includes('PLANTED'))
    assert.ok(!sealed.includes(Buffer.from(SECRET).toString('base64url').slice(0, 12)))
    assert.equal(unprotectSecret(ring, sealed), SECRET)
    assert.notEqual(protectSecret(ring, SECRET), sealed)
    assert.equal(unprotectSecret(ring, protectSecret(ring, '')), '')
  })

  test('rotation: sealed with the old first key, opened after a new first key is added; refused, clearly, once the old key is removed', () => {
    const before = createKeyRing([oldKey], 'Production')
    const sealed = protectSecret(before, SECRET)
    const rotated = createKeyRing([newKey, oldKey], 'Production')
    assert.equal(unprotectSecret(rotated, sealed), SECRET)
    const resealed = protectSecret(rotated, unprotectSecret(rotated, sealed))
    assert.equal(resealed.slice(0, 8), rotated.sealing.id)
    const after = createKeyRing([newKey], 'Production')
    assert.equal(unprotectSecret(after, resealed), SECRET)
    assertInvalid(() => unprotectSecret(after, sealed), /the key that sealed it is not in the key ring/)
  })

  test('another application or discriminator with the same keys cannot open it', () => {
    const sealed = protectSecret(createKeyRing([oldKey], 'Production'), SECRET)
    assertInvalid(() => unprotectSecret(createKeyRing([oldKey], 'Staging'), sealed), /not in the key ring/)
    assertInvalid(() => unprotectSecret(createKeyRing([oldKey], 'Production', 'Acme'), sealed), /not in the key ring/)
  })

  test('its purpose is its own: a secret never opens as a session ticket or cookie, nor they as a secret', () => {
    const ring = createKeyRing([oldKey], 'Production')
    assert.equal(new Set(Object.values(PURPOSES)).size, Object.values(PURPOSES).length)
    const now = Math.floor(Date.now() / 1000)
    const ticket = sealTicket({ sessionId: 'a'.repeat(43), scheme: 'Cookies', claims: [], issuedAt: now, expiresAt: now + 60, absoluteExpiresAt: now + 60 }, ring)
    const ticketJson = openBytes(ticket, ring, Buffer.from(PURPOSES.sessionRecord), 1 << 20)?.toString('utf8')
    assert.ok(ticketJson !== undefined)
    const secretPurpose = Buffer.from(PURPOSES.protectedSecret)
    const sessionId = '0123abcd-0123-4567-89ab-0123456789ab'
    const reference = openBytes(sealSessionReference(sessionId, ring), ring, Buffer.from(PURPOSES.sessionReference), 1 << 20)?.toString('utf8') ?? ''
    // A valid ticket's plaintext sealed under the secrets' purpose: only the purpose keeps it from opening as one.
    assert.ok(openTicket(sealBytes(ticketJson, ring, Buffer.from(PURPOSES.sessionRecord)), ring, now) !== undefined)
    assert.equal(openTicket(sealBytes(ticketJson, ring, secretPurpose), ring, now), undefined)
    assert.equal(openSessionReference(sealBytes(reference, ring, Buffer.from(PURPOSES.sessionReference)), ring), sessionId)
    assert.equal(openSessionReference(sealBytes(reference, ring, secretPurpose), ring), undefined)
    // A protected secret's plaintext sealed under the tickets' and cookies' purposes does not open as a secret.
    const envelope = openBytes(protectSecret(ring, SECRET), ring, secretPurpose, 1 << 20)
    assert.ok(envelope !== undefined)
    assert.equal(unprotectSecret(ring, sealBytes(envelope.toString('utf8'), ring, secretPurpose)), SECRET)
    for (const purpose of [PURPOSES.sessionRecord, PURPOSES.sessionReference, PURPOSES.correlation, PURPOSES.antiforgery]) {
      assertInvalid(() => unprotectSecret(ring, sealBytes(envelope.toString('utf8'), ring, Buffer.from(purpose))), /altered, or sealed for another purpose/)
    }
    assertInvalid(() => unprotectSecret(ring, ticket), /altered, or sealed for another purpose/)
    assertInvalid(() => unprotectSecret(ring, sealSessionReference('a'.repeat(43), ring)), /altered, or sealed for another purpose/)
    // Authentic under the secrets' purpose but not the secret form: refused, not returned.
    assertInvalid(() => unprotectSecret(ring, sealBytes('{"v":2,"s":"PLANTED"}', ring, secretPurpose)), /not a protected secret/)
  })

  const ring: KeyRing = createKeyRing([oldKey], 'Production')
  const sealed = protectSecret(ring, SECRET)
  const hostile: ReadonlyArray<readonly [string, unknown, RegExp]> = [
    ['a changed ciphertext character', flipped(sealed, 30), /altered/],
    ['a changed tag character', flipped(sealed, -3), /altered/],
    ['a changed nonce character', flipped(sealed, 10), /altered/],
    ['a truncated value', sealed.slice(0, -4), /altered/],
    ['a value cut to its key id', sealed.slice(0, 9), /altered/],
    ['padding added', `${sealed}=`, /altered/],
    ['a foreign character in the body', `${sealed.slice(0, 20)}*${sealed.slice(21)}`, /altered/],
    ['an unknown key id', `ZZZZZZZZ${sealed.slice(8)}`, /not in the key ring/],
    ['the plaintext itself', SECRET, /not a protected secret/],
    ['an empty string', '', /not a protected secret/],
    ['a value over the length bound', `${sealed.slice(0, 9)}${'A'.repeat(MAX_PROTECTED_SECRET_LENGTH)}`, /not a protected secret/],
    ['not a string', 42, /not a protected secret/]
  ]
  for (const [name, value, reason] of hostile) {
    test(`refused with APP_ERR_SECRET_INVALID, never naming the secret: ${name}`, () => {
      assertInvalid(() => unprotectSecret(ring, value as string), reason)
    })
  }

  test('app.dataProtection seals with the app\'s key ring, and the provider source is given the app to open its rows', async (t) => {
    const appRing = createKeyRing([newKey, oldKey], 'Development')
    // The app's "database": a row whose client secret was sealed by the admin endpoint.
    const rows: Array<{ scheme: string, clientSecret: string }> = []
    const source = (app: import('fastify').FastifyInstance): RuntimeProviderDefinition[] => rows.map((row) => ({
      scheme: row.scheme,
      settings: { Type: 'OpenIdConnect', Authority: 'https://idp.contoso.example', ClientId: 'contoso-app', ClientSecret: app.dataProtection.unprotectSecret(row.clientSecret) }
    }))
    const { app, logs } = await build(t, { keyRing: appRing, providerSource: source })
    const stored = app.dataProtection.protectSecret(SECRET)
    assert.equal(stored.slice(0, 8), appRing.sealing.id)
    assert.equal(unprotectSecret(appRing, stored), SECRET)
    assert.equal(app.dataProtection.unprotectSecret(protectSecret(createKeyRing([oldKey], 'Development'), SECRET)), SECRET)

    rows.push({ scheme: 'Contoso', clientSecret: stored })
    const added = await app.authentication.reloadProviders()
    assert.deepEqual(added.added, ['Contoso'])
    assert.deepEqual(added.refused, [])

    rows[0] = { scheme: 'Contoso', clientSecret: flipped(stored, 30) }
    await assert.rejects(app.authentication.reloadProviders(), (error: unknown) => {
      assert.ok(error instanceof AppError)
      assert.equal(error.code, 'APP_ERR_SECRET_INVALID')
      assert.ok(!error.message.includes('PLANTED'))
      return true
    })
    assert.ok(!logs.text().includes('PLANTED'), 'the secret is in the logs')
  })
})
