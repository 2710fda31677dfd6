/**
 * The per-request child logger (request-child-logger.ts): without route options the child is
 * bound to the request id like Fastify's own; a route's `logLevel` and `logSerializers` still
 * reach it (a route at warn writes no completion line, a route's serializer is applied).
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildTestApp, type TestApp } from '../helpers/app.js'

describe('request child logger', () => {
  let t: TestApp
  before(async () => {
    t = await buildTestApp({
      configure: (app) => {
        app.get('/quiet', { config: { allowAnonymous: true }, logLevel: 'warn' }, async () => 'ok')
        app.get('/serialized', { config: { allowAnonymous: true }, logSerializers: { detail: () => 'serialized by the route' } }, async (request) => {
          request.log.info({ event: 'test.detail', detail: 'raw' }, 'detail')
          return 'ok'
        })
      }
    })
  })
  after(async () => { await t.app.close() })

  test('a route without options logs its completion line with the request id', async () => {
    await t.app.inject({ url: '/health/live' })
    const line = t.logs.events('request.completed').filter((record) => record.path === '/health/live').at(-1)
    assert.match(String(line?.reqId), /^[0-9a-f-]{36}$/)
  })

  test('a route at log level warn writes no completion line', async () => {
    const response = await t.app.inject({ url: '/quiet' })
    assert.equal(response.statusCode, 200)
    assert.deepEqual(t.logs.events('request.completed').filter((record) => record.path === '/quiet'), [])
  })

  test('a route with log serializers has them on its request logger, and its completion line is the usual one', async () => {
    await t.app.inject({ url: '/serialized' })
    const detail = t.logs.events('test.detail').at(-1)
    assert.equal(detail?.detail, 'serialized by the route')
    const completed = t.logs.events('request.completed').filter((record) => record.path === '/serialized').at(-1)
    assert.deepEqual(Object.keys(completed ?? {}), ['level', 'time', 'pid', 'reqId', 'event', 'method', 'path', 'statusCode', 'durationMs', 'msg'])
    assert.equal(completed?.reqId, detail?.reqId)
  })
})
