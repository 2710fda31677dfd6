/**
 * Bad input is refused with a SCIM error and changes nothing (issue 41, "Bad input"): the hostile
 * corpus (corpora/hostile-requests.ts) as data, duplicate userNames (409 without revealing
 * another tenant's), group members of another connection, and another connection's ids, which
 * answer exactly as missing ones.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { buildScimApp, GROUP_SCHEMA, PATCH_SCHEMA, userBody } from '../helpers/scim.js'
import { HOSTILE_REQUESTS } from './corpora/hostile-requests.js'

test('each hostile request gets its SCIM error, as application/scim+json, and the user stays as it was', async (context) => {
  const t = await buildScimApp(context)
  const user = (await t.scim('POST', 'Contoso', '/Users', { body: userBody('target@contoso.test', { title: 'Original', emails: [{ value: 'target@contoso.test', type: 'work' }] }) })).json()
  for (const request of HOSTILE_REQUESTS) {
    const answer = await t.scim(request.method, 'Contoso', request.path.replace('{user}', user.id as string), {
      ...(request.payload === undefined ? {} : { payload: request.payload }),
      ...(request.contentType === undefined ? {} : { contentType: request.contentType })
    })
    assert.equal(answer.statusCode, request.status, `${request.name}: ${answer.body}`)
    assert.equal(answer.headers['content-type'], 'application/scim+json; charset=utf-8', request.name)
    const body = answer.json()
    assert.deepEqual(body.schemas, ['urn:ietf:params:scim:api:messages:2.0:Error'], request.name)
    assert.equal(body.status, String(request.status), request.name)
    assert.equal(body.scimType, request.scimType, request.name)
  }
  assert.deepEqual((await t.scim('GET', 'Contoso', `/Users/${user.id as string}`)).json(), user, 'nothing changed')
  assert.equal((await t.scim('GET', 'Contoso', '/Users')).json().totalResults, 1, 'nothing created')
  assert.equal((await t.scim('POST', 'Contoso', '/Schemas', { body: {} })).headers.allow, 'GET')
})

test('a userName taken in the connection (any case) is a 409 uniqueness; the same name in another tenant is not revealed', async (context) => {
  const t = await buildScimApp(context)
  assert.equal((await t.scim('POST', 'Contoso', '/Users', { body: userBody('ada@example.test') })).statusCode, 201)
  const duplicate = await t.scim('POST', 'Contoso', '/Users', { body: userBody('ADA@example.test') })
  assert.equal(duplicate.statusCode, 409)
  assert.equal(duplicate.json().scimType, 'uniqueness')
  assert.doesNotMatch(duplicate.body, /ada@example/i)
  assert.equal((await t.scim('POST', 'Fabrikam', '/Users', { body: userBody('ada@example.test') })).statusCode, 201, 'another tenant may use the name, and learns nothing')
})

test('another connection\'s ids answer exactly as missing ones, and its users cannot be added to a group', async (context) => {
  const t = await buildScimApp(context)
  const theirs = (await t.scim('POST', 'Fabrikam', '/Users', { body: userBody('bob@fabrikam.test') })).json().id as string
  const theirGroup = (await t.scim('POST', 'Fabrikam', '/Groups', { body: { schemas: [GROUP_SCHEMA], displayName: 'Staff' } })).json().id as string
  const missing = await t.scim('GET', 'Contoso', '/Users/00000000-0000-4000-8000-000000000000')
  for (const [method, path, body] of [
    ['GET', `/Users/${theirs}`, undefined],
    ['PUT', `/Users/${theirs}`, userBody('renamed@contoso.test')],
    ['PATCH', `/Users/${theirs}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', path: 'active', value: false }] }],
    ['DELETE', `/Users/${theirs}`, undefined],
    ['GET', `/Groups/${theirGroup}`, undefined],
    ['PATCH', `/Groups/${theirGroup}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', path: 'displayName', value: 'Mine' }] }],
    ['DELETE', `/Groups/${theirGroup}`, undefined]
  ] as const) {
    const answer = await t.scim(method, 'Contoso', path, body === undefined ? {} : { body })
    assert.equal(answer.statusCode, 404, `${method} ${path}`)
    assert.equal(answer.json().detail, path.startsWith('/Users') ? missing.json().detail : 'Group not found.')
  }
  const group = await t.scim('POST', 'Contoso', '/Groups', { body: { schemas: [GROUP_SCHEMA], displayName: 'Admins', members: [{ value: theirs }] } })
  assert.equal(group.statusCode, 400)
  assert.equal(group.json().scimType, 'invalidValue')
  const ours = (await t.scim('POST', 'Contoso', '/Groups', { body: { schemas: [GROUP_SCHEMA], displayName: 'Admins' } })).json().id as string
  const add = await t.scim('PATCH', 'Contoso', `/Groups/${ours}`, { body: { schemas: [PATCH_SCHEMA], Operations: [{ op: 'add', path: 'members', value: [{ value: theirs }] }] } })
  assert.equal(add.statusCode, 400)
  assert.deepEqual(await t.app.directory!.groupMembers('Contoso', ours), [])
  const bob = await t.app.directory!.getUser('Fabrikam', theirs)
  assert.equal(bob?.userName, 'bob@fabrikam.test')
  assert.equal(bob?.active, true)
})

test('count is capped at 200 and startIndex below 1 counts as 1', async (context) => {
  const t = await buildScimApp(context)
  await t.scim('POST', 'Contoso', '/Users', { body: userBody('one@contoso.test') })
  const page = (await t.scim('GET', 'Contoso', '/Users?count=100000&startIndex=-5')).json()
  assert.equal(page.startIndex, 1)
  assert.equal(page.itemsPerPage, 1)
  assert.equal((await t.scim('GET', 'Contoso', '/Users?count=0')).json().Resources.length, 0)
})
