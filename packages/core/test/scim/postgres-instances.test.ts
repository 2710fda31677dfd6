/**
 * Two instances on one PostgreSQL directory store and one shared state store (issue 41, items 2
 * and 4, end to end): a token issued on one authenticates on the other, its revocation refuses it
 * on the other from the next request, a user provisioned through one is deactivated through the
 * other, and the connection isolation holds in the database as in the embedded store.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { createEmbeddedStore } from '../../src/plugins/state.js'
import { build, loadTestConfiguration } from '../helpers/app.js'
import { PostgresServer } from '../helpers/postgres-server.js'
import { PATCH_SCHEMA, PROVISIONING, userBody } from '../helpers/scim.js'

const server = new PostgresServer()
before(async () => { await server.start() })
after(async () => { await server.dispose() })

test('two instances: tokens, revocation, provisioning and deactivation are seen by both at once', async (context) => {
  const connectionString = await server.createDatabase('scim_instances')
  const state = createEmbeddedStore(loadTestConfiguration().config.State.Embedded)
  context.after(async () => { await state.close() })
  const settings = { Provisioning: { ...PROVISIONING.Provisioning as object, Store: { Provider: 'PostgreSql', PostgreSql: { ConnectionString: connectionString } } } }
  const a = await build(context, { testSignIn: false, settings, stateStore: state })
  const b = await build(context, { testSignIn: false, settings, stateStore: state })
  const issued = await a.app.provisioning!.createToken('Contoso')
  const request = async (app: typeof a.app, method: string, path: string, body?: unknown, bearer = issued.token): Promise<{ status: number, json: Record<string, any> }> => {
    const answer = await app.inject({ method: method as 'GET', url: `/scim/v2/Contoso${path}`, headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }) }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) })
    return { status: answer.statusCode, json: answer.body === '' ? {} : answer.json() }
  }

  const created = await request(b.app, 'POST', '/Users', userBody('ada@contoso.test', { externalId: 'ada' }))
  assert.equal(created.status, 201, 'a token issued on A authenticates on B')
  const id = created.json.id as string
  const filtered = await request(a.app, 'GET', `/Users?filter=${encodeURIComponent('userName eq "ADA@contoso.test"')}`)
  assert.equal(filtered.json.Resources[0].id, id, 'provisioned through B, listed through A')
  const deactivated = await request(a.app, 'PATCH', `/Users/${id}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', value: { active: false } }] })
  assert.equal(deactivated.json.active, false)
  assert.equal((await b.app.directory!.getUser('Contoso', id))?.active, false)

  const fabrikam = (await b.app.provisioning!.createToken('Fabrikam')).token
  assert.equal((await request(a.app, 'GET', `/Users/${id}`, undefined, fabrikam)).status, 401, 'Fabrikam\'s token is not Contoso\'s')
  const theirs = await a.app.inject({ method: 'GET', url: `/scim/v2/Fabrikam/Users/${id}`, headers: { authorization: `Bearer ${fabrikam}` } })
  assert.equal(theirs.statusCode, 404, 'Contoso\'s user is missing for Fabrikam')

  const [token] = await b.app.provisioning!.listTokens('Contoso')
  assert.equal(await b.app.provisioning!.revokeToken('Contoso', token!.id), true)
  assert.equal((await request(a.app, 'GET', '/Users')).status, 401, 'revoked on B: refused on A from the next request')
})
