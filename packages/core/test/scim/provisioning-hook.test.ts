/**
 * The provisioning hook (issue 41, item 8; src/scim/provisioning-hook.ts, provisioning-grants.ts)
 * with Entra ID's and Okta's documented requests: `app.provisioning.onProvision(hook)` is asked
 * before a create, an activation and a change that gives people roles through a `GroupRoles`
 * group, and its refusal answers the SCIM error it chose and changes nothing; it is never asked
 * about a deactivation, a deletion or a membership removal, which go through even while the hook
 * refuses or throws; a hook that throws, answers nonsense or does not answer in time answers 503
 * with `Retry-After`, changes nothing, and is logged by its error's name only; a user or group
 * changed between the hook's answer (or the read that found nothing to ask) and the transaction
 * is not changed.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { ProvisioningGrant, ProvisioningHook, ProvisioningHookResult } from '../../src/index.js'
import { MemoryDirectoryStore } from '../../src/directory/memory-directory-store.js'
import type { DirectoryStore } from '../../src/directory/directory-store.js'
import { connectionsOf } from '../../src/scim/connections.js'
import type { ScimContext } from '../../src/scim/endpoint-context.js'
import { updateUserGranting } from '../../src/scim/provisioning-grants.js'
import { askProvisioningHooks } from '../../src/scim/provisioning-hook.js'
import { loadTestConfiguration } from '../helpers/app.js'
import { buildScimApp, GROUP_SCHEMA, PATCH_SCHEMA, userBody, type ScimTestApp } from '../helpers/scim.js'
import * as entra from './corpora/entra-id.js'
import * as okta from './corpora/okta.js'

const SCIM_JSON = 'application/scim+json; charset=utf-8'
const PLANTED = 'Planted-hook-secret-41'

/** A test app whose hook records every grant and answers `decide`'s answer. */
async function withHook (context: Parameters<typeof buildScimApp>[0], decide: (grant: ProvisioningGrant) => ProvisioningHookResult | Promise<ProvisioningHookResult>): Promise<ScimTestApp & { grants: ProvisioningGrant[] }> {
  const t = await buildScimApp(context)
  const grants: ProvisioningGrant[] = []
  t.app.provisioning!.onProvision(async (grant) => {
    grants.push(grant)
    return await decide(grant)
  })
  return Object.assign(t, { grants })
}

const refuseAll = (): ProvisioningHookResult => ({ allow: false, status: 403, detail: 'No seats left on your plan.' })
const count = async (t: ScimTestApp, resource: 'Users' | 'Groups'): Promise<number> => (await t.scim('GET', 'Contoso', `/${resource}`)).json().totalResults as number
const membersOf = async (t: ScimTestApp, id: string): Promise<string[]> => ((await t.scim('GET', 'Contoso', `/Groups/${id}`)).json().members as Array<{ value: string }>).map((member) => member.value)

