/**
 * The per-request child logger (request-child-logger.ts): without route options the child is
 * bound to the request id like Fastify's own; a route's `logLevel` and `logSerializers` still
 * reach it (a route at warn writes no completion line, a route's serializer is applied). Bindings
 * added later in the request (an API key's id and prefix) go onto the request's own logger in
 * place, exactly as a child of it would write them, and onto nothing else.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { IncomingMessage } from 'node:http'
import type { FastifyBaseLogger } from 'fastify'
import { pino } from 'pino'
import { createLogger } from '../../src/logger.js'
import { requestChildLogger, withRequestBindings } from '../../src/request-child-logger.js'
import { buildTestApp, LogCapture, type TestApp } from '../helpers/app.js'

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

describe('bindings added later in a request (withRequestBindings)', () => {
  /** The lines of `write` with `time` fixed, as written (the text, so key order counts). */
  function linesOf (level: string, redact: string[] | undefined, write: (root: FastifyBaseLogger) => void): string[] {
    const capture = new LogCapture()
    const root = redact === undefined ? createLogger(level, capture) : pino({ level, redact, timestamp: false }, capture)
    write(root)
    return capture.lines.map((line) => line.replace(/"time":\d+,/, ''))
  }
  const KEY = { keyId: 'k1d', keyPrefix: 'acme_' }
  /** A raw request as the factory receives it (only what the factory marks on it is read). */
  const rawRequest = (): IncomingMessage => ({}) as IncomingMessage

  test('the logger made for the request takes them in place: the same lines, in the same order, as a child of it would write', () => {
    for (const redact of [undefined, ['keyPrefix']]) {
      const inPlace = linesOf('info', redact, (root) => {
        const raw = rawRequest()
        const log = requestChildLogger(root, { reqId: 'r-1' }, {}, raw)
        assert.equal(withRequestBindings(log, KEY, raw), log, 'the request\'s own logger, not a new one')
        log.info({ event: 'test.line' }, 'line')
      })
      const child = linesOf('info', redact, (root) => { root.child({ reqId: 'r-1' }).child(KEY).info({ event: 'test.line' }, 'line') })
      assert.deepEqual(inPlace, child)
      assert.match(inPlace[0] ?? '', redact === undefined ? /"reqId":"r-1","keyId":"k1d","keyPrefix":"acme_","event":"test.line"/ : /"keyPrefix":"\[Redacted\]"/)
    }
  })

  test('only that request\'s logger changes: the app\'s logger and another request\'s write no key', () => {
    const lines = linesOf('info', undefined, (root) => {
      const [rawOne, rawOther, rawThird] = [rawRequest(), rawRequest(), rawRequest()]
      const [one, other] = [requestChildLogger(root, { reqId: 'r-1' }, {}, rawOne), requestChildLogger(root, { reqId: 'r-2' }, {}, rawOther)]
      withRequestBindings(one, KEY, rawOne)
      withRequestBindings(requestChildLogger(root, { reqId: 'r-3' }, {}, rawThird), { keyId: 'other', keyPrefix: 'acme_' }, rawThird)
      for (const log of [root, other, one]) log.info({ event: 'test.line' }, 'line')
    })
    assert.deepEqual(lines.map((line) => (JSON.parse(line) as { keyId?: string }).keyId), [undefined, undefined, 'k1d'])
  })

  test('a logger made with route options, one the request did not get from the factory, or the app\'s, gets a child and is left as it was', () => {
    const lines = linesOf('info', undefined, (root) => {
      const raw = rawRequest()
      const routed = requestChildLogger(root, { reqId: 'r-1' }, { level: 'info' }, raw)
      const bound = withRequestBindings(routed, KEY, raw)
      // A logger shared by requests, set as a request's logger by the app: never changed in place.
      const rawShared = rawRequest()
      requestChildLogger(root, { reqId: 'r-2' }, {}, rawShared)
      const shared = root.child({ component: 'shared' })
      const fromShared = withRequestBindings(shared, KEY, rawShared)
      const fromRoot = withRequestBindings(root, KEY, rawRequest())
      assert.notEqual(bound, routed)
      assert.notEqual(fromShared, shared)
      assert.notEqual(fromRoot, root)
      for (const log of [bound, routed, fromShared, shared, fromRoot, root]) log.info({ event: 'test.line' }, 'line')
    })
    assert.deepEqual(lines.map((line) => JSON.parse(line) as Record<string, unknown>).map((record) => [record.reqId ?? record.component, record.keyId]),
      [['r-1', 'k1d'], ['r-1', undefined], ['shared', 'k1d'], ['shared', undefined], [undefined, 'k1d'], [undefined, undefined]])
  })
})
