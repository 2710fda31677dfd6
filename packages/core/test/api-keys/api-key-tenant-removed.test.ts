/**
 * A tenant's removal from the provider source (issue 42, item 4), on two instances sharing an
 * embedded state store and a PostgreSQL directory store (so they share the keys), with the real
 * app over `inject()`: a tenant-owned key works on both while the source names its tenant; when a
 * reload no longer names it, its keys are revoked (`api_key.revoked`, reason `tenant_removed`) and
 * refused on the next request on both instances; a key the removed tenant still gets afterwards
 * (its administrator's session lives on) is refused by the owner check although never revoked; a
 * tenant whose provider row is switched off is still present. Another tenant's keys never change.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { ApiKeyService } from '../../src/api-keys/api-key-service.js'
import { apiKeyStoreBeside } from '../../src/api-keys/open-api-key-store.js'
import { createApp } from '../../src/create-app.js'
import { directoryStoreOf } from '../../src/plugins/directory.js'
import { createEmbeddedStore } from '../../src/plugins/state.js'
import type { RuntimeProviderDefinition } from '../../src/providers/runtime-definitions.js'
import { buildTestApp, type TestApp } from '../../src/testing/app.js'
import { APP_ROOT, loadTestConfiguration, testKeyRing } from '../helpers/app.js'
import { freshUser } from '../helpers/api-keys.js'
import { PostgresServer } from '../helpers/postgres-server.js'
import { waitFor } from '../helpers/wait.js'

const server = new PostgresServer()
before(async () => { await server.start() })
after(async () => { await server.dispose() })

const customer = (scheme: string, tenant: string, enabled = true): RuntimeProviderDefinition => ({
  scheme,
  tenant,
  settings: { Type: 'OpenIdConnect', Enabled: enabled, Authority: `https://login.${scheme.toLowerCase()}.test`, ClientId: 'saas-app', ClientSecret: 'PLANTED-tenant-removed-secret' }
})

test('a tenant removed from the provider source: its keys are revoked and refused on the next request on every instance', async (context) => {
  const connectionString = await server.createDatabase('api_keys_tenants')
  const state = createEmbeddedStore(loadTestConfiguration().config.State.Embedded)
  context.after(async () => { await state.close() })
  let definitions: RuntimeProviderDefinition[] = [customer('Contoso', 't-contoso'), customer('Fabrikam', 't-fabrikam')]
  const settings = {
    Authentication: { Cookie: { AllowInsecureHttp: true }, Schemes: { Keys: { Type: 'ApiKey', Prefix: 'acme_', Scopes: { 'application.read': 'Read' }, Owners: ['User', 'Tenant'], TenantAdministratorPolicy: 'application.Role.Administrator' } } },
    Provisioning: { Store: { Provider: 'PostgreSql', PostgreSql: { ConnectionString: connectionString } } }
  } as never
  const keyRing = testKeyRing()
  const instances: TestApp[] = []
  for (let index = 0; index < 2; index++) {
    const instance = await buildTestApp({
      contentRoot: APP_ROOT,
      nodeEnv: 'Development',
      settings,
      keyRing,
      stateStore: state,
      providerSource: () => definitions,
      buildApp: async (options) => await createApp({ ...options, routes: async (app: FastifyInstance) => { app.get('/api/orders', async () => ({ ok: true })) } })
    })
    context.after(async () => { await instance.app.close() })
    instances.push(instance)
  }
  const [a, b] = instances as [TestApp, TestApp]

  // The tenants' administrators create their keys as an app's own key page would (the same database as A and B).
  const service = new ApiKeyService({
    scheme: a.app.apiKeys!.scheme().scheme,
    settings: a.app.apiKeys!.scheme().settings,
    store: apiKeyStoreBeside(directoryStoreOf(a.app)!)!,
    log: { info: () => {}, warn: () => {} },
    ownerStatus: () => 'valid',
    tenantAdministrator: { name: 'administrators', requirement: () => true }
  })
  const tenantKey = async (scheme: string, tenant: string): Promise<string> =>
    (await service.create(freshUser('admin-1', { scheme, tenant }), { name: 'integration', scopes: ['application.read'], owner: 'tenant' })).secret.reveal()
  const contoso = await tenantKey('Contoso', 't-contoso')
  const fabrikam = await tenantKey('Fabrikam', 't-fabrikam')
  const status = async (instance: TestApp, key: string): Promise<number> =>
    (await instance.app.inject({ method: 'GET', url: '/api/orders', headers: { authorization: `Bearer ${key}` } })).statusCode
  for (const instance of [a, b]) for (const key of [contoso, fabrikam]) assert.equal(await status(instance, key), 200)

  // Switched off, the provider's tenant is still present: its keys keep working.
  definitions = [customer('Contoso', 't-contoso', false), customer('Fabrikam', 't-fabrikam')]
  await a.app.authentication.reloadProviders()
  assert.equal(await status(a, contoso), 200)
  assert.equal(a.logs.events('api_key.revoked').length, 0)

  definitions = [customer('Fabrikam', 't-fabrikam')]
  await a.app.authentication.reloadProviders()
  const revoked = a.logs.events('api_key.revoked')
  assert.deepEqual(revoked.map((line) => [line.reason, line.ownerKind, line.tenant]), [['tenant_removed', 'tenant', 't-contoso']])
  assert.equal(await status(a, contoso), 401, 'refused on the instance that read the removal')
  assert.equal(await status(b, contoso), 401, 'refused on the other instance from the next request')
  for (const instance of [a, b]) assert.equal(await status(instance, fabrikam), 200)

  // B reads the source on A's announcement; its revocation finds nothing left to revoke.
  await waitFor(() => b.logs.events('external.runtime_providers.reloaded').some((line) => line.trigger === 'announcement' && (line.removed as string[]).includes('Contoso')), 'B reloads the providers')
  assert.equal(b.logs.events('api_key.revoked').length, 0)

  // A key the removed tenant's administrator creates afterwards is never revoked, and still refused on both.
  const late = await tenantKey('Contoso', 't-contoso')
  for (const instance of [a, b]) assert.equal(await status(instance, late), 401)
  assert.equal(a.logs.events('api_key.refused').at(-1)?.failure, 'owner_denied')
})
