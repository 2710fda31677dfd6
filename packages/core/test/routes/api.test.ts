/**
 * The sample API: information routes authenticated by the fallback, administration and management
 * routes behind the AdministratorRole and ManageApplicationPermission policies.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildTestApp, signInEach, type TestApp } from '../helpers/app.js'

describe('sample API', () => {
  let t: TestApp
  let cookies: Record<'reader' | 'admin' | 'manager', string>
  before(async () => {
    t = await buildTestApp()
    cookies = await signInEach(t.app, ['reader', 'admin', 'manager'])
  })
  after(async () => { await t.app.close() })

  for (const url of ['/api/application-information', '/api/v1/application-information']) {
    test(`${url} returns the application name and API version to a signed-in user`, async () => {
      const response = await t.app.inject({ url, headers: { cookie: cookies.reader } })
      assert.equal(response.statusCode, 200)
      assert.equal(response.headers['content-type'], 'application/json; charset=utf-8')
      assert.deepEqual(response.json(), { applicationName: 'ProjectTemplate', apiVersion: '1.0' })
    })

    test(`${url} is 401 problem+json for an anonymous caller`, async () => {
      const response = await t.app.inject({ url })
      assert.equal(response.statusCode, 401)
      assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8')
    })
  }

  const policyRoutes: Array<[string, () => string, () => string]> = [
    ['/api/application-information/administration', () => cookies.admin, () => cookies.manager],
    ['/api/application-information/management', () => cookies.manager, () => cookies.admin]
  ]
  for (const [url, allowed, denied] of policyRoutes) {
    test(`${url} returns the caller's subject and name when the policy is met`, async () => {
      const response = await t.app.inject({ url, headers: { cookie: allowed() } })
      assert.equal(response.statusCode, 200)
      assert.deepEqual(response.json(), { subject: 'user-1', name: 'Ada Lovelace' })
    })

    test(`${url} is 403 for a user without the policy and 401 when anonymous`, async () => {
      assert.equal((await t.app.inject({ url, headers: { cookie: denied() } })).statusCode, 403)
      assert.equal((await t.app.inject({ url, headers: { cookie: cookies.reader } })).statusCode, 403)
      assert.equal((await t.app.inject({ url })).statusCode, 401)
    })
  }
})