describe('users', () => {
  test('a refused create (Okta\'s, with its password) answers the hook\'s 403 and creates nothing; the hook saw the user, never the password', async (context) => {
    const t = await withHook(context, refuseAll)
    const refused = await t.scim('POST', 'Contoso', '/Users', { body: okta.oktaCreateUser })
    assert.equal(refused.statusCode, 403)
    assert.equal(refused.headers['content-type'], SCIM_JSON)
    assert.deepEqual(refused.json(), { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '403', detail: 'No seats left on your plan.' })
    assert.equal(await count(t, 'Users'), 0)
    assert.equal(t.grants.length, 1)
    const grant = t.grants[0]!
    assert.equal(grant.type, 'user.create')
    assert.equal(grant.connection, 'Contoso')
    assert.equal(grant.tenant, 'contoso')
    assert.equal(grant.type === 'user.create' ? grant.user.userName : undefined, 'test.user@okta.local')
    assert.doesNotMatch(JSON.stringify(grant), /password|1mz050nq/i)
    const logged = t.logs.events('provisioning.hook.refused')
    assert.deepEqual(logged.map((line) => [line.connection, line.grant, line.status]), [['Contoso', 'user.create', 403]])
  })

  test('the refusal statuses: 400 invalidValue, 409 uniqueness; a detail without control characters, cut to 200', async (context) => {
    const answers: ProvisioningHookResult[] = [{ allow: false, status: 400, detail: 'bad\u0000\nline' }, { allow: false, status: 409, detail: 'x'.repeat(500) }, { allow: false }]
    const t = await withHook(context, () => answers.shift()!)
    const bad = await t.scim('POST', 'Contoso', '/Users', { body: userBody('a@contoso.test') })
    assert.deepEqual([bad.statusCode, bad.json().scimType, bad.json().detail], [400, 'invalidValue', 'bad  line'])
    const conflict = await t.scim('POST', 'Contoso', '/Users', { body: userBody('a@contoso.test') })
    assert.deepEqual([conflict.statusCode, conflict.json().scimType, (conflict.json().detail as string).length], [409, 'uniqueness', 200])
    const plain = await t.scim('POST', 'Contoso', '/Users', { body: userBody('a@contoso.test') })
    assert.deepEqual([plain.statusCode, plain.json().scimType, plain.json().detail], [403, undefined, 'The application refused this change.'])
    assert.equal(await count(t, 'Users'), 0)
  })

  test('Entra\'s deactivation goes through without asking; its reactivation is asked and, refused, leaves the user inactive; Okta\'s full PUT too', async (context) => {
    let seats = 1
    const t = await withHook(context, () => seats-- > 0 ? { allow: true } : refuseAll())
    const created = await t.scim('POST', 'Contoso', '/Users', { body: entra.entraCreateUser })
    assert.equal(created.statusCode, 201)
    const id = created.json().id as string
    assert.equal((await t.scim('PATCH', 'Contoso', `/Users/${id}`, { body: entra.entraDisableUserString })).json().active, false)
    assert.deepEqual(t.grants.map((grant) => grant.type), ['user.create'], 'the deactivation was not asked about')

    const refused = await t.scim('PATCH', 'Contoso', `/Users/${id}`, { body: entra.entraEnableUserString })
    assert.equal(refused.statusCode, 403)
    const replaced = await t.scim('PUT', 'Contoso', `/Users/${id}`, { body: { ...okta.oktaReplaceUser(id), userName: entra.entraCreateUser.userName } })
    assert.equal(replaced.statusCode, 403)
    const stored = await t.app.directory!.getUser('Contoso', id)
    assert.equal(stored?.active, false)
    assert.equal(stored?.version, 2, 'neither the PATCH nor the PUT wrote anything')
    assert.deepEqual(t.grants.map((grant) => grant.type), ['user.create', 'user.activate', 'user.activate'])
    const activation = t.grants[1]
    assert.equal(activation?.type === 'user.activate' ? activation.user.id : undefined, id)

    // A change of an active user's attributes grants nothing: not asked.
    seats = 1
    assert.equal((await t.scim('PATCH', 'Contoso', `/Users/${id}`, { body: entra.entraEnableUserString })).statusCode, 200)
    assert.equal((await t.scim('PATCH', 'Contoso', `/Users/${id}`, { body: entra.entraUpdateMultiValued })).statusCode, 200)
    assert.equal(t.grants.length, 4)
  })
})

test('a user deactivated between the read and the transaction is not reactivated without asking: 503, still inactive', async () => {
  const memory = new MemoryDirectoryStore()
  const user = await memory.createUser('Contoso', { userName: 'grace', active: true, attributes: {} })
  // The directory deactivates grace right after this request read her as active.
  const store = new Proxy(memory, {
    get (target, property) {
      if (property === 'getUser') {
        return async (connection: string, id: string) => {
          const seen = await target.getUser(connection, id)
          await target.updateUser(connection, id, (current) => ({ userName: current.userName, active: false, attributes: current.attributes }))
          return seen
        }
      }
      const value = Reflect.get(target, property, target) as unknown
      return typeof value === 'function' ? value.bind(target) : value
    }
  }) as DirectoryStore
  const connection = connectionsOf(loadTestConfiguration({ settings: { Provisioning: { Connections: { Contoso: { Tenant: 'contoso' } } } } }).config.Provisioning.Connections).get('Contoso')!
  const grants: ProvisioningGrant[] = []
  const context = { store, connection, base: '', notes: new Set(), checkGrant: async (grant: ProvisioningGrant) => { grants.push(grant) } } as unknown as ScimContext
  await assert.rejects(updateUserGranting(context, user.id, (current) => ({ userName: current.userName, active: true, attributes: { title: 'Admiral' } })), { name: 'ScimError', status: 503 })
  assert.deepEqual(grants, [], 'read as active: nothing to ask')
  const stored = await memory.getUser('Contoso', user.id)
  assert.deepEqual([stored?.active, stored?.attributes], [false, {}])
})

