/**
 * Entra ID's and Okta's documented provisioning requests work unchanged (issue 41, item 7): each
 * client's cycle as its documentation shows it (corpora/entra-id.ts, corpora/okta.ts), with the
 * non-standard forms accepted and logged once per connection, a no-op PATCH answered 200 with the
 * resource, and Okta's password accepted but never stored or echoed.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildScimApp, ENTERPRISE_SCHEMA } from '../helpers/scim.js'
import * as entra from './corpora/entra-id.js'
import * as okta from './corpora/okta.js'

const SCIM_JSON = 'application/scim+json; charset=utf-8'

describe(`Microsoft Entra ID (${entra.ENTRA_SOURCE})`, () => {
  test('query, create, change e-mail and family name, a missing filtered target, rename, disable with "False", enable with "True"', async (context) => {
    const t = await buildScimApp(context)
    const before = await t.scim('GET', 'Contoso', `/Users?filter=${encodeURIComponent(entra.entraUserNameFilter)}`)
    assert.equal(before.statusCode, 200)
    assert.equal(before.headers['content-type'], SCIM_JSON)
    assert.equal(before.json().totalResults, 0)

    const created = await t.scim('POST', 'Contoso', '/Users', { body: entra.entraCreateUser })
    assert.equal(created.statusCode, 201)
    const id = created.json().id as string
    assert.deepEqual(created.json().schemas, ['urn:ietf:params:scim:schemas:core:2.0:User'], 'no extension attribute was sent')
    assert.equal(created.json().meta.location, `http://localhost:80/scim/v2/Contoso/Users/${id}`)
    assert.equal((await t.scim('GET', 'Contoso', `/Users?filter=${encodeURIComponent(entra.entraUserNameFilter)}`)).json().Resources[0].id, id)

    const updated = await t.scim('PATCH', 'Contoso', `/Users/${id}`, { body: entra.entraUpdateMultiValued })
    assert.equal(updated.statusCode, 200)
    assert.deepEqual(updated.json().emails, [{ primary: true, type: 'work', value: 'updatedEmail@microsoft.com' }])
    assert.deepEqual(updated.json().name, { formatted: 'givenName familyName', familyName: 'updatedFamilyName', givenName: 'givenName' })

    const home = await t.scim('PATCH', 'Contoso', `/Users/${id}`, { body: entra.entraReplaceMissingTarget })
    assert.equal(home.statusCode, 200)
    assert.deepEqual(home.json().emails[1], { type: 'home', value: 'home@example.test' })

    assert.equal((await t.scim('PATCH', 'Contoso', `/Users/${id}`, { body: entra.entraUpdateSingleValued })).json().userName, '5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com')

    const disabled = await t.scim('PATCH', 'Contoso', `/Users/${id}`, { body: entra.entraDisableUserString })
    assert.equal(disabled.statusCode, 200)
    assert.equal(disabled.json().active, false)
    const since = await t.scim('GET', 'Contoso', `/Users?filter=${encodeURIComponent(entra.entraActiveSinceFilter)}`)
    assert.equal(since.json().totalResults, 0, 'the filter Entra sends is understood: the user is inactive now')
    assert.equal((await t.scim('PATCH', 'Contoso', `/Users/${id}`, { body: entra.entraEnableUserString })).json().active, true)
    assert.equal((await t.scim('GET', 'Contoso', `/Users?filter=${encodeURIComponent(entra.entraActiveSinceFilter)}`)).json().totalResults, 1)

    const dialects = t.logs.events('provisioning.dialect').map((line) => line.dialect).sort()
    assert.deepEqual(dialects, ['boolean_string', 'capitalised_op', 'replace_missing_target'], 'each form logged once for the connection')
  })

  test('a group with members added and removed as Entra sends them; excludedAttributes=members leaves them out', async (context) => {
    const t = await buildScimApp(context)
    const user = (await t.scim('POST', 'Contoso', '/Users', { body: entra.entraCreateUser })).json().id as string
    const group = await t.scim('POST', 'Contoso', '/Groups', { body: entra.entraCreateGroup })
    assert.equal(group.statusCode, 201)
    const id = group.json().id as string
    assert.equal((await t.scim('PATCH', 'Contoso', `/Groups/${id}`, { body: entra.entraAddMember(user) })).statusCode, 200)
    assert.deepEqual((await t.scim('GET', 'Contoso', `/Groups/${id}`)).json().members.map((member: { value: string }) => member.value), [user])
    const excluded = await t.scim('GET', 'Contoso', `/Groups/${id}?excludedAttributes=members`)
    assert.equal(excluded.json().members, undefined)
    assert.equal(excluded.json().displayName, 'Orders Admins')
    assert.equal((await t.scim('PATCH', 'Contoso', `/Groups/${id}`, { body: entra.entraRemoveMember(user) })).statusCode, 200)
    assert.deepEqual((await t.scim('GET', 'Contoso', `/Groups/${id}`)).json().members, [])
    assert.equal((await t.scim('PATCH', 'Contoso', `/Groups/${id}`, { body: entra.entraRenameGroup })).json().displayName, '1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName')
    assert.equal((await t.scim('GET', 'Contoso', `/Groups?filter=${encodeURIComponent('displayName eq "1879DB59-3bdf-4490-ad68-ab880a269474updatedDisplayName"')}`)).json().totalResults, 1)
  })
})

describe(`Okta (${okta.OKTA_SOURCE})`, () => {
  test('userName query, create with a password (never stored or echoed), full PUT, path-less replace of active', async (context) => {
    const t = await buildScimApp(context)
    assert.equal((await t.scim('GET', 'Fabrikam', `/Users${okta.oktaUserNameQuery}`)).json().totalResults, 0)
    const created = await t.scim('POST', 'Fabrikam', '/Users', { body: okta.oktaCreateUser })
    assert.equal(created.statusCode, 201)
    assert.doesNotMatch(created.body, /password|1mz050nq/i)
    const id = created.json().id as string
    const stored = await t.app.directory!.getUser('Fabrikam', id)
    assert.doesNotMatch(JSON.stringify(stored), /password|1mz050nq/i)
    assert.equal(stored?.attributes.groups, undefined, 'an attribute the schema does not know is dropped')

    const found = await t.scim('GET', 'Fabrikam', `/Users${okta.oktaUserNameQuery}`)
    assert.equal(found.json().Resources[0].id, id)

    const replaced = await t.scim('PUT', 'Fabrikam', `/Users/${id}`, { body: okta.oktaReplaceUser(id) })
    assert.equal(replaced.statusCode, 200)
    assert.deepEqual(replaced.json().name, { givenName: 'Another', middleName: 'Bob', familyName: 'User' })
    assert.doesNotMatch(replaced.body, /1mz050nq/)

    const deactivated = await t.scim('PATCH', 'Fabrikam', `/Users/${id}`, { body: okta.oktaDeactivateUser })
    assert.equal(deactivated.statusCode, 200)
    assert.equal(deactivated.json().active, false)
    assert.equal(t.logs.events('provisioning.dialect').length, 0, 'Okta speaks the standard')
  })

  test('a no-op PATCH answers 200 with the resource and writes nothing', async (context) => {
    const t = await buildScimApp(context)
    const created = (await t.scim('POST', 'Fabrikam', '/Users', { body: okta.oktaCreateUser })).json()
    const again = await t.scim('PATCH', 'Fabrikam', `/Users/${created.id as string}`, { body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', value: { active: true } }] } })
    assert.equal(again.statusCode, 200)
    assert.deepEqual(again.json(), created)
  })

  test('groups: create, rename path-less, add and remove a member by filter path', async (context) => {
    const t = await buildScimApp(context)
    const user = (await t.scim('POST', 'Fabrikam', '/Users', { body: okta.oktaCreateUser })).json().id as string
    const id = (await t.scim('POST', 'Fabrikam', '/Groups', { body: okta.oktaCreateGroup })).json().id as string
    assert.equal((await t.scim('PATCH', 'Fabrikam', `/Groups/${id}`, { body: okta.oktaRenameGroup(id) })).json().displayName, 'Test SCIMv2 renamed')
    assert.deepEqual((await t.scim('PATCH', 'Fabrikam', `/Groups/${id}`, { body: okta.oktaAddMember(user) })).json().members.map((member: { value: string }) => member.value), [user])
    assert.deepEqual((await t.scim('PATCH', 'Fabrikam', `/Groups/${id}`, { body: okta.oktaRemoveMember(user) })).json().members, [])
  })
})

test('the enterprise extension: stored under its URN, listed in schemas, filtered and projected', async (context) => {
  const t = await buildScimApp(context)
  const created = await t.scim('POST', 'Contoso', '/Users', { body: { ...entra.entraCreateUser, [ENTERPRISE_SCHEMA]: { department: 'Sales', manager: { value: 'm-1' } } } })
  assert.deepEqual(created.json().schemas, ['urn:ietf:params:scim:schemas:core:2.0:User', ENTERPRISE_SCHEMA])
  const filter = encodeURIComponent(`${ENTERPRISE_SCHEMA}:department eq "sales"`)
  const listed = await t.scim('GET', 'Contoso', `/Users?filter=${filter}&attributes=userName,${ENTERPRISE_SCHEMA}:department`)
  assert.deepEqual(listed.json().Resources, [{ schemas: created.json().schemas, id: created.json().id, userName: entra.entraCreateUser.userName, [ENTERPRISE_SCHEMA]: { department: 'Sales' } }])
  const patched = await t.scim('PATCH', 'Contoso', `/Users/${created.json().id as string}`, { body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: `${ENTERPRISE_SCHEMA}:department`, value: 'Support' }] } })
  assert.deepEqual(patched.json()[ENTERPRISE_SCHEMA], { department: 'Support', manager: { value: 'm-1' } })
})
