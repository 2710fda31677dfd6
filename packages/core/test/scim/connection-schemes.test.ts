/**
 * What can be checked of a configured connection's sign-ins (issue 41, item 1), beside the startup
 * rule on `Schemes` (test/config/rules.test.ts): the tenants the configured providers issue (an
 * `AllowedTenants` entry's mapping), and the warning naming the `Tenant` key of a connection no
 * sign-in can belong to, logged at startup by an app without a provider source.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { connectionsOf } from '../../src/scim/connections.js'
import { issuedTenantsOf, unmatchedConnections } from '../../src/scim/connection-schemes.js'
import { loadTestConfiguration } from '../helpers/app.js'
import { buildScimApp } from '../helpers/scim.js'

const TID = '72f988bf-86f1-41af-91ab-2d7cd011db47'
const OTHER_TID = '0b6a0f2e-3c1d-4b8e-9d7a-5e4f3c2b1a09'

test('the tenants configured providers issue are their AllowedTenants mappings; a connection with neither such a tenant nor Schemes is unmatched', () => {
  const { config, errors } = loadTestConfiguration({
    settings: {
      Hosting: { PublicOrigin: 'https://app.example.test' },
      Authentication: { Schemes: { Entra: { Type: 'OpenIdConnect', Authority: 'https://login.microsoftonline.com/organizations/v2.0', ClientId: 'app', ClientSecret: 'entra-client-secret', AllowedTenants: [`${TID}=contoso`, OTHER_TID] } } }
    }
  })
  assert.deepEqual(errors, [])
  const issued = issuedTenantsOf(config, 'ProjectTemplate')
  assert.deepEqual([...issued], ['contoso'])
  const connections = connectionsOf({
    Contoso: { Tenant: 'contoso', Schemes: [], ExternalIdClaim: '', RequireProvisionedUsers: false, LinkByEmail: false, VerifiedDomains: [], EmailVerifiedClaim: '', GroupRoles: [] },
    Fabrikam: { Tenant: 'fabrikam', Schemes: [], ExternalIdClaim: '', RequireProvisionedUsers: false, LinkByEmail: false, VerifiedDomains: [], EmailVerifiedClaim: '', GroupRoles: [] },
    Northwind: { Tenant: 'northwind', Schemes: ['Entra'], ExternalIdClaim: '', RequireProvisionedUsers: false, LinkByEmail: false, VerifiedDomains: [], EmailVerifiedClaim: '', GroupRoles: [] }
  })
  assert.deepEqual(unmatchedConnections(connections.values(), issued).map((connection) => connection.name), ['Fabrikam'])
})

test('an app without a provider source warns at startup of each connection no sign-in can belong to, naming its Tenant key', async (t) => {
  const app = await buildScimApp(t)
  assert.deepEqual(app.logs.events('provisioning.connection.tenant_unmatched').map((line) => [line.level, line.connection, line.key]), [
    [40, 'Contoso', 'ProjectTemplate:Provisioning:Connections:Contoso:Tenant'],
    [40, 'Fabrikam', 'ProjectTemplate:Provisioning:Connections:Fabrikam:Tenant']
  ])
})
