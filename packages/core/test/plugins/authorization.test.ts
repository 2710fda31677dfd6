/**
 * Endpoint authorization from route config: the fallback policy on unannotated routes,
 * allowAnonymous, authorize true and named policies (role and permission read the configured claim
 * types), consumer policies, unknown policy names failing ready(), and the fallback switched off.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { ApplicationAuthorizationPolicyNames } from '../../src/authorization/policies.js'
import { AppError } from '../../src/errors.js'
import { build, buildTestApp, claim, signIn, signInEach, standardUser, type TestApp } from '../helpers/app.js'

const OPEN_POSTURE = { Authentication: { Enabled: false, Cookie: { Enabled: false } }, Authorization: { RequireAuthenticatedUserByDefault: false } }

function addProbeRoutes (app: TestApp['app']): void {
  const ok = async (): Promise<{ ok: true }> => ({ ok: true })
  app.get('/probe/unannotated', ok)
  app.get('/probe/anonymous', { config: { allowAnonymous: true } }, ok)
  app.get('/probe/authorize', { config: { authorize: true } }, ok)
  app.get('/probe/admin', { config: { authorize: ApplicationAuthorizationPolicyNames.AdministratorRole } }, ok)
  app.get('/probe/manage', { config: { authorize: ApplicationAuthorizationPolicyNames.ManageApplicationPermission } }, ok)
  app.get('/probe/authenticated-user', { config: { authorize: ApplicationAuthorizationPolicyNames.AuthenticatedUser } }, ok)
  app.get('/probe/auditor', { config: { authorize: 'consumer.Auditor' } }, ok)
  app.authorization.addPolicy({ name: 'consumer.Auditor', requirement: (principal) => principal.hasAnyValue('application:group', new Set(['auditors'])) })
}

describe('ApplicationAuthorizationPolicyNames', () => {
  test('carries the contract policy names', () => {
    assert.equal(typeof ApplicationAuthorizationPolicyNames, 'function', 'a class, as the contract names it')
    assert.deepEqual({
      AuthenticatedUser: ApplicationAuthorizationPolicyNames.AuthenticatedUser,
      AdministratorRole: ApplicationAuthorizationPolicyNames.AdministratorRole,
      ManageApplicationPermission: ApplicationAuthorizationPolicyNames.ManageApplicationPermission
    }, {
      AuthenticatedUser: 'application.AuthenticatedUser',
      AdministratorRole: 'application.Role.Administrator',
      ManageApplicationPermission: 'application.Permission.ManageApplication'
    })
  })
})

describe('authorization with the fallback policy on (default)', () => {
  const ROLES = ['reader', 'admin', 'manager', 'auditor'] as const
  let t: TestApp
  let cookies: Record<typeof ROLES[number], string>
  before(async () => {
    t = await buildTestApp({ configure: addProbeRoutes })
    cookies = await signInEach(t.app, ROLES)
  })
  after(async () => { await t.app.close() })

  const status = async (url: string, cookie?: string): Promise<number> =>
    (await t.app.inject({ url, headers: { accept: 'application/json', ...(cookie === undefined ? {} : { cookie }) } })).statusCode

  // route, anonymous, reader, admin, manager, auditor
  const table: Array<[string, number, number, number, number, number]> = [
    ['/probe/unannotated', 401, 200, 200, 200, 200],
    ['/probe/anonymous', 200, 200, 200, 200, 200],
    ['/probe/authorize', 401, 200, 200, 200, 200],
    ['/probe/authenticated-user', 401, 200, 200, 200, 200],
    ['/probe/admin', 401, 403, 200, 403, 403],
    ['/probe/manage', 401, 403, 403, 200, 403],
    ['/probe/auditor', 401, 403, 403, 403, 200]
  ]
  for (const [url, anonymous, ...signedIn] of table) {
    test(`${url}: anonymous ${anonymous}, reader/admin/manager/auditor ${signedIn.join('/')}`, async () => {
      assert.equal(await status(url), anonymous)
      for (const [index, expected] of signedIn.entries()) assert.equal(await status(url, cookies[ROLES[index]!]), expected, ROLES[index])
    })
  }

  test('an administrator role from another claim type does not satisfy the role policy', async () => {
    const cookie = await signIn(t.app, [...standardUser(), claim('role', 'Administrator'), claim('application:group', 'Administrator')])
    assert.equal(await status('/probe/admin', cookie), 403)
  })

  test('a route declaring both allowAnonymous and authorize is refused at registration', async () => {
    await assert.rejects(buildTestApp({ configure: (app) => { app.get('/probe/both', { config: { allowAnonymous: true, authorize: true } }, async () => 'x') } }),
      /Route GET \/probe\/both declares both allowAnonymous and authorize\./)
  })

  test('a consumer policy name already taken is refused', () => {
    assert.throws(() => { t.app.authorization.addPolicy({ name: ApplicationAuthorizationPolicyNames.AdministratorRole }) }, /already registered/)
  })
})

describe('policies read the configured claim types and values', () => {
  test('custom RoleClaimType, PermissionClaimType and value lists', async (context) => {
    const t = await build(context, {
      settings: { Authorization: { RoleClaimType: 'roles', PermissionClaimType: 'scp', AdministratorRoles: ['Owner', 'Root'], ManageApplicationPermissions: ['app.write'] } },
      configure: addProbeRoutes
    })
    const get = async (url: string, claims: ReturnType<typeof standardUser>): Promise<number> =>
      (await t.app.inject({ url, headers: { accept: 'application/json', cookie: await signIn(t.app, claims) } })).statusCode
    assert.equal(await get('/probe/admin', [claim('roles', 'Root')]), 200)
    assert.equal(await get('/probe/admin', [claim('application:role', 'Root')]), 403)
    assert.equal(await get('/probe/admin', [claim('roles', 'Administrator')]), 403, 'the default value list no longer applies')
    assert.equal(await get('/probe/manage', [claim('scp', 'app.write')]), 200)
    assert.equal(await get('/probe/manage', [claim('application:permission', 'application.manage')]), 403)
  })
})

describe('unknown policy names', () => {
  test('a route naming an unknown policy fails ready() with APP_ERR_POLICY_UNKNOWN', async () => {
    await assert.rejects(
      buildTestApp({ configure: (app) => { app.get('/probe/typo', { config: { authorize: 'application.Role.Administrater' } }, async () => 'x') } }),
      (error: unknown) => {
        assert.ok(error instanceof AppError)
        assert.equal(error.code, 'APP_ERR_POLICY_UNKNOWN')
        assert.equal(error.message, 'Route GET /probe/typo names the unknown authorization policy application.Role.Administrater.')
        return true
      }
    )
  })

  test('a policy added before ready() resolves a name used by a route registered earlier', async () => {
    const t = await buildTestApp({
      configure: (app) => {
        app.get('/probe/late', { config: { authorize: 'consumer.Late' } }, async () => 'x')
        app.authorization.addPolicy({ name: 'consumer.Late' })
      }
    })
    await t.app.close()
  })
})

describe('authorization with RequireAuthenticatedUserByDefault false', () => {
  let t: TestApp
  before(async () => {
    t = await buildTestApp({ settings: { Authorization: { RequireAuthenticatedUserByDefault: false } }, configure: addProbeRoutes })
  })
  after(async () => { await t.app.close() })

  test('unannotated routes are public', async () => {
    const response = await t.app.inject({ url: '/probe/unannotated' })
    assert.equal(response.statusCode, 200)
    assert.equal((await t.app.inject({ url: '/api/application-information' })).statusCode, 200)
  })

  test('explicit policies still apply', async () => {
    assert.equal((await t.app.inject({ url: '/probe/authorize', headers: { accept: 'application/json' } })).statusCode, 401)
    assert.equal((await t.app.inject({ url: '/probe/admin', headers: { accept: 'application/json' } })).statusCode, 401)
    const reader = await signIn(t.app, standardUser())
    assert.equal((await t.app.inject({ url: '/probe/admin', headers: { accept: 'application/json', cookie: reader } })).statusCode, 403)
    assert.equal((await t.app.inject({ url: '/probe/authorize', headers: { accept: 'application/json', cookie: reader } })).statusCode, 200)
  })

  test('the unannotated routes appear in the anonymous inventory', () => {
    const inventory = t.app.authorization.anonymousRoutes()
    assert.ok(inventory.includes('GET /probe/unannotated'))
    assert.ok(inventory.includes('GET /'))
    assert.ok(!inventory.includes('GET /probe/authorize'))
  })
})

describe('authentication disabled (the --authProvider none posture)', () => {
  test('unannotated routes are public and explicit policies can never be met', async (context) => {
    const t = await build(context, { settings: OPEN_POSTURE, configure: addProbeRoutes, testSignIn: false })
    assert.equal((await t.app.inject({ url: '/probe/unannotated' })).statusCode, 200)
    assert.equal((await t.app.inject({ url: '/' })).statusCode, 200)
    assert.equal((await t.app.inject({ url: '/probe/authorize', headers: { accept: 'application/json' } })).statusCode, 401)
  })
})
