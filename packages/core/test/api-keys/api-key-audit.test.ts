/**
 * Audit lines of API keys (issue 42, item 7), through the real app over `inject()`: every line of
 * a request authenticated with a key names the acting key (`keyId`, `keyPrefix`), the core's and
 * the app's own alike, as `clientId` names the acting client; a refusal's `api_key.refused` line
 * names the key's id and prefix and nothing else of it; no line carries a key.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { createApp } from '../../src/create-app.js'
import { buildTestApp, signIn, type TestApp } from '../../src/testing/app.js'
import { APP_ROOT, standardUser } from '../helpers/app.js'
import { freshUser } from '../helpers/api-keys.js'

describe('the acting key in audit lines', () => {
  let t: TestApp
  before(async () => {
    t = await buildTestApp({
      contentRoot: APP_ROOT,
      nodeEnv: 'Development',
      settings: { Authentication: { Cookie: { AllowInsecureHttp: true }, Schemes: { Keys: { Type: 'ApiKey', Prefix: 'acme_', Scopes: { 'application.read': 'Read' } } } } } as never,
      buildApp: async (options) => await createApp({
        ...options,
        routes: async (app: FastifyInstance) => {
          app.get('/api/orders', async (request) => {
            request.log.info({ event: 'orders.listed' }, 'orders listed')
            return { reqId: request.id }
          })
        }
      })
    })
  })
  after(async () => { await t?.app.close() })

  const linesOf = (reqId: unknown): Array<Record<string, unknown>> => t.logs.records().filter((line) => line.reqId === reqId)

  test('every line of a request authenticated with a key names the key\'s id and prefix; a cookie request\'s lines do not', async () => {
    const created = await t.app.apiKeys!.scheme().create(freshUser('user-1'), { name: 'script', scopes: ['application.read'] })
    const key = created.secret.reveal()
    const response = await t.app.inject({ method: 'GET', url: '/api/orders', headers: { authorization: `Bearer ${key}` } })
    assert.equal(response.statusCode, 200)
    const lines = linesOf(response.json().reqId)
    const events = lines.map((line) => line.event)
    for (const event of ['bearer.authenticated', 'orders.listed', 'request.completed']) assert.ok(events.includes(event), `${event} in ${JSON.stringify(events)}`)
    for (const line of lines) {
      assert.equal(line.keyId, created.apiKey.id, String(line.event))
      assert.equal(line.keyPrefix, 'acme_', String(line.event))
    }
    assert.equal(lines.find((line) => line.event === 'bearer.authenticated')?.clientId, created.apiKey.id)
    assert.ok(!t.logs.text().includes(key.slice(5)), 'the key reached a log line')

    const cookie = await signIn(t.app, standardUser())
    const withCookie = await t.app.inject({ method: 'GET', url: '/api/orders', headers: { cookie } })
    assert.equal(withCookie.statusCode, 200)
    assert.ok(linesOf(withCookie.json().reqId).every((line) => line.keyId === undefined && line.keyPrefix === undefined))
  })

  test('a refused key\'s api_key.refused line names its id and prefix only', async () => {
    const owner = freshUser('user-2')
    const created = await t.app.apiKeys!.scheme().create(owner, { name: 'script', scopes: ['application.read'] })
    assert.equal(await t.app.apiKeys!.scheme().revoke(owner, created.apiKey.id), true)
    const key = created.secret.reveal()
    const refused = await t.app.inject({ method: 'GET', url: '/api/orders', headers: { authorization: `Bearer ${key}` } })
    assert.equal(refused.statusCode, 401)
    const line = t.logs.events('api_key.refused').at(-1)
    assert.deepEqual(Object.keys(line ?? {}).filter((field) => !['level', 'time', 'pid', 'hostname', 'msg'].includes(field)).sort(), ['event', 'failure', 'keyId', 'prefix', 'scheme'])
    assert.deepEqual([line?.failure, line?.keyId, line?.prefix, line?.scheme], ['revoked', created.apiKey.id, 'acme_', 'Keys'])
    assert.ok(!t.logs.text().includes(key.slice(5 + 16)), 'the key\'s secret reached a log line')
  })
})