describe('groups', () => {
  test('members added to a group that maps to roles are asked about; refused, the membership is unchanged; removal and unmapped groups are not asked', async (context) => {
    const t = await withHook(context, (grant) => grant.type === 'group.roles' ? refuseAll() : { allow: true })
    const grace = (await t.scim('POST', 'Contoso', '/Users', { body: userBody('grace@contoso.test') })).json().id as string
    const alan = (await t.scim('POST', 'Contoso', '/Users', { body: userBody('alan@contoso.test') })).json().id as string

    // Created with a member: refused, nothing created.
    const withMember = await t.scim('POST', 'Contoso', '/Groups', { body: { ...entra.entraCreateGroup, members: [{ value: grace }] } })
    assert.equal(withMember.statusCode, 403)
    assert.equal(await count(t, 'Groups'), 0)
    // Created empty: grants nothing.
    const group = (await t.scim('POST', 'Contoso', '/Groups', { body: entra.entraCreateGroup })).json().id as string
    const refused = await t.scim('PATCH', 'Contoso', `/Groups/${group}`, { body: entra.entraAddMember(grace) })
    assert.equal(refused.statusCode, 403)
    assert.deepEqual(await membersOf(t, group), [])
    const roleGrants = t.grants.filter((grant) => grant.type === 'group.roles')
    assert.equal(roleGrants.length, 2)
    const last = roleGrants[1]!
    assert.ok(last.type === 'group.roles')
    assert.deepEqual([last.group.id, last.group.displayName, last.roles, last.users.map((user) => user.id)], [group, 'Orders Admins', ['Orders.Admin'], [grace]])

    // An unmapped group takes members without asking.
    const other = (await t.scim('POST', 'Contoso', '/Groups', { body: { schemas: [GROUP_SCHEMA], displayName: 'Bowling', members: [{ value: grace }, { value: alan }] } })).json().id as string
    assert.deepEqual(await membersOf(t, other), [grace, alan].sort())
    assert.equal(t.grants.filter((grant) => grant.type === 'group.roles').length, 2)

    // Renamed so that it maps to a role: its members would gain it; asked, refused, unchanged.
    const renamed = await t.scim('PATCH', 'Contoso', `/Groups/${other}`, { body: { schemas: [PATCH_SCHEMA], Operations: [{ op: 'Replace', path: 'displayName', value: 'ext-readers' }] } })
    assert.equal(renamed.statusCode, 403)
    assert.equal((await t.app.directory!.getGroup('Contoso', other))?.displayName, 'Bowling')
    const rename = t.grants.at(-1)!
    assert.ok(rename.type === 'group.roles')
    assert.deepEqual([rename.roles, rename.users.map((user) => user.id).sort()], [['Reader'], [grace, alan].sort()])
  })

  test('a hook that refuses everything never blocks a membership removal, a group deletion, a deactivation or a user deletion', async (context) => {
    let refuse = false
    const t = await withHook(context, () => refuse ? refuseAll() : { allow: true })
    const grace = (await t.scim('POST', 'Contoso', '/Users', { body: userBody('grace@contoso.test') })).json().id as string
    const alan = (await t.scim('POST', 'Contoso', '/Users', { body: userBody('alan@contoso.test') })).json().id as string
    const group = (await t.scim('POST', 'Contoso', '/Groups', { body: { ...entra.entraCreateGroup, members: [{ value: grace }, { value: alan }] } })).json().id as string
    refuse = true
    const asked = t.grants.length
    assert.equal((await t.scim('PATCH', 'Contoso', `/Groups/${group}`, { body: entra.entraRemoveMember(grace) })).statusCode, 200)
    assert.deepEqual(await membersOf(t, group), [alan])
    assert.equal((await t.scim('PUT', 'Contoso', `/Groups/${group}`, { body: { ...entra.entraCreateGroup, members: [] } })).statusCode, 200, 'a PUT that only removes')
    assert.equal((await t.scim('DELETE', 'Contoso', `/Groups/${group}`)).statusCode, 204)
    assert.equal((await t.scim('PATCH', 'Contoso', `/Users/${grace}`, { body: okta.oktaDeactivateUser })).statusCode, 200)
    assert.equal((await t.scim('DELETE', 'Contoso', `/Users/${alan}`)).statusCode, 204)
    assert.equal(t.grants.length, asked, 'none of these was asked about')
  })

  test('a group changed while the hook was deciding is not changed: 503 with Retry-After, the other change stands', async (context) => {
    const t = await buildScimApp(context)
    let alan = ''
    t.app.provisioning!.onProvision(async (grant) => {
      if (grant.type === 'group.roles' && grant.group.id !== undefined) {
        // Meanwhile the directory removes alan (a removal: never asked about).
        assert.equal((await t.scim('PATCH', 'Contoso', `/Groups/${grant.group.id}`, { body: entra.entraRemoveMember(alan) })).statusCode, 200)
      }
      return { allow: true }
    })
    const grace = (await t.scim('POST', 'Contoso', '/Users', { body: userBody('grace@contoso.test') })).json().id as string
    alan = (await t.scim('POST', 'Contoso', '/Users', { body: userBody('alan@contoso.test') })).json().id as string
    const group = (await t.scim('POST', 'Contoso', '/Groups', { body: { ...entra.entraCreateGroup, members: [{ value: alan }] } })).json().id as string
    const raced = await t.scim('PATCH', 'Contoso', `/Groups/${group}`, { body: entra.entraAddMember(grace) })
    assert.equal(raced.statusCode, 503)
    assert.equal(raced.headers['retry-after'], '1')
    assert.deepEqual(await membersOf(t, group), [], 'the removal stands; grace was not added')
  })
})

