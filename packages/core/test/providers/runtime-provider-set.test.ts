/**
 * The bookkeeping of providers from the provider source (src/providers/runtime-provider-set.ts),
 * without Fastify: which definitions are applied, which endpoint path each provider owns, what is
 * refused and why (keys named, never a value), and in which order a reload removes, revokes and
 * adds. The host is a plain object recording what the set asks of it.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { ProviderConflictError, ProviderRegistry } from '../../src/providers/registry.js'
import { providerEndpoint, type AuthenticationProvider, type OpenedProvider, type ProviderEndpoint } from '../../src/providers/provider.js'
import { RuntimeProviderSet, type RuntimeProviderHost } from '../../src/providers/runtime-provider-set.js'
import type { RuntimeProviderDefinition, ValidatedRuntimeProvider } from '../../src/providers/runtime-definitions.js'
import type { ProviderInstance } from '../../src/providers/provider-instances.js'

const SECTION = 'ProjectTemplate:Authentication:Schemes'

function providerOf (scheme: string, options: { runtime?: boolean, domains?: string[] } = {}): AuthenticationProvider & { endpoints: readonly ProviderEndpoint[] } {
  const endpoints = [providerEndpoint('callback', 'GET', `/signin-${scheme.toLowerCase()}`, (_request, reply) => reply)]
  return {
    scheme,
    displayName: scheme,
    paths: endpoints.map((endpoint) => endpoint.path),
    endpoints,
    ...(options.runtime === undefined ? {} : { runtime: options.runtime }),
    ...(options.domains === undefined ? {} : { domains: options.domains }),
    challenge: (_request, reply) => reply,
    status: () => ({ available: true })
  }
}

/** A host whose registry holds `configured`, and that records every call the set makes. */
function hostWith (configured: AuthenticationProvider[] = []): RuntimeProviderHost & { calls: string[], registry: ProviderRegistry<AuthenticationProvider> } {
  const registry = new ProviderRegistry<AuthenticationProvider>()
  for (const provider of configured) registry.add(provider)
  const calls: string[] = []
  return {
    calls,
    registry,
    rootKey: 'ProjectTemplate',
    validate: (definition) => definition.settings.Valid === false
      ? { ok: false, problems: [{ key: `${SECTION}:${definition.scheme}:Authority`, message: `${SECTION}:${definition.scheme}:Authority is required when the provider is enabled.` }] }
      : {
          ok: true,
          provider: {
            instance: { scheme: definition.scheme, keyPrefix: `${SECTION}:${definition.scheme}`, contract: false, protocol: 'OpenIdConnect', settings: { Enabled: definition.settings.Enabled !== false, AllowedTenants: definition.settings.AllowedTenants ?? [] } } as unknown as ProviderInstance,
            verifiedDomains: (definition.domains ?? []).map((domain) => domain.name)
          }
        },
    open: async (validated: ValidatedRuntimeProvider): Promise<OpenedProvider> => {
      calls.push(`open ${validated.instance.scheme}`)
      return { provider: providerOf(validated.instance.scheme, { runtime: true, domains: [...validated.verifiedDomains] }), stop: () => { calls.push(`stop ${validated.instance.scheme}`) } }
    },
    registered: () => registry.byScheme,
    register: (provider) => { registry.add(provider) },
    unregister: (scheme) => { registry.remove(scheme) },
    endSessions: async (scheme) => { calls.push(`end ${scheme}`) }
  }
}

const definition = (scheme: string, settings: Record<string, unknown> = {}, extra: Partial<RuntimeProviderDefinition> = {}): RuntimeProviderDefinition => ({ scheme, settings: { Type: 'OpenIdConnect', ...settings }, ...extra })

