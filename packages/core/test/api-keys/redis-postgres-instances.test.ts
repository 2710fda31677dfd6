/**
 * API keys on two instances as a deployment runs them (issue 42, item 4 and "tests against real
 * pieces"): real redis-server, real PostgreSQL (the keys beside the directory), oidc-provider, a
 * balancer, every request over HTTP. A person signs in for real (their `orders.read` permission
 * from the IdP, a fresh `auth_time`) and the app's own key page, reduced to a call of
 * `app.apiKeys` with the signed-in principal, creates a key on A: it calls an /api route on B, and
 * once revoked on A, B refuses it on the next request even though B had just verified (cached)
 * it: the revocation resolves once the announcement is published, and a publication once Redis
 * has written it to every subscriber (without either, B answered 200 to about one such request
 * in three). A second key: its owner deactivated through SCIM, both instances refuse it on the next
 * request. The shape of CVE-2025-61928 over HTTP: anonymous requests naming a user in the body of
 * a key-creation route (closed by default, or one an app opened by mistake) are 401, and a
 * signed-in caller naming another user is 400; no key is written to the store.
 *
 * The core has no key-creation route of its own yet (the /Account/ApiKeys pages are not on main):
 * the creation routes here are the app's, calling `app.apiKeys.scheme().create(request.user, body)`.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { ApiKeyPrincipal } from '../../src/api-keys/api-key-principal.js'
import type { ApiKeyCreateRequest } from '../../src/api-keys/api-key-service.js'
import type { Principal } from '../../src/session/principal.js'
import { sessionCookiesSet } from '../helpers/providers/http-session.js'
import { useRedisPostgresInstances, type Instance } from '../helpers/redis-postgres-instances.js'
import { userBody } from '../helpers/scim.js'
import { entraDisableUserString } from '../scim/corpora/entra-id.js'

/** The principal of each instance's last /test-only/who request: the signed-in user as the app's key page sees them. */
const principals = new Map<Instance['name'], Principal>()

