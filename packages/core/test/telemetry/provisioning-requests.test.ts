/**
 * `app.provisioning.requests` (issue 41, item 8): every SCIM request counts once, by connection,
 * resource, operation and status class, whatever the log level; a name that is no connection
 * counts as `unknown`, so the connection label stays bounded by the connections in use.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildScimApp, userBody } from '../helpers/scim.js'
import { TELEMETRY_SETTINGS } from './scripted-flow.js'

/** Every `app_provisioning_requests_total` series of the exposition text: its labels (without the scope's) and value. */
function series (body: string): Record<string, number> {
  const found: Record<string, number> = {}
  for (const line of body.split('\n')) {
    if (!line.startsWith('app_provisioning_requests_total{')) continue
    const labels = line.slice(line.indexOf('{') + 1, line.indexOf(',otel_scope_name='))
    found[labels] = Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return found
}

test('each SCIM request counts by connection, resource, operation and status class; an unknown name is counted as unknown', async (t) => {
  const app = await buildScimApp(t, { settings: { ...TELEMETRY_SETTINGS, Logging: { Level: 'warn' } } })
  assert.equal((await app.scim('POST', 'Contoso', '/Users', { body: userBody('ada@contoso.test') })).statusCode, 201)
  assert.equal((await app.scim('GET', 'Contoso', '/Users')).statusCode, 200)
  assert.equal((await app.scim('GET', 'Contoso', '/Users')).statusCode, 200)
  assert.equal((await app.scim('GET', 'Contoso', '/Groups/missing')).statusCode, 404)
  assert.equal((await app.scim('GET', 'Fabrikam', '/ServiceProviderConfig', { authorization: `Bearer ${app.tokens.Contoso}` })).statusCode, 401)
  assert.equal((await app.scim('DELETE', 'Contoso', '/Users/missing', { authorization: null })).statusCode, 401)
  for (const name of ['Nobody', 'Somebody-else']) {
    assert.equal((await app.app.inject({ method: 'PATCH', url: `/scim/v2/${name}/Users/x`, headers: { authorization: `Bearer ${app.tokens.Contoso}` } })).statusCode, 401)
  }

  const metrics = await app.app.inject({ url: '/metrics' })
  assert.equal(metrics.statusCode, 200)
  assert.deepEqual(series(metrics.body), {
    'connection="Contoso",resource="Users",operation="create",status_class="2xx"': 1,
    'connection="Contoso",resource="Users",operation="list",status_class="2xx"': 2,
    'connection="Contoso",resource="Groups",operation="read",status_class="4xx"': 1,
    'connection="Fabrikam",resource="ServiceProviderConfig",operation="read",status_class="4xx"': 1,
    'connection="Contoso",resource="Users",operation="delete",status_class="4xx"': 1,
    'connection="unknown",resource="Users",operation="patch",status_class="4xx"': 2
  })
})
