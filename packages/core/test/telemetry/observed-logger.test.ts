/**
 * Which loggers the observed logger reaches. The core's pino logger is wrapped once and its
 * descendants inherit the observing methods, so the cases where pino gives a logger methods of its
 * own (a child made with a level, a level set later, a level change of the app's logger) must still
 * be observed; any other logger is observed through a proxy per logger.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify'
import { createLogger } from '../../src/logger.js'
import { requestChildLogger } from '../../src/request-child-logger.js'
import { observeLogger } from '../../src/telemetry/observed-logger.js'
import { LogCapture } from '../helpers/app.js'

type Seen = Array<[unknown, unknown]>

function observed (level: string): { base: FastifyBaseLogger, logger: FastifyBaseLogger, capture: LogCapture, seen: Seen } {
  const capture = new LogCapture()
  const seen: Seen = []
  const base = createLogger(level, capture)
  return { base, logger: observeLogger(base, (line, context) => { seen.push([line, context]) }), capture, seen }
}

test('request loggers made by Fastify are observed, a route with a logLevel of its own included, and pino writes each at its level', async () => {
  const { logger, capture, seen } = observed('warn')
  const app = Fastify({ loggerInstance: logger, childLoggerFactory: requestChildLogger, logController: new LogController({ disableRequestLogging: true }) })
  app.get('/quiet', async (request) => {
    request.log.info({ event: 'session.signed_in', provider: 'Quiet' }, 'signed in')
    return 'ok'
  })
  app.get('/verbose', { logLevel: 'debug' }, async (request) => {
    request.log.child({ provider: 'Verbose' }).debug({ event: 'external.metadata.loaded' }, 'metadata loaded')
    request.log.trace({ event: 'external.metadata.failed' }, 'metadata not loaded')
    return 'ok'
  })
  await app.ready()
  assert.equal((await app.inject({ url: '/quiet' })).statusCode, 200)
  assert.equal((await app.inject({ url: '/verbose' })).statusCode, 200)
  await app.close()
  assert.deepEqual(seen, [
    [{ event: 'session.signed_in', provider: 'Quiet' }, undefined],
    [{ event: 'external.metadata.loaded' }, { provider: 'Verbose' }],
    [{ event: 'external.metadata.failed' }, undefined]
  ])
  assert.deepEqual(capture.records().map((record) => [record.event, record.provider]), [['external.metadata.loaded', 'Verbose']])
})

test('a level set on the app\'s logger after wrapping applies to its observed children, which are still observed', () => {
  const { base, logger, capture, seen } = observed('warn')
  const child = logger.child({ reqId: 'r1' })
  base.level = 'info'
  child.info({ event: 'session.signed_out' }, 'signed out')
  base.level = 'silent'
  child.fatal({ event: 'session.signed_out_everywhere' }, 'signed out everywhere')
  assert.deepEqual(seen, [[{ event: 'session.signed_out' }, undefined], [{ event: 'session.signed_out_everywhere' }, undefined]])
  assert.deepEqual(capture.records().map((record) => [record.event, record.reqId]), [['session.signed_out', 'r1']])
})

test('a child whose own level is set keeps its bindings\' labels and is observed at every level', () => {
  const { logger, capture, seen } = observed('info')
  const child = logger.child({ provider: 'Saml2' })
  child.level = 'error'
  child.child({ stateStore: 'Redis' }).warn({ event: 'state.store.unavailable' }, 'down')
  child.error({ event: 'saml2.metadata.failed' }, 'metadata not loaded')
  logger.info({ event: 'saml2.metadata.loaded' }, 'metadata loaded')
  assert.deepEqual(seen, [
    [{ event: 'state.store.unavailable' }, { provider: 'Saml2', stateStore: 'Redis' }],
    [{ event: 'saml2.metadata.failed' }, { provider: 'Saml2' }],
    [{ event: 'saml2.metadata.loaded' }, undefined]
  ])
  assert.deepEqual(capture.records().map((record) => record.event), ['saml2.metadata.failed', 'saml2.metadata.loaded'])
})

/** A logger that is not pino: records what each level call receives, children merge their bindings. */
class ListLogger {
  level = 'warn'
  constructor (readonly lines: Array<[string, unknown, Record<string, unknown>]>, readonly bindings: Record<string, unknown> = {}) {}
  child (bindings: Record<string, unknown>): ListLogger { return new ListLogger(this.lines, { ...this.bindings, ...bindings }) }
  fatal (line: unknown): void { this.lines.push(['fatal', line, this.bindings]) }
  error (line: unknown): void { this.lines.push(['error', line, this.bindings]) }
  warn (line: unknown): void { this.lines.push(['warn', line, this.bindings]) }
  info (line: unknown): void { this.lines.push(['info', line, this.bindings]) }
  debug (line: unknown): void { this.lines.push(['debug', line, this.bindings]) }
  trace (line: unknown): void { this.lines.push(['trace', line, this.bindings]) }
  silent (): void {}
}

test('a logger that is not the core\'s pino is observed the same way, its children included, and still gets every call', () => {
  const lines: Array<[string, unknown, Record<string, unknown>]> = []
  const seen: Seen = []
  const logger = observeLogger(new ListLogger(lines) as unknown as FastifyBaseLogger, (line, context) => { seen.push([line, context]) })
  logger.child({ provider: 'OpenIdConnect', reqId: 'r1' }).info({ event: 'external.sign_in.succeeded' }, 'signed in')
  logger.debug({ event: 'governance.denied' }, 'denied')
  assert.deepEqual(seen, [[{ event: 'external.sign_in.succeeded' }, { provider: 'OpenIdConnect' }], [{ event: 'governance.denied' }, undefined]])
  assert.deepEqual(lines, [
    ['info', { event: 'external.sign_in.succeeded' }, { provider: 'OpenIdConnect', reqId: 'r1' }],
    ['debug', { event: 'governance.denied' }, {}]
  ])
  assert.equal(logger.level, 'warn')
})
