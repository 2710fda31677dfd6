/**
 * API keys on requests (issue 42), through the real app over `inject()`: an ApiKey scheme in
 * configuration, a key created through `app.apiKeys` for a signed-in user, then used as
 * `Authorization: Bearer` on an /api route (scopePolicy with the key's scope passes, another scope
 * is 403); revoked, or its owner revoked with `app.session.revokeUser`, it is 401 `invalid_token`
 * on the next request; a malformed key is 401 without any store read; on a page the key is no
 * session.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { MemoryApiKeyStore } from '../../src/api-keys/memory-api-key-store.js'
import { SqlApiKeyStore } from '../../src/api-keys/sql-api-key-store.js'
import { scopePolicy } from '../../src/authorization/scopes.js'
import { createApp } from '../../src/create-app.js'
import { provisioningRuntimeOf } from '../../src/plugins/directory.js'
import { Principal } from '../../src/session/principal.js'
import { identityOfTicket } from '../../src/session/user-identity.js'
import { buildTestApp, signIn, type TestApp } from '../../src/testing/app.js'
import { APP_ROOT, standardUser, testStateStore } from '../helpers/app.js'

const SCHEME = { Type: 'ApiKey', Prefix: 'acme_', Scopes: { 'application.read': 'Read', 'application.write': 'Write' } }

describe('API keys on requests', () => {
  let t: TestApp
  let cookie: string
  /** The session user of the last /make-key call. */
  let signedIn: Principal | undefined

  before(async () => {
    t = await buildTestApp({
      contentRoot: APP_ROOT,
      nodeEnv: 'Development',
      settings: { Authentication: { Cookie: { AllowInsecureHttp: true }, Schemes: { Keys: SCHEME } } } as never,
      buildApp: async (options) => await createApp({
        ...options,
        policies: [scopePolicy('orders.Read', 'application.read'), scopePolicy('orders.Write', 'application.write')],
        routes: async (app: FastifyInstance) => {
          app.get('/api/orders', { config: { authorize: 'orders.Read' } }, async (request) => ({ subject: request.user?.ticket.claims.find((claim) => claim.type === 'application:subject')?.value }))
          app.get('/api/orders/write', { config: { authorize: 'orders.Write' } }, async () => ({ ok: true }))
          // The app's own key page, reduced: a key for the signed-in user, its secret returned once. The
          // test sign-in records no authentication time: the session is given a fresh one (a real sign-in's).
          app.get('/make-key', async (request) => {
            const user = request.user as Principal
            signedIn = user
            const fresh = new Principal({ ...user.ticket, authentication: { authTime: Math.floor(Date.now() / 1000) } })
            const created = await (app.apiKeys?.scheme().create(fresh, { name: 'script', scopes: ['application.read'] }))
            return { id: created?.apiKey.id, key: created?.secret.reveal() }
          })
          app.get('/private', async () => ({ page: true }))
        }
      })
    })
    cookie = await signIn(t.app, standardUser())
  })
  after(async () => { await t?.app.close() })

  const makeKey = async (): Promise<{ id: string, key: string }> => {
    const response = await t.app.inject({ method: 'GET', url: '/make-key', headers: { cookie } })
    assert.equal(response.statusCode, 200, response.body)
    return response.json()
  }
  const call = async (url: string, key: string) => await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } })

  test('a key created for a signed-in user calls an /api route as that user, within its scope only', async () => {
    const { key } = await makeKey()
    assert.match(key, /^acme_[0-9A-Za-z]{65}$/)
    const response = await call('/api/orders', key)
    assert.equal(response.statusCode, 200, response.body)
    assert.equal(response.json().subject, 'user-1')
    const outside = await call('/api/orders/write', key)
    assert.equal(outside.statusCode, 403)
    assert.match(String(outside.headers['www-authenticate']), /insufficient_scope/)
    assert.ok(t.logs.events('api_key.created').length > 0)
    assert.ok(!t.logs.text().includes(key.slice(5)), 'the key reached a log line')
  })

  test('a revoked key is refused on the next request (401 invalid_token)', async () => {
    const { id, key } = await makeKey()
    assert.equal((await call('/api/orders', key)).statusCode, 200)
    assert.equal(await t.app.apiKeys?.scheme().revoke(signedIn, id), true)
    const refused = await call('/api/orders', key)
    assert.equal(refused.statusCode, 401)
    assert.match(String(refused.headers['www-authenticate']), /invalid_token/)
  })

  test('revoking the owner (app.session.revokeUser) refuses the owner\'s keys on the next request', async () => {
    const { key } = await makeKey()
    assert.equal((await call('/api/orders', key)).statusCode, 200)
    const identity = identityOfTicket((signedIn as Principal).ticket)
    assert.ok(identity !== undefined)
    await t.app.session.revokeUser(identity)
    const refused = await call('/api/orders', key)
    assert.equal(refused.statusCode, 401)
    assert.match(String(refused.headers['www-authenticate']), /invalid_token/)
    cookie = await signIn(t.app, standardUser())
  })

  test('a malformed key with the scheme\'s prefix is 401 without any store read', async () => {
    let reads = 0
    const restore: Array<() => void> = []
    for (const prototype of [MemoryApiKeyStore.prototype, SqlApiKeyStore.prototype]) {
      const original = prototype.getApiKey
      prototype.getApiKey = async function (this: never, ...args: Parameters<typeof original>) { reads++; return await original.apply(this, args) }
      restore.push(() => { prototype.getApiKey = original })
    }
    try {
      const { key } = await makeKey()
      const broken = `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`
      const refused = await call('/api/orders', broken)
      assert.equal(refused.statusCode, 401)
      assert.match(String(refused.headers['www-authenticate']), /invalid_token/)
      assert.equal(reads, 0)
      assert.equal(t.logs.events('bearer.refused').at(-1)?.failure, 'malformed')
    } finally {
      for (const undo of restore) undo()
    }
  })

  test('a key on a page route is no session: the page answers as it does without one', async () => {
    const { key } = await makeKey()
    const anonymous = await t.app.inject({ method: 'GET', url: '/private' })
    const withKey = await call('/private', key)
    assert.notEqual(withKey.statusCode, 200)
    assert.equal(withKey.statusCode, anonymous.statusCode)
    assert.equal(withKey.headers.location, anonymous.headers.location)
  })
})

