/**
 * What a verified provider response becomes before it is a session (sign-in/completion.ts): the
 * application's claims (none without a subject), and the tenant claim and index key only the
 * provider source may add.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { applicationClaimsOf, sessionClaimsOf, TENANT_CLAIM_TYPE, type SignInResult } from '../../src/sign-in/completion.js'
import { providerIndexKeyOf } from '../../src/session/session-store.js'

const ISSUER = 'https://idp.example.test'
const result = (claims: SignInResult['claims'], more: Partial<SignInResult> = {}): SignInResult => ({ scheme: 'Partners', claims, returnUrl: '/', ...more })
const ON = { Enabled: true, RemoveOriginalClaims: false }

describe('applicationClaimsOf', () => {
  test('maps the provider claims and keeps a sign-in with a subject', () => {
    const claims = applicationClaimsOf(result([{ type: 'sub', value: 'user-1', issuer: ISSUER }, { type: 'email', value: 'a@example.test', issuer: ISSUER }]), ON)
    assert.ok(claims?.some((claim) => claim.type === 'application:subject' && claim.value === 'user-1'))
    assert.ok(claims?.some((claim) => claim.type === 'sub'))
  })

  test('refuses (undefined) without a subject, or with an empty one', () => {
    assert.equal(applicationClaimsOf(result([{ type: 'email', value: 'a@example.test', issuer: ISSUER }]), ON), undefined)
    assert.equal(applicationClaimsOf(result([{ type: 'sub', value: '', issuer: ISSUER }]), ON), undefined)
  })

  test('the provider\'s ClaimMappings choose the subject', () => {
    const claims = applicationClaimsOf(result([{ type: 'employee_id', value: 'E-7', issuer: ISSUER }], { claimMappings: { employee_id: 'application:subject' } }), ON)
    assert.deepEqual(claims?.filter((claim) => claim.type === 'application:subject').map((claim) => claim.value), ['E-7'])
  })

  test('with the transformation off, any claim is kept as it came and none is mapped', () => {
    const claims = applicationClaimsOf(result([{ type: 'sub', value: 'user-1', issuer: ISSUER }]), { Enabled: false, RemoveOriginalClaims: false })
    assert.deepEqual(claims, [{ type: 'sub', value: 'user-1', issuer: ISSUER }])
    assert.equal(applicationClaimsOf(result([]), { Enabled: false, RemoveOriginalClaims: false }), undefined)
  })
})

describe('sessionClaimsOf', () => {
  const hooked = [
    { type: 'application:subject', value: 'user-1', issuer: ISSUER },
    { type: TENANT_CLAIM_TYPE, value: 'forged', issuer: ISSUER }
  ]

  test('a configured provider: the hook\'s claims and the result\'s index keys as they are', () => {
    assert.deepEqual(sessionClaimsOf(result([], { indexKeys: ['oidc-sid:x'] }), hooked), { claims: hooked, indexKeys: ['oidc-sid:x'] })
    assert.deepEqual(sessionClaimsOf(result([]), hooked), { claims: hooked })
  })

  test('a provider from the provider source: its tenant replaces any tenant claim, and its index key is added', () => {
    const session = sessionClaimsOf(result([], { runtime: { tenant: 'acme' }, indexKeys: ['oidc-sid:x'] }), hooked)
    assert.deepEqual(session.claims.filter((claim) => claim.type === TENANT_CLAIM_TYPE), [{ type: TENANT_CLAIM_TYPE, value: 'acme', issuer: 'Partners' }])
    assert.deepEqual(session.indexKeys, ['oidc-sid:x', providerIndexKeyOf('Partners')])
    const untenanted = sessionClaimsOf(result([], { runtime: {} }), hooked)
    assert.equal(untenanted.claims.some((claim) => claim.type === TENANT_CLAIM_TYPE), false)
  })
})