describe('API keys on two instances (Redis state store, PostgreSQL directory)', () => {
  const t = useRedisPostgresInstances({
    idp: {
      accounts: { grace: { name: 'Grace Hopper', permissions: ['orders.read'] }, mallory: { name: 'Mallory', permissions: ['orders.read'] } },
      claims: { openid: ['sub'], profile: ['name', 'permissions'] },
      // The dev login then releases auth_time: the sign-in is fresh enough to create keys.
      loginAuthentication: () => ({ amr: ['pwd'] })
    },
    openIdConnect: { ClaimMappings: [{ From: 'permissions', To: 'permission' }] },
    authentication: { Schemes: { Keys: { Type: 'ApiKey', Prefix: 'acme_', Scopes: { 'orders.read': 'Read orders' } } } },
    configure: (app, name) => {
      app.get('/test-only/who', async (request) => {
        principals.set(name, request.user as Principal)
        return { subject: request.user?.subject }
      })
      app.get('/api/orders', async (request) => ({ subject: request.user?.subject ?? null, key: (request.user as Partial<ApiKeyPrincipal> | undefined)?.apiKey?.id ?? null }))
      const create = async (request: { user?: Principal, body: unknown }): Promise<{ id: string }> =>
        ({ id: (await app.apiKeys!.scheme().create(request.user, request.body as ApiKeyCreateRequest)).apiKey.id })
      app.post('/test-only/api-keys', async (request) => await create(request))
      app.post('/test-only/api-keys/anonymous', { config: { allowAnonymous: true } }, async (request) => await create(request))
    }
  })

  /** Signs `login` in on `on`: the Cookie header and the principal the app's key page gets. */
  async function signIn (on: Instance, login: string): Promise<{ cookie: string, principal: Principal }> {
    const { callback, cookie } = await t.signIn(on, login)
    assert.equal(sessionCookiesSet(callback.response).length, 1, `${login} signed in on ${on.name}`)
    const who = await t.request(on, '/test-only/who', { cookie })
    assert.equal(who.status, 200, await who.text())
    return { cookie, principal: principals.get(on.name) as Principal }
  }

  async function callWith (on: Instance, key: string): Promise<{ status: number, challenge: string, body: Record<string, unknown> }> {
    const response = await t.request(on, '/api/orders', { authorization: `Bearer ${key}` })
    const text = await response.text()
    return { status: response.status, challenge: response.headers.get('www-authenticate') ?? '', body: text === '' ? {} : JSON.parse(text) }
  }

  async function keysInStore (): Promise<number> {
    const [row] = await t.postgres.sql('SELECT COUNT(*) AS n FROM directory_api_keys', [], t.database)
    return Number(row?.n)
  }

  test('a key created on A calls B; revoked on A, B refuses it on the very next request (five keys in a row)', async () => {
    const { principal } = await signIn(t.a, 'grace')
    // Five times: B has just verified (and cached) the key when A revokes it; the announcement must never be overtaken.
    for (let round = 0; round < 5; round++) {
      const created = await t.a.app.apiKeys!.scheme().create(principal, { name: `nightly export ${round}`, scopes: ['orders.read'] })
      const key = created.secret.reveal()
      for (let index = 0; index < 2; index++) {
        const used = await callWith(t.b, key)
        assert.equal(used.status, 200, JSON.stringify(used.body))
        assert.deepEqual(used.body, { subject: 'grace', key: created.apiKey.id }, 'as grace, through the key')
      }
      assert.equal(await t.a.app.apiKeys!.scheme().revoke(principal, created.apiKey.id), true)
      const refused = await callWith(t.b, key)
      assert.equal(refused.status, 401, `round ${round}: refused on B from the next request, its one-second cache notwithstanding`)
      assert.match(refused.challenge, /^Bearer .*error="invalid_token"/)
      assert.equal(t.b.logs.events('bearer.refused').at(-1)?.failure, 'inactive')
      assert.equal((await callWith(t.a, key)).status, 401)
      assert.ok(!JSON.stringify([...t.a.logs.lines, ...t.b.logs.lines]).includes(key.slice(5)), 'no key in the log')
    }
  })

  test('a key whose owner is deactivated through SCIM is refused on the next request on both instances', async () => {
    const user = await t.scim(t.b, 'POST', '/Users', userBody('grace@contoso.test', { externalId: 'grace' }))
    assert.equal(user.status, 201)
    const { principal } = await signIn(t.b, 'grace')
    const created = await t.b.app.apiKeys!.scheme().create(principal, { name: 'sync', scopes: ['orders.read'] })
    const key = created.secret.reveal()
    for (const on of [t.a, t.b]) assert.equal((await callWith(on, key)).status, 200, `accepted on ${on.name}`)

    assert.equal((await t.scim(t.a, 'PATCH', `/Users/${user.json.id as string}`, entraDisableUserString)).status, 200)
    for (const on of [t.b, t.a]) {
      const refused = await callWith(on, key)
      assert.equal(refused.status, 401, `refused on ${on.name} from the next request`)
      assert.match(refused.challenge, /^Bearer .*error="invalid_token"/)
    }
    const revoked = [...t.a.logs.events('api_key.revoked'), ...t.b.logs.events('api_key.revoked')].filter((line) => line.keyId === created.apiKey.id)
    assert.deepEqual(revoked.map((line) => line.reason), ['deprovisioned'], 'revoked once, because its owner was deprovisioned')
    assert.equal((t.a.logs.events('provisioning.user.deprovisioned').at(-1)?.revoked as { apiKeys?: number } | undefined)?.apiKeys, 1, 'the audit line counts the key')
  })

  test('CVE-2025-61928\'s shape: anonymous requests naming a user get 401, a signed-in caller naming another user 400, and no key is written', async () => {
    const before = await keysInStore()
    const grace = { scheme: 'OpenIdConnect', issuer: t.idp.issuer, subject: 'grace' }
    const bodies = [
      { name: 'pwned', scopes: ['orders.read'], userId: 'grace' },
      { name: 'pwned', scopes: ['orders.read'], owner: { kind: 'user', identity: grace } },
      { name: 'pwned', scopes: ['orders.read'], owner: 'user', subject: 'grace' }
    ]
    for (const on of [t.a, t.b]) {
      for (const path of ['/test-only/api-keys', '/test-only/api-keys/anonymous']) {
        for (const json of bodies) {
          const response = await t.request(on, path, { method: 'POST', json })
          const body = await response.json() as { code?: string }
          assert.equal(response.status, 401, `${on.name} ${path} ${JSON.stringify(json)}`)
          assert.equal(body.code, 'APP_ERR_AUTH_REQUIRED')
        }
      }
    }
    const { cookie } = await signIn(t.a, 'mallory')
    const naming = await t.request(t.a, '/test-only/api-keys', { method: 'POST', cookie, json: bodies[0] })
    assert.equal(naming.status, 400)
    assert.equal((await naming.json() as { code?: string }).code, 'APP_ERR_API_KEY_REQUEST_INVALID')
    assert.equal(await keysInStore(), before, 'no key was created')
    const refusals = [...t.a.logs.events('api_key.management_refused'), ...t.b.logs.events('api_key.management_refused')]
    assert.ok(refusals.length >= bodies.length * 2 + 1, 'each refusal the service saw has its audit line')
  })
})
