/**
 * The tenants the provider source names (providers/source-tenants.ts; issue 42, item 4): unknown
 * until the first read; a tenant is present while any definition names it (a refused or disabled
 * row too) or a configured AllowedTenants entry maps to it; a read tells the listeners which
 * tenants left since the read before, never at the first read, never a configured one.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { SourceTenants } from '../../src/providers/source-tenants.js'
import type { RuntimeProviderDefinition } from '../../src/providers/runtime-definitions.js'

const row = (scheme: string, tenant?: string, settings: Record<string, unknown> = { Type: 'OpenIdConnect' }): RuntimeProviderDefinition =>
  ({ scheme, settings, ...(tenant === undefined ? {} : { tenant }) })

test('presence and removals across reads', async () => {
  const tenants = new SourceTenants(new Set(['t-configured']))
  const heard: string[][] = []
  tenants.onRemoved((removed) => { heard.push([...removed]) })
  assert.equal(tenants.present('t-a'), undefined, 'unknown before the first read')
  assert.equal(tenants.present('t-configured'), true)

  assert.deepEqual(await tenants.update([row('A', 't-a'), row('B', 't-b', { Type: 'OpenIdConnect', Enabled: false }), row('C', 't-configured'), row('D')]), [])
  assert.deepEqual(heard, [], 'the first read removes nothing')
  for (const tenant of ['t-a', 't-b', 't-configured']) assert.equal(tenants.present(tenant), true, tenant)
  assert.equal(tenants.present('t-other'), false)

  assert.deepEqual(await tenants.update([row('B', 't-b', { Type: 'Nonsense' })]), ['t-a'])
  assert.deepEqual(heard, [['t-a']])
  assert.equal(tenants.present('t-a'), false)
  assert.equal(tenants.present('t-b'), true, 'a row the source still returns keeps its tenant, even one validation refuses')
  assert.equal(tenants.present('t-configured'), true, 'configuration keeps its tenants')
})

test('a listener that fails does not fail the read, and the others still hear', async () => {
  const tenants = new SourceTenants()
  const heard: string[] = []
  tenants.onRemoved(() => { throw new Error('store down') })
  tenants.onRemoved((removed) => { heard.push(...removed) })
  await tenants.update([row('A', 't-a')])
  assert.deepEqual(await tenants.update([]), ['t-a'])
  assert.deepEqual(heard, ['t-a'])
})
