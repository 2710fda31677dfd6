/**
 * Connections from the provider source (issue 41, item 1), end to end on two instances sharing one
 * embedded state store (the reload announcement) and one PostgreSQL directory store: a row's
 * connection added by a reload on A is served on B; a token issued on A for it works on B; a
 * changed declaration keeps its users and tokens; refusals (a configured connection's name or
 * tenant, an invalid change) keep the previous good set and are logged naming the keys; a removed
 * connection answers exactly as an unknown one and its token is refused from the next request. A
 * configured connection whose tenant no provider issues is warned of at each reload until a row has it.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { createEmbeddedStore } from '../../src/plugins/state.js'
import type { RuntimeProviderDefinition } from '../../src/providers/runtime-definitions.js'
import { build, loadTestConfiguration } from '../helpers/app.js'
import { PostgresServer } from '../helpers/postgres-server.js'
import { userBody } from '../helpers/scim.js'
import { waitFor } from '../helpers/wait.js'

const server = new PostgresServer()
before(async () => { await server.start() })
after(async () => { await server.dispose() })

const AT = 'ProjectTemplate:Provisioning:Connections'

/** Northwind's row: its SAML provider (nothing is fetched before first use) and its connection. */
function northwind (connection: Record<string, unknown>, extra: Partial<RuntimeProviderDefinition> = {}): RuntimeProviderDefinition {
  return {
    scheme: 'NorthwindSso',
    settings: { Type: 'Saml2', EntityId: 'https://app.example.test/sp-northwind', MetadataUrl: 'https://idp.northwind.example/metadata' },
    tenant: 'northwind',
    connection: { name: 'Northwind', settings: connection },
    ...extra
  }
}

test('a connection from the provider source: applied on every instance by reloadProviders, changed keeping users and tokens, refusals keep the good set, removed like an unknown one', async (context) => {
  const connectionString = await server.createDatabase('scim_source')
  const state = createEmbeddedStore(loadTestConfiguration().config.State.Embedded)
  context.after(async () => { await state.close() })
  let definitions: RuntimeProviderDefinition[] = []
  const settings = {
    Provisioning: {
      Enabled: true,
      Store: { Provider: 'PostgreSql', PostgreSql: { ConnectionString: connectionString } },
      Connections: { Contoso: { Tenant: 'contoso' } }
    }
  }
  const options = { testSignIn: false, nodeEnv: 'development', settings, stateStore: state, providerSource: () => definitions }
  const a = await build(context, options)
  const b = await build(context, options)
  const scim = async (app: FastifyInstance, method: string, connection: string, path: string, token: string, body?: unknown): Promise<{ status: number, body: string }> => {
    const answer = await app.inject({ method: method as 'GET', url: `/scim/v2/${connection}${path}`, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }) }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) })
    return { status: answer.statusCode, body: answer.body }
  }
  const unmatched = (): unknown[] => a.logs.events('provisioning.connection.tenant_unmatched').map((line) => line.key)
  assert.deepEqual(unmatched(), [`${AT}:Contoso:Tenant`], 'checked at the start reload: no row has the tenant yet')
  const contosoToken = (await a.app.provisioning!.createToken('Contoso')).token
  assert.equal((await scim(b.app, 'GET', 'Northwind', '/Users', contosoToken)).status, 401, 'before the row: unknown')
  await assert.rejects(a.app.provisioning!.createToken('Northwind'), /Northwind is not a configured connection/)

  definitions = [northwind({ GroupRoles: ['Staff=Reader'] })]
  const added = await a.app.authentication.reloadProviders()
  assert.deepEqual([added.added, added.connections], [['NorthwindSso'], { added: ['Northwind'], changed: [], removed: [], refused: [] }])
  assert.deepEqual(a.app.provisioning!.connections, ['Contoso', 'Northwind'])
  await waitFor(() => b.app.provisioning!.connections.includes('Northwind'), 'B to apply the connection', 5_000, 10)
  const token = (await a.app.provisioning!.createToken('Northwind')).token
  const created = await scim(b.app, 'POST', 'Northwind', '/Users', token, userBody('ada@northwind.test', { externalId: 'ada' }))
  assert.equal(created.status, 201, 'a token issued on A for the new connection works on B')
  const id = (JSON.parse(created.body) as { id: string }).id

  definitions = [northwind({ GroupRoles: ['Staff=Writer'], RequireProvisionedUsers: true })]
  const changed = await b.app.authentication.reloadProviders()
  assert.deepEqual([changed.added, changed.removed, changed.connections?.changed], [[], [], ['Northwind']], 'a change of the connection alone keeps the provider')
  const appliedOnA = (): boolean => a.logs.events('external.runtime_providers.reloaded').some((line) => line.trigger === 'announcement' && (line.connections as { changed?: string[] } | undefined)?.changed?.includes('Northwind') === true)
  await waitFor(appliedOnA, 'A to apply the change', 5_000, 10)
  assert.equal((await scim(a.app, 'GET', 'Northwind', `/Users/${id}`, token)).status, 200, 'changed: the user and the token stay')

  const copycat: RuntimeProviderDefinition = { scheme: 'Copycat', settings: { Type: 'Saml2', EntityId: 'https://app.example.test/sp-copycat', MetadataUrl: 'https://idp.copycat.example/metadata' }, tenant: 'contoso', connection: { name: 'Copycat' } }
  definitions = [northwind({ GroupRoles: ['no role'] }), copycat, { ...copycat, scheme: 'Thief', tenant: 'thief', connection: { name: 'contoso' } }]
  const warnedBefore = unmatched().length
  const refused = await a.app.authentication.reloadProviders()
  assert.equal(unmatched().length, warnedBefore, 'a row in use (Copycat, a valid provider) issues the tenant contoso now')
  assert.deepEqual(refused.connections?.refused.map((refusal) => [refusal.connection, refusal.kept, refusal.problems.map((problem) => problem.key)]), [
    ['contoso', false, [`${AT}:contoso`]],
    ['Northwind', true, [`${AT}:Northwind:GroupRoles:0`]],
    ['Copycat', false, [`${AT}:Copycat:Tenant`]]
  ])
  const lines = a.logs.events('provisioning.connection.refused')
  assert.deepEqual(lines.map((line) => [line.connection, line.provider, line.kept]), [['contoso', 'Thief', false], ['Northwind', 'NorthwindSso', true], ['Copycat', 'Copycat', false]])
  assert.deepEqual(a.app.provisioning!.connections, ['Contoso', 'Northwind'])
  assert.equal((await scim(a.app, 'GET', 'Northwind', `/Users/${id}`, token)).status, 200, 'the previous good settings are kept')
  assert.equal((await scim(a.app, 'GET', 'Contoso', `/Users/${id}`, contosoToken)).status, 404, 'Contoso is still the configured one, and does not see Northwind\'s user')

  definitions = []
  assert.deepEqual((await a.app.authentication.reloadProviders()).connections?.removed, ['Northwind'])
  await waitFor(() => !b.app.provisioning!.connections.includes('Northwind'), 'B to remove the connection', 5_000, 10)
  const removed = await scim(b.app, 'GET', 'Northwind', `/Users/${id}`, token)
  const unknown = await scim(b.app, 'GET', 'Nobody', `/Users/${id}`, token)
  assert.deepEqual(removed, unknown, 'a removed connection answers as an unknown one')
  assert.equal(removed.status, 401)
  await assert.rejects(b.app.provisioning!.createToken('Northwind'), /not a configured connection/)
})
