/**
 * The `X-API-Key` header (issue 42, item 1), through the real app over `inject()`: with a scheme's
 * AllowXApiKeyHeader a key sent as `X-API-Key: <key>` is accepted on the routes that accept bearer
 * tokens exactly as `Authorization: Bearer`; a key of a scheme without the setting, a value that
 * is no key, the header repeated, or both headers at once are 401 `invalid_token`; a route that
 * does not accept bearer credentials answers as it does without one; a key in the query string is
 * never read; without the setting the header is not read at all. The header's value never
 * reaches a log line.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { scopePolicy } from '../../src/authorization/scopes.js'
import { createApp } from '../../src/create-app.js'
import { buildTestApp, type TestApp } from '../../src/testing/app.js'
import { APP_ROOT } from '../helpers/app.js'
import { freshUser } from '../helpers/api-keys.js'

const SCOPES = { 'application.read': 'Read', 'application.write': 'Write' }

async function keyApp (schemes: Record<string, unknown>): Promise<TestApp> {
  return await buildTestApp({
    contentRoot: APP_ROOT,
    nodeEnv: 'Development',
    settings: { Authentication: { Cookie: { AllowInsecureHttp: true }, Schemes: schemes } } as never,
    buildApp: async (options) => await createApp({
      ...options,
      policies: [scopePolicy('orders.Read', 'application.read')],
      routes: async (app: FastifyInstance) => {
        app.get('/api/orders', { config: { authorize: 'orders.Read' } }, async (request) => ({ subject: request.user?.ticket.claims.find((claim) => claim.type === 'application:subject')?.value }))
        app.get('/api/internal', { config: { bearer: false } }, async () => ({ internal: true }))
        app.get('/private', async () => ({ page: true }))
      }
    })
  })
}

const keyOf = async (t: TestApp, scheme: string): Promise<string> =>
  (await t.app.apiKeys!.scheme(scheme).create(freshUser('user-1'), { name: 'script', scopes: ['application.read'] })).secret.reveal()

describe('X-API-Key where a scheme allows it', () => {
  let t: TestApp
  let key: string
  let legacyKey: string
  before(async () => {
    t = await keyApp({
      Keys: { Type: 'ApiKey', Prefix: 'acme_', Scopes: SCOPES, AllowXApiKeyHeader: true },
      Legacy: { Type: 'ApiKey', Prefix: 'legacy_', Scopes: SCOPES }
    })
    key = await keyOf(t, 'Keys')
    legacyKey = await keyOf(t, 'Legacy')
  })
  after(async () => { await t?.app.close() })

  const get = async (url: string, headers: Record<string, string | string[]>) => await t.app.inject({ method: 'GET', url, headers })
  const lastFailure = (): unknown => t.logs.events('bearer.refused').at(-1)?.failure

  test('a key in X-API-Key calls an /api route as its owner, exactly as with Authorization: Bearer', async () => {
    const viaHeader = await get('/api/orders', { 'x-api-key': key })
    assert.equal(viaHeader.statusCode, 200, viaHeader.body)
    assert.deepEqual(viaHeader.json(), { subject: 'user-1' })
    const viaBearer = await get('/api/orders', { authorization: `Bearer ${key}` })
    assert.equal(viaBearer.statusCode, 200)
    assert.deepEqual(viaBearer.json(), viaHeader.json())
  })

  test('both headers at once: 401 invalid_token (failure ambiguous), even when both carry the same valid key', async () => {
    for (const authorization of [`Bearer ${key}`, 'Basic dXNlcjpwYXNz']) {
      const refused = await get('/api/orders', { authorization, 'x-api-key': key })
      assert.equal(refused.statusCode, 401)
      assert.equal(refused.headers['www-authenticate'], 'Bearer error="invalid_token"')
      assert.equal(lastFailure(), 'ambiguous')
    }
  })

  test('a value that is no key, or the header twice: 401 invalid_token (malformed), never sent to JwtBearer', async () => {
    const jwtLike = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln'
    for (const value of [jwtLike, `Bearer ${key}`, 'not a key', [key, key]]) {
      const refused = await get('/api/orders', { 'x-api-key': value })
      assert.equal(refused.statusCode, 401, String(value))
      assert.equal(refused.headers['www-authenticate'], 'Bearer error="invalid_token"')
      assert.equal(lastFailure(), 'malformed')
    }
  })

  test('a key of a scheme without AllowXApiKeyHeader: 401 in X-API-Key (failure header), accepted as Authorization: Bearer', async () => {
    const refused = await get('/api/orders', { 'x-api-key': legacyKey })
    assert.equal(refused.statusCode, 401)
    assert.equal(refused.headers['www-authenticate'], 'Bearer error="invalid_token"')
    assert.equal(lastFailure(), 'header')
    assert.equal((await get('/api/orders', { authorization: `Bearer ${legacyKey}` })).statusCode, 200)
  })

  test('a route that does not accept bearer credentials, and a page, answer a key in X-API-Key as they answer no credential', async () => {
    for (const url of ['/api/internal', '/private']) {
      const anonymous = await get(url, { accept: 'application/json' })
      const withKey = await get(url, { accept: 'application/json', 'x-api-key': key })
      assert.notEqual(withKey.statusCode, 200, url)
      assert.equal(withKey.statusCode, anonymous.statusCode, url)
      assert.equal(withKey.headers.location, anonymous.headers.location, url)
      assert.equal(withKey.headers['www-authenticate'], anonymous.headers['www-authenticate'], url)
    }
  })

  test('a key in the query string is never read: the route answers 401 without a credential', async () => {
    for (const parameter of ['api_key', 'apiKey', 'x-api-key', 'access_token', 'key']) {
      const response = await get(`/api/orders?${parameter}=${key}`, {})
      assert.equal(response.statusCode, 401, parameter)
      assert.doesNotMatch(String(response.headers['www-authenticate']), /invalid_token/)
    }
  })

  test('no line of the log carries a key sent in X-API-Key', async () => {
    await get('/api/orders', { 'x-api-key': key })
    await get('/api/orders', { 'x-api-key': legacyKey })
    const text = t.logs.text()
    assert.ok(!text.includes(key.slice(5)) && !text.includes(legacyKey.slice(7)), 'a key reached a log line')
  })
})

describe('X-API-Key where no scheme allows it (the default)', () => {
  let t: TestApp
  let key: string
  before(async () => {
    t = await keyApp({ Keys: { Type: 'ApiKey', Prefix: 'acme_', Scopes: SCOPES } })
    key = await keyOf(t, 'Keys')
  })
  after(async () => { await t?.app.close() })

  test('the header is not read: the route answers 401 without a credential; Authorization: Bearer is read as before', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/orders', headers: { 'x-api-key': key } })
    assert.equal(response.statusCode, 401)
    assert.doesNotMatch(String(response.headers['www-authenticate']), /invalid_token/)
    const both = await t.app.inject({ method: 'GET', url: '/api/orders', headers: { 'x-api-key': 'anything', authorization: `Bearer ${key}` } })
    assert.equal(both.statusCode, 200)
  })
})