describe('RuntimeProviderSet', () => {
  test('an applied provider owns its endpoint paths, compared case-insensitively and by kind', async () => {
    const host = hostWith()
    const set = new RuntimeProviderSet(host)
    assert.deepEqual(await set.apply([definition('Acme')], {}), { added: ['Acme'], removed: [], refused: [], refusedDomains: [] })
    assert.equal(host.registry.get('Acme')?.runtime, true)
    assert.deepEqual(set.find('/SIGNIN-acme', 'callback')?.map((endpoint) => endpoint.path), ['/signin-acme'])
    assert.equal(set.find('/signin-acme', 'acs'), undefined, 'another kind of endpoint at the path')
    assert.equal(set.find('/signin-other', 'callback'), undefined)
  })

  test('a configured scheme, an invalid definition, a name twice and a taken path are refused; nothing of them stays open', async () => {
    const host = hostWith([providerOf('Staff'), providerOf('Legacy')])
    const set = new RuntimeProviderSet(host)
    // Legacy's runtime path /signin-legacy is the configured Legacy's; LEGACY differs from it in case only.
    const result = await set.apply([definition('Staff'), definition('Broken', { Valid: false }), definition('Acme'), definition('Acme', { DisplayName: 'Again' }), definition('LEGACY')], {})
    assert.deepEqual(result.added, ['Acme'])
    assert.deepEqual(result.refused.map((refusal) => refusal.problems.map((problem) => problem.message)), [
      [`${SECTION}:Staff is declared in configuration; the configured provider is used.`],
      [`${SECTION}:Broken:Authority is required when the provider is enabled.`],
      [`${SECTION}:Acme is defined twice by the provider source.`],
      [`${SECTION}:LEGACY would use the endpoint path of another provider (a configured one, or one from the source whose name differs in case only); choose another scheme name.`]
    ])
    assert.deepEqual(host.calls, ['open Acme', 'open LEGACY', 'stop LEGACY'])
  })

  test('a verified domain a configured provider serves is refused under the Domains key; the provider is in use without it', async () => {
    const host = hostWith([providerOf('Staff', { domains: ['staff.example'] })])
    const set = new RuntimeProviderSet(host)
    const result = await set.apply([definition('Acme', {}, { domains: [{ name: 'staff.example', verified: true }, { name: 'acme.example', verified: true }] })], {})
    assert.deepEqual(result.refused, [])
    assert.deepEqual(result.added, ['Acme'])
    assert.deepEqual(result.refusedDomains, [{ scheme: 'Acme', domain: 'staff.example', key: `${SECTION}:Acme:Domains`, message: `${SECTION}:Acme:Domains: the verified domain staff.example is not routed to this provider: a configured provider serves it.` }])
    assert.deepEqual(host.registry.get('Acme')?.domains, ['acme.example'])
    assert.throws(() => { host.register(providerOf('Beta', { domains: ['STAFF.example'] })) }, ProviderConflictError)
  })

  describe('a verified domain claimed by two rows (issue 33, item 3)', () => {
    const contoso = (scheme: string, verifiedAt?: string, extra: Record<string, unknown> = {}): RuntimeProviderDefinition =>
      definition(scheme, extra, { domains: [{ name: 'contoso.example', verified: true, ...(verifiedAt === undefined ? {} : { verifiedAt }) }, { name: `${scheme.toLowerCase()}.example`, verified: true }] })
    const ownerOf = (host: ReturnType<typeof hostWith>): string | undefined => [...host.registry.byScheme.values()].find((provider) => provider.domains?.includes('contoso.example'))?.scheme

    test('the earliest verification keeps it, whatever the row order; the other row keeps its provider and its other domains', async () => {
      for (const order of [['Zeta', 'Alpha'], ['Alpha', 'Zeta']]) {
        const host = hostWith()
        const set = new RuntimeProviderSet(host)
        const rows = { Zeta: contoso('Zeta', '2026-01-01T00:00:00Z'), Alpha: contoso('Alpha', '2026-06-01T00:00:00Z') }
        const result = await set.apply(order.map((scheme) => rows[scheme as 'Zeta' | 'Alpha']), {})
        assert.deepEqual([...result.added].sort(), ['Alpha', 'Zeta'])
        assert.equal(ownerOf(host), 'Zeta')
        assert.deepEqual(host.registry.get('Alpha')?.domains, ['alpha.example'])
        assert.deepEqual(result.refusedDomains.map(({ scheme, domain }) => [scheme, domain]), [['Alpha', 'contoso.example']])
      }
    })

    test('the owner keeps it through a display-name edit, a second instance and a restart (a fresh set)', async () => {
      const rows = (ownerName: string): RuntimeProviderDefinition[] => [contoso('Beta', undefined), contoso('Owner', '2025-03-01T00:00:00Z', { DisplayName: ownerName })]
      const host = hostWith()
      const set = new RuntimeProviderSet(host)
      await set.apply(rows('Owner Inc'), {})
      assert.equal(ownerOf(host), 'Owner')
      const edited = await set.apply(rows('Owner Incorporated'), {})
      assert.deepEqual(edited.added, ['Owner'])
      assert.equal(ownerOf(host), 'Owner')
      const other = hostWith()
      await new RuntimeProviderSet(other).apply([...rows('Owner Incorporated')].reverse(), {})
      assert.equal(ownerOf(other), 'Owner')
    })

    test('undated claims: the scheme name decides; when the owner drops the domain, the other row gets it', async () => {
      const host = hostWith()
      const set = new RuntimeProviderSet(host)
      await set.apply([contoso('Mike'), contoso('Kilo')], {})
      assert.equal(ownerOf(host), 'Kilo')
      const dropped = await set.apply([contoso('Mike'), definition('Kilo', {}, { domains: [{ name: 'kilo.example', verified: true }] })], {})
      assert.deepEqual([...dropped.added].sort(), ['Kilo', 'Mike'])
      assert.deepEqual(dropped.refusedDomains, [])
      assert.equal(ownerOf(host), 'Mike')
    })
  })

  describe('an Entra tenant id listed by two rows (issue 40, item 20)', () => {
    const TID = '72f988bf-86f1-41af-91ab-2d7cd011db47'
    const OWN = '0b6a0f2e-3c1d-4b8e-9d7a-5e4f3c2b1a09'
    const customer = (scheme: string, createdAt?: string, tenants: string[] = [TID]): RuntimeProviderDefinition =>
      definition(scheme, { AllowedTenants: tenants }, { tenant: `t-${scheme.toLowerCase()}`, ...(createdAt === undefined ? {} : { createdAt }) })

    test('the row created earlier keeps it, whatever the row order; the other row is refused, naming its entry, with the refusal event\'s result', async () => {
      for (const order of [['Zeta', 'Alpha'], ['Alpha', 'Zeta']]) {
        const host = hostWith()
        const set = new RuntimeProviderSet(host)
        const rows = { Zeta: customer('Zeta', '2026-01-01T00:00:00Z'), Alpha: customer('Alpha', '2026-06-01T00:00:00Z', [OWN, TID]) }
        const result = await set.apply(order.map((scheme) => rows[scheme as 'Zeta' | 'Alpha']), {})
        assert.deepEqual(result.added, ['Zeta'])
        assert.deepEqual(result.refused, [{ scheme: 'Alpha', problems: [{ key: `${SECTION}:Alpha:AllowedTenants:1`, message: `${SECTION}:Alpha:AllowedTenants:1 names a tenant that another provider serves (another provider from the source lists it and was created earlier (or, undated, has the earlier scheme name)); a tenant belongs to one provider.` }] }])
        assert.equal(host.registry.get('Alpha'), undefined)
        assert.ok(!JSON.stringify(result).includes(TID))
      }
    })

    test('a tenant a configured provider lists is never a runtime row\'s; undated rows: the scheme name decides, and the later one comes in when the owner drops it', async () => {
      const host = { ...hostWith(), configuredTenants: () => new Set([OWN]) }
      const set = new RuntimeProviderSet(host)
      const first = await set.apply([customer('Mike'), customer('Kilo'), customer('Lima', undefined, [OWN])], {})
      assert.deepEqual(first.added, ['Kilo'])
      assert.deepEqual(first.refused.map((refusal) => [refusal.scheme, refusal.problems.map((problem) => problem.key)]), [
        ['Mike', [`${SECTION}:Mike:AllowedTenants:0`]],
        ['Lima', [`${SECTION}:Lima:AllowedTenants:0`]]
      ])
      assert.match(first.refused[1]!.problems[0]!.message, /a configured provider lists it/)
      const dropped = await set.apply([customer('Mike'), customer('Kilo', undefined, [])], {})
      assert.deepEqual(dropped, { added: ['Mike', 'Kilo'], removed: [], refused: [], refusedDomains: [] })
    })
  })

  test('a reload keeps an unchanged definition open, removes the absent ones and ends their sessions before it adds', async () => {
    const host = hostWith()
    const set = new RuntimeProviderSet(host)
    await set.apply([definition('Acme'), definition('Beta'), definition('Gamma')], {})
    host.calls.length = 0
    const result = await set.apply([definition('Acme'), definition('Gamma', { Enabled: false }), definition('Delta')], { revokeSessions: true })
    assert.deepEqual(result, { added: ['Delta'], removed: ['Beta', 'Gamma'], refused: [], refusedDomains: [] })
    assert.deepEqual(host.calls, ['stop Beta', 'stop Gamma', 'end Beta', 'end Gamma', 'open Delta'])
    assert.equal(set.find('/signin-beta', 'callback'), undefined)
    set.close()
    assert.deepEqual([...host.registry.byScheme.keys()], [])
  })

  test('a replaced definition that names other users ends their sessions; one that keeps them does not', async () => {
    const host = hostWith()
    const set = new RuntimeProviderSet(host)
    await set.apply([definition('Acme', { Authority: 'https://a.example' }), definition('Beta', { Authority: 'https://b.example' })], {})
    host.calls.length = 0
    const result = await set.apply([definition('Acme', { Authority: 'https://other.example' }), definition('Beta', { Authority: 'https://b.example', DisplayName: 'Beta Corp' })], { revokeSessions: true })
    assert.deepEqual(result, { added: ['Acme', 'Beta'], removed: [], refused: [], refusedDomains: [] })
    assert.deepEqual(host.calls, ['stop Acme', 'stop Beta', 'end Acme', 'open Acme', 'open Beta'])
  })
})