describe('a hook that fails', () => {
  const failures: Array<[string, ProvisioningHook, string]> = [
    ['throws', async () => { throw new Error(`database password ${PLANTED}`) }, 'failed'],
    ['answers no decision', async () => ({ allow: 'yes' }) as unknown as ProvisioningHookResult, 'invalid'],
    ['refuses with a status outside the safe set', async () => ({ allow: false, status: 500 }) as unknown as ProvisioningHookResult, 'invalid']
  ]
  for (const [name, hook, failure] of failures) {
    test(`${name}: 503 with Retry-After and a generic detail, nothing created, logged without its message; deactivation still goes through`, async (context) => {
      const t = await buildScimApp(context)
      const user = (await t.scim('POST', 'Contoso', '/Users', { body: userBody('grace@contoso.test') })).json().id as string
      t.app.provisioning!.onProvision(hook)
      const failed = await t.scim('POST', 'Contoso', '/Users', { body: entra.entraCreateUser })
      assert.equal(failed.statusCode, 503)
      assert.equal(failed.headers['retry-after'], '5')
      assert.deepEqual(failed.json(), { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '503', detail: 'The application could not decide on this change; nothing was changed. Try again later.' })
      assert.equal(await count(t, 'Users'), 1)
      const logged = t.logs.events('provisioning.hook.failed')
      assert.equal(logged.length, 1)
      assert.equal(logged[0]?.failure, failure)
      assert.equal(logged[0]?.grant, 'user.create')
      if (failure === 'failed') assert.equal(logged[0]?.errorName, 'Error')
      assert.ok(!t.logs.lines.join('\n').includes(PLANTED), 'the hook\'s message is not logged')
      assert.ok(!failed.body.includes(PLANTED))
      assert.equal((await t.scim('PATCH', 'Contoso', `/Users/${user}`, { body: entra.entraDisableUser })).json().active, false)
    })
  }

  test('does not answer in time: the request fails (its signal aborts), nothing is asked after it', async () => {
    let aborted = false
    let later = false
    const slow: ProvisioningHook = async (_grant, { signal }) => await new Promise((resolve) => { signal.addEventListener('abort', () => { aborted = true; resolve({ allow: true }) }) })
    const lines: Array<Record<string, unknown>> = []
    const log = { info: (fields: Record<string, unknown>) => { lines.push(fields) }, error: (fields: Record<string, unknown>) => { lines.push(fields) } }
    const grant: ProvisioningGrant = { type: 'user.create', connection: 'Contoso', tenant: 'contoso', user: { userName: 'grace', active: true, attributes: {} } }
    await assert.rejects(askProvisioningHooks([slow, () => { later = true; return { allow: true } }], grant, log, 20), { name: 'ScimError', status: 503 })
    assert.equal(aborted, true)
    assert.equal(later, false)
    assert.deepEqual(lines, [{ event: 'provisioning.hook.failed', connection: 'Contoso', grant: 'user.create', failure: 'timeout', detail: 'no answer within the time limit' }])
  })
})

test('onProvision takes functions only', async (context) => {
  const t = await buildScimApp(context)
  assert.throws(() => { t.app.provisioning!.onProvision('allow' as unknown as ProvisioningHook) }, { name: 'TypeError', message: 'app.provisioning.onProvision: the hook must be a function.' })
})