describe('API keys on two instances sharing a state store', () => {
  const shared = testStateStore()
  const instances: TestApp[] = []
  const settings = { Authentication: { Cookie: { AllowInsecureHttp: true }, Schemes: { Keys: SCHEME } } } as never
  let signedIn: Principal | undefined

  before(async () => {
    for (let index = 0; index < 2; index++) {
      instances.push(await buildTestApp({
        contentRoot: APP_ROOT,
        nodeEnv: 'Development',
        settings,
        stateStore: shared,
        buildApp: async (options) => await createApp({
          ...options,
          routes: async (app: FastifyInstance) => {
            app.get('/who', async (request) => { signedIn = new Principal({ ...(request.user as Principal).ticket, authentication: { authTime: Math.floor(Date.now() / 1000) } }); return {} })
          }
        })
      }))
    }
  })
  after(async () => { for (const instance of instances) await instance.app.close() })

  test('a revocation on one instance drops the key from the other instance\'s cache', async () => {
    const [a, b] = instances as [TestApp, TestApp]
    const cookie = await signIn(a.app, standardUser())
    assert.equal((await a.app.inject({ method: 'GET', url: '/who', headers: { cookie } })).statusCode, 200)
    const created = await a.app.apiKeys!.scheme().create(signedIn, { name: 'script', scopes: ['application.read'] })
    const dropped: Array<readonly string[] | undefined> = []
    const serviceB = b.app.apiKeys!.scheme()
    const invalidate = serviceB.invalidate.bind(serviceB)
    serviceB.invalidate = (ids) => { dropped.push(ids); invalidate(ids) }
    assert.equal(await a.app.apiKeys!.scheme().revoke(signedIn, created.apiKey.id), true)
    for (let attempt = 0; attempt < 50 && dropped.length === 0; attempt++) await new Promise((resolve) => setTimeout(resolve, 10))
    assert.deepEqual(dropped, [[created.apiKey.id]])
  })
})

describe('API keys of a deprovisioned owner', () => {
  let t: TestApp
  let signedIn: Principal | undefined

  before(async () => {
    t = await buildTestApp({
      contentRoot: APP_ROOT,
      nodeEnv: 'Development',
      settings: { Authentication: { Cookie: { AllowInsecureHttp: true }, Schemes: { Keys: SCHEME } }, Provisioning: { Enabled: true } } as never,
      buildApp: async (options) => await createApp({
        ...options,
        routes: async (app: FastifyInstance) => {
          app.get('/who', async (request) => { signedIn = new Principal({ ...(request.user as Principal).ticket, authentication: { authTime: Math.floor(Date.now() / 1000) } }); return {} })
          app.get('/api/orders', async () => ({ ok: true }))
        }
      })
    })
  })
  after(async () => { await t?.app.close() })

  test('are refused (401) from the next request once the person is marked deprovisioned', async () => {
    const cookie = await signIn(t.app, standardUser())
    assert.equal((await t.app.inject({ method: 'GET', url: '/who', headers: { cookie } })).statusCode, 200)
    const created = await t.app.apiKeys!.scheme().create(signedIn, { name: 'script', scopes: ['application.read'] })
    const authorization = `Bearer ${created.secret.reveal()}`
    assert.equal((await t.app.inject({ method: 'GET', url: '/api/orders', headers: { authorization } })).statusCode, 200)
    const identity = identityOfTicket((signedIn as Principal).ticket)
    assert.ok(identity !== undefined)
    await provisioningRuntimeOf(t.app)?.deprovisioned.mark(identity)
    const refused = await t.app.inject({ method: 'GET', url: '/api/orders', headers: { authorization } })
    assert.equal(refused.statusCode, 401)
    assert.match(String(refused.headers['www-authenticate']), /invalid_token/)
  })
})
