/**
 * The registry of provider instances (src/providers/registry.ts): Map lookups by scheme and by
 * e-mail domain (case-insensitive), instances added and removed at runtime with their domains, a
 * taken scheme or domain refused without a partial add; and which strings count as one e-mail
 * address for discovery.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { emailDomainOf, ProviderConflictError, ProviderRegistry } from '../../src/providers/registry.js'

describe('ProviderRegistry', () => {
  test('lookups by scheme and by e-mail domain; removal takes the domains with it', () => {
    const registry = new ProviderRegistry<{ scheme: string, domains?: string[] }>()
    registry.add({ scheme: 'Partners', domains: ['Partner.Example', 'partner.example.org'] })
    registry.add({ scheme: 'Staff' })
    assert.deepEqual([...registry.byScheme.keys()], ['Partners', 'Staff'])
    assert.equal(registry.hasDomains, true)
    assert.equal(registry.forEmail('ada@PARTNER.example')?.scheme, 'Partners')
    assert.equal(registry.forEmail('ada@partner.example.org')?.scheme, 'Partners')
    assert.equal(registry.forEmail('ada@sub.partner.example'), undefined, 'a subdomain is another domain')
    assert.equal(registry.forEmail('ada@staff.example'), undefined)
    assert.equal(registry.remove('Partners'), true)
    assert.equal(registry.remove('Partners'), false)
    assert.equal(registry.forEmail('ada@partner.example'), undefined)
    assert.equal(registry.hasDomains, false)
    registry.add({ scheme: 'Partners', domains: ['partner.example'] })
    assert.equal(registry.get('Partners')?.domains?.[0], 'partner.example')
  })

  test('a taken scheme or domain is refused and nothing of the instance is added', () => {
    const registry = new ProviderRegistry<{ scheme: string, domains?: string[] }>()
    registry.add({ scheme: 'Acme', domains: ['acme.example'] })
    assert.throws(() => { registry.add({ scheme: 'Acme' }) }, (error: unknown) => error instanceof ProviderConflictError && error.scheme === 'Acme' && error.domain === undefined)
    assert.throws(() => { registry.add({ scheme: 'Beta', domains: ['beta.example', 'ACME.example'] }) }, (error: unknown) => error instanceof ProviderConflictError && error.domain === 'acme.example')
    assert.equal(registry.get('Beta'), undefined)
    assert.equal(registry.forEmail('x@beta.example'), undefined, 'no partial add')
  })
})

describe('emailDomainOf', () => {
  test('one address: its domain in lower case; anything else: undefined', () => {
    const cases: Array<[string, string | undefined]> = [
      ['ada@Example.COM', 'example.com'],
      [' ada.lovelace+work@mail.example.co.uk ', 'mail.example.co.uk'],
      ['ada@localhost', undefined],
      ['ada@example', undefined],
      ['@example.com', undefined],
      ['ada@@example.com', undefined],
      ['ada@example.com@evil.example', undefined],
      ['ada example@example.com', undefined],
      ['"ada"@example.com', undefined],
      ['ada@-example.com', undefined],
      ['ada@example.123', undefined],
      [`${'a'.repeat(65)}@example.com`, undefined],
      [`a@${'b'.repeat(250)}.com`, undefined],
      ['', undefined]
    ]
    for (const [address, domain] of cases) assert.equal(emailDomainOf(address), domain, address)
  })
})
