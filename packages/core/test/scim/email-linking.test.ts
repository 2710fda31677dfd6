/**
 * Linking by e-mail address refuses the account-takeover shapes (src/scim/email-linking.ts;
 * ciso-assistant PR #4658): an address the provider did not verify, an address at a domain the
 * customer did not prove, case, homoglyph, fullwidth and trailing-dot tricks in the domain, two
 * different addresses in one sign-in; over a store, a SCIM user whose externalId is another
 * person's and an address only Unicode case folding equals; and the startup rule names
 * `VerifiedDomains` when `LinkByEmail` is on without it.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { addressKeyOf, domainKeyOf, hasEmail, linkableEmailOf, type EmailLinking } from '../../src/scim/email-linking.js'
import type { Claim } from '../../src/session/principal.js'
import { MemoryDirectoryStore } from '../../src/directory/memory-directory-store.js'
import { connectionsOf } from '../../src/scim/connections.js'
import { signInAdmission } from '../../src/scim/sign-in-admission.js'
import type { ProvisioningSignIn } from '../../src/sign-in/provisioning-admission.js'
import { loadTestConfiguration } from '../helpers/app.js'

const LINKING: EmailLinking = { verifiedDomains: new Set(['contoso.test', 'xn--bcher-kva.test']) }
const email = (value: string): Claim => ({ type: 'application:email', value, issuer: 'OpenIdConnect' })
const verified: Claim = { type: 'email_verified', value: 'true', issuer: 'OpenIdConnect' }

function signIn (address: string | readonly string[], providerClaims: readonly Claim[] = [verified], protocol: 'OpenIdConnect' | 'Saml2' | 'unknown' = 'OpenIdConnect'): Parameters<typeof linkableEmailOf>[1] {
  return { providerClaims, claims: (typeof address === 'string' ? [address] : address).map(email), ...(protocol === 'unknown' ? {} : { protocol }) }
}

describe('the address a sign-in offers', () => {
  test('a verified address at a verified domain, compared in ASCII lower case', () => {
    assert.deepEqual(linkableEmailOf(LINKING, signIn('Grace@Contoso.TEST')), { key: 'grace@contoso.test', lookups: ['grace@contoso.test', 'Grace@Contoso.TEST'] })
    assert.deepEqual(linkableEmailOf(LINKING, signIn('grace@bücher.test')), { key: 'grace@xn--bcher-kva.test', lookups: ['grace@xn--bcher-kva.test', 'grace@bücher.test'] }, 'a genuine internationalized domain whose xn-- form is listed')
  })

  const refusals: Array<[string, Parameters<typeof linkableEmailOf>[1], string]> = [
    ['email_verified false', signIn('grace@contoso.test', [{ ...verified, value: 'false' }]), 'unverified'],
    ['no email_verified', signIn('grace@contoso.test', []), 'unverified'],
    ['email_verified true and false', signIn('grace@contoso.test', [verified, { ...verified, value: 'false' }]), 'unverified'],
    ['a SAML sign-in without EmailVerifiedClaim, even with an email_verified attribute', signIn('grace@contoso.test', [verified], 'Saml2'), 'unverified'],
    ['a sign-in whose protocol is not known', signIn('grace@contoso.test', [verified], 'unknown'), 'unverified'],
    ['no address', signIn([]), 'no_single_email'],
    ['two addresses', signIn(['grace@contoso.test', 'alan@contoso.test']), 'no_single_email'],
    ['another domain', signIn('grace@fabrikam.test'), 'other_domain'],
    ['a subdomain of a verified one', signIn('grace@mail.contoso.test'), 'other_domain'],
    ['a verified domain as a subdomain of another', signIn('grace@contoso.test.evil.test'), 'other_domain'],
    ['a Cyrillic о in the domain (homoglyph)', signIn('grace@cоntoso.test'), 'other_domain'],
    ['fullwidth letters IDNA maps to ASCII', signIn('grace@ｃｏｎｔｏｓｏ.test'), 'malformed_email'],
    ['the ideographic full stop', signIn('grace@contoso。test'), 'malformed_email'],
    ['a trailing dot', signIn('grace@contoso.test.'), 'malformed_email'],
    ['two @', signIn('grace@evil.test@contoso.test'), 'malformed_email'],
    ['a non-ASCII local part (Kelvin sign)', signIn('gra\u212Ae@contoso.test'), 'malformed_email'],
    ['no local part', signIn('@contoso.test'), 'malformed_email']
  ]
  for (const [name, input, refused] of refusals) {
    test(`refused: ${name}`, () => {
      assert.deepEqual(linkableEmailOf(LINKING, input), { refused })
    })
  }

  test('EmailVerifiedClaim names the claim for any protocol (SAML, Entra ID\'s xms_edov)', () => {
    const saml: EmailLinking = { ...LINKING, emailVerifiedClaim: 'xms_edov' }
    const edov: Claim = { type: 'xms_edov', value: 'true', issuer: 'Saml2' }
    assert.deepEqual(linkableEmailOf(saml, signIn('grace@contoso.test', [edov], 'Saml2')), { key: 'grace@contoso.test', lookups: ['grace@contoso.test'] })
    assert.deepEqual(linkableEmailOf(saml, signIn('grace@contoso.test', [verified], 'OpenIdConnect')), { refused: 'unverified' }, 'then email_verified no longer counts')
  })
})

test('domains and addresses in comparison form', () => {
  assert.equal(domainKeyOf('CONTOSO.test'), 'contoso.test')
  assert.equal(domainKeyOf('bücher.test'), 'xn--bcher-kva.test')
  assert.notEqual(domainKeyOf('cоntoso.test'), 'contoso.test')
  assert.equal(domainKeyOf('ｃontoso.test'), undefined)
  assert.equal(domainKeyOf('contoso'), undefined)
  assert.equal(addressKeyOf('Grace.Hopper+x@Contoso.Test'), 'grace.hopper+x@contoso.test')
  assert.equal(addressKeyOf('grace'), undefined)
})

test('a SCIM user\'s e-mails match by comparison form only: the store\'s wider case folding (Kelvin sign) does not', () => {
  assert.equal(hasEmail({ emails: [{ value: 'GRACE@contoso.test', type: 'work' }] }, 'grace@contoso.test'), true)
  assert.equal(hasEmail({ emails: [{ value: 'grace@bücher.test' }] }, 'grace@xn--bcher-kva.test'), true)
  assert.equal(hasEmail({ emails: [{ value: 'gra\u212Ae@contoso.test' }] }, 'grake@contoso.test'), false)
  assert.equal(hasEmail({ emails: 'grace@contoso.test' }, 'grace@contoso.test'), false)
  assert.equal(hasEmail({}, 'grace@contoso.test'), false)
})

describe('startup', () => {
  const KEY = 'ProjectTemplate:Provisioning:Connections:Contoso'
  const errorsOf = (connection: Record<string, unknown>): string[] =>
    loadTestConfiguration({ settings: { Provisioning: { Connections: { Contoso: { Tenant: 'contoso', ...connection } } } } }).errors.map((problem) => problem.message)

  test('LinkByEmail without VerifiedDomains is refused, naming the key', () => {
    assert.deepEqual(errorsOf({ LinkByEmail: true }), [`${KEY}:VerifiedDomains is required when ${KEY}:LinkByEmail is true: the e-mail domains the customer proved it owns.`])
  })

  test('a verified domain that is not an ASCII domain name is refused, naming its key and not its value', () => {
    const errors = errorsOf({ LinkByEmail: true, VerifiedDomains: ['contoso.test', 'bücher.test', '@contoso.test', 'contoso.test.'] })
    const message = (index: number): string => `${KEY}:VerifiedDomains:${index} must be a domain name in ASCII (an internationalized domain in its xn-- form), without @ or a trailing dot.`
    assert.deepEqual(errors, [message(1), message(2), message(3)])
  })

  test('off by default; on with verified domains, accepted', () => {
    assert.deepEqual(errorsOf({}), [])
    assert.deepEqual(errorsOf({ LinkByEmail: true, VerifiedDomains: ['Contoso.test', 'xn--bcher-kva.test'], EmailVerifiedClaim: 'xms_edov' }), [])
  })
})

describe('the sign-in step over a store', () => {
  const identity = { scheme: 'OpenIdConnect', issuer: 'https://login.contoso.test', subject: 'sub-grace' }
  const oidcSignIn = (extra: readonly Claim[] = []): ProvisioningSignIn => ({
    scheme: 'OpenIdConnect', identity, providerClaims: [verified, ...extra], claims: [email('grace@contoso.test')], protocol: 'OpenIdConnect'
  })
  const connection = (section: Record<string, unknown>): ReturnType<typeof connectionsOf> =>
    connectionsOf({ Contoso: { ...loadTestConfiguration({ settings: { Provisioning: { Connections: { Contoso: { Tenant: 'contoso', Schemes: ['OpenIdConnect'], LinkByEmail: true, VerifiedDomains: ['contoso.test'], ...section } } } } }).config.Provisioning.Connections.Contoso! } })
  const grace = { userName: 'grace', active: true, attributes: { emails: [{ value: 'grace@contoso.test' }] } }

  test('with an ExternalIdClaim, a SCIM user whose externalId is another person\'s is not linked by e-mail', async () => {
    const store = new MemoryDirectoryStore()
    const user = await store.createUser('Contoso', { ...grace, externalId: 'oid-of-grace' })
    const admission = signInAdmission(store, connection({ ExternalIdClaim: 'oid' }))
    assert.deepEqual(await admission.admit(oidcSignIn([{ type: 'oid', value: 'oid-of-mallory', issuer: 'OpenIdConnect' }])), { admitted: true, roles: [], connection: 'Contoso', linking: { emailNotLinked: 'external_id_mismatch' } })
    assert.equal((await store.getUser('Contoso', user.id))?.identity, undefined)
  })

  test('a stored address that only the store\'s Unicode case folding equals (Kelvin sign) is no match', async () => {
    const store = new MemoryDirectoryStore()
    await store.createUser('Contoso', { userName: 'kelvin', active: true, attributes: { emails: [{ value: 'gra\u212Ae@contoso.test' }] } })
    const admission = signInAdmission(store, connection({}))
    const signIn = { ...oidcSignIn(), claims: [email('grake@contoso.test')] }
    assert.deepEqual(await admission.admit(signIn), { admitted: true, roles: [], connection: 'Contoso', linking: { emailNotLinked: 'no_match' } })
  })

  test('LinkByEmail off: never by e-mail, and nothing to log', async () => {
    const store = new MemoryDirectoryStore()
    await store.createUser('Contoso', grace)
    const admission = signInAdmission(store, connection({ LinkByEmail: false }))
    assert.deepEqual(await admission.admit(oidcSignIn()), { admitted: true, roles: [], connection: 'Contoso' })
  })
})
