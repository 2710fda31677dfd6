/**
 * Connections from the provider source (issue 41, item 1), as plain data: a row's declaration is
 * checked by the configured connections' rules with the same messages, naming
 * `<Root>:Provisioning:Connections:<Name>`; a configured connection's name, tenant or scheme is
 * never taken; among rows the one in use keeps a tenant; a refused change keeps the connection's
 * previous settings; a change and a removal are reported.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { connectionsOf } from '../../src/scim/connections.js'
import { nextRuntimeConnections, type DeclaredConnection, type RuntimeConnectionsContext } from '../../src/scim/runtime-connections.js'
import { loadTestConfiguration } from '../helpers/app.js'

const AT = 'ProjectTemplate:Provisioning:Connections'
const configured = connectionsOf({ Contoso: { Tenant: 'contoso', Schemes: ['ContosoSso'], ExternalIdClaim: '', RequireProvisionedUsers: false, LinkByEmail: false, VerifiedDomains: [], EmailVerifiedClaim: '', GroupRoles: [] } })

function row (name: unknown, tenant: string | undefined, settings?: unknown, extra: Partial<DeclaredConnection> = {}): DeclaredConnection {
  return { scheme: `${String(name)}Sso`, declaration: { name, ...(settings === undefined ? {} : { settings }) }, tenant, ...extra }
}

function context (current: RuntimeConnectionsContext['current'] = new Map(), runtimeSchemes: ReadonlyMap<string, string | undefined> = new Map()): RuntimeConnectionsContext {
  return { rootKey: 'ProjectTemplate', configured, runtimeSchemes, configuredSchemes: new Set(['ContosoSso', 'Internal']), current }
}

const messages = (result: ReturnType<typeof nextRuntimeConnections>): string[] => result.refused.flatMap((refusal) => refusal.problems.map((problem) => problem.message))

describe('connections from the provider source', () => {
  test('a declaration is refused with the configured connections\' own messages, naming its key', () => {
    const result = nextRuntimeConnections([
      row('Northwind', undefined, { GroupRoles: ['Admins'] }),
      row('9lives', 'lives')
    ], context())
    assert.deepEqual(nextRuntimeConnections([row('a:b', 'x'), row(7, 'y')], context()).refused.map((refusal) => refusal.problems.map((problem) => problem.key)), [[`${AT}:`], [`${AT}:a:b`]])
    const configuredMessages = loadTestConfiguration({ settings: { Provisioning: { Connections: { Northwind: { GroupRoles: ['Admins'] }, '9lives': { Tenant: 'lives' } } } } }).errors.map((problem) => problem.message)
    assert.deepEqual(messages(result), [
      `${AT}:9lives is not a usable name: letters, digits, - and _, starting with a letter, at most 64 characters.`,
      `${AT}:Northwind:Tenant is required: the application tenant this connection provisions.`,
      `${AT}:Northwind:GroupRoles:0 must be "<group externalId or displayName>=<role>".`
    ])
    assert.deepEqual(messages(result).filter((message) => !configuredMessages.includes(message)), [], 'the same messages as configuration')
    assert.equal(result.connections.size, 0)
  })

  test('its keys are bound by the connection schema: an unknown key, a wrong type and Tenant (the row\'s tenant is the connection\'s) are refused', () => {
    const result = nextRuntimeConnections([row('Northwind', 'northwind', { Tenant: 'contoso', RequireProvisionedUsers: 'sometimes', Extra: 1 })], context())
    assert.deepEqual(result.refused[0]?.problems.map((problem) => problem.key), [`${AT}:Northwind:Tenant`, `${AT}:Northwind:RequireProvisionedUsers`, `${AT}:Northwind:Extra`])
    assert.match(messages(result)[0] ?? '', /Tenant is not read for a connection from the provider source/)
  })

  test('a valid declaration becomes a connection with the row\'s tenant and the schemes of its tenant or of none', () => {
    const runtimeSchemes = new Map([['NorthwindSso', 'northwind'], ['NorthwindSaml', undefined]])
    const result = nextRuntimeConnections([row('Northwind', 'northwind', { Schemes: ['NorthwindSaml'], RequireProvisionedUsers: true, GroupRoles: ['Admins=Orders.Admin'] })], context(new Map(), runtimeSchemes))
    assert.deepEqual(result.refused, [])
    assert.deepEqual(result.added, ['Northwind'])
    const connection = result.connections.get('Northwind')?.connection
    assert.deepEqual({ ...connection, groupRoles: [...connection?.groupRoles ?? []] }, { name: 'Northwind', tenant: 'northwind', schemes: ['NorthwindSaml'], requireProvisionedUsers: true, groupRoles: [['admins', ['Orders.Admin']]] })
  })

  test('LinkByEmail from the provider source links only in the row\'s verified domains, never one it merely names', () => {
    const settings = { LinkByEmail: true, VerifiedDomains: ['northwind.test', 'contoso.test'] }
    const refused = nextRuntimeConnections([row('Northwind', 'northwind', settings, { verifiedDomains: ['northwind.test'] })], context())
    assert.deepEqual(refused.refused.flatMap((refusal) => refusal.problems.map((problem) => problem.key)), [`${AT}:Northwind:VerifiedDomains:1`])
    assert.deepEqual(refused.added, [])
    const accepted = nextRuntimeConnections([row('Northwind', 'northwind', settings, { verifiedDomains: ['Northwind.test', 'contoso.test'] })], context())
    assert.deepEqual([accepted.refused, accepted.added], [[], ['Northwind']])
  })

  test('refused: a configured connection\'s name (in any case), its tenant, a configured scheme, another connection\'s scheme, a scheme not in use, another tenant\'s scheme, a name twice', () => {
    const runtimeSchemes = new Map([['FabrikamSso', 'fabrikam'], ['SharedSso', undefined]])
    const fabrikam = nextRuntimeConnections([row('Fabrikam', 'fabrikam', { Schemes: ['SharedSso'] })], context(new Map(), runtimeSchemes)).connections
    const result = nextRuntimeConnections([
      row('Contoso', 'other'),
      row('contoso', 'other2'),
      row('Copycat', 'contoso'),
      row('Fabrikam', 'fabrikam', { Schemes: ['SharedSso'] }),
      row('Schemer', 'schemer', { Schemes: ['ContosoSso', 'Internal'] }),
      row('Sharer', 'sharer', { Schemes: ['SharedSso'] }),
      row('Ghost', 'ghost', { Schemes: ['NoSuchScheme'] }),
      row('Poacher', 'poacher', { Schemes: ['FabrikamSso'] }),
      row('Twice', 'twice'),
      row('Twice', 'twice-again')
    ], context(fabrikam, runtimeSchemes))
    assert.deepEqual([...result.connections.keys()], ['Fabrikam', 'Twice'])
    assert.deepEqual(messages(result), [
      `${AT}:Contoso names a configured connection; a connection from the provider source has a name of its own.`,
      `${AT}:contoso names a configured connection; a connection from the provider source has a name of its own.`,
      `${AT}:Twice is defined twice by the provider source.`,
      `${AT}:Copycat:Tenant names the tenant of connection Contoso; a tenant has one connection.`,
      `${AT}:Ghost:Schemes:0 names no enabled sign-in scheme; list the name of an enabled provider that signs users in.`,
      `${AT}:Poacher:Schemes:0 names a scheme of another tenant; a connection from the provider source lists only schemes of its tenant or of none.`,
      `${AT}:Schemer:Schemes:0 names a configured scheme; a connection from the provider source lists only schemes from the provider source.`,
      `${AT}:Schemer:Schemes:1 names a configured scheme; a connection from the provider source lists only schemes from the provider source.`,
      `${AT}:Sharer:Schemes:0 names a scheme of connection Fabrikam; a scheme belongs to one connection.`
    ])
    assert.ok(result.refused.every((refusal) => !refusal.kept))
  })

  test('between rows, the connection in use keeps its tenant; then the earlier createdAt', () => {
    const first = nextRuntimeConnections([row('Old', 'shared', undefined, { createdAtMs: 2000 }), row('Older', 'shared', undefined, { createdAtMs: 1000 })], context())
    assert.deepEqual([...first.connections.keys()], ['Older'])
    const second = nextRuntimeConnections([row('Newer', 'shared', undefined, { createdAtMs: 1 }), row('Older', 'shared', undefined, { createdAtMs: 1000 })], context(first.connections))
    assert.deepEqual([...second.connections.keys()], ['Older'])
    assert.deepEqual(second.refused.map((refusal) => [refusal.connection, refusal.kept]), [['Newer', false]])
  })

  test('a change is reported and applied; a refused change keeps the previous settings; a connection no row declares is removed', () => {
    const first = nextRuntimeConnections([row('Northwind', 'northwind', { GroupRoles: ['A=Reader'] })], context())
    const changed = nextRuntimeConnections([row('Northwind', 'northwind', { GroupRoles: ['A=Writer'] })], context(first.connections))
    assert.deepEqual([changed.added, changed.changed, changed.removed], [[], ['Northwind'], []])
    assert.deepEqual([...changed.connections.get('Northwind')?.connection.groupRoles ?? []], [['a', ['Writer']]])

    const refused = nextRuntimeConnections([row('Northwind', 'northwind', { GroupRoles: ['no role'] })], context(changed.connections))
    assert.deepEqual(refused.refused.map((refusal) => [refusal.connection, refusal.kept]), [['Northwind', true]])
    assert.equal(refused.connections.get('Northwind'), changed.connections.get('Northwind'), 'the previous settings are kept')
    assert.deepEqual([refused.added, refused.changed, refused.removed], [[], [], []])

    const removed = nextRuntimeConnections([], context(refused.connections))
    assert.deepEqual([removed.connections.size, removed.removed], [0, ['Northwind']])
  })
})
