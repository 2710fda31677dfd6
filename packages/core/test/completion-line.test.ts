/**
 * The completion line built without pino's object walk is byte for byte the line pino writes for
 * `log.info({ event, method, path, statusCode, durationMs }, 'request completed')`, and every
 * logger whose lines could differ (a mixin, a log formatter, redaction of one of the fields, a
 * child with its own serializers) goes through pino instead.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { pino, type DestinationStream, type LoggerOptions } from 'pino'
import { COMPLETION_EVENT, COMPLETION_MESSAGE, completionLineWriter, type CompletionFields } from '../src/completion-line.js'
import { loggerOptions } from '../src/logger.js'

class Lines implements DestinationStream {
  readonly written: string[] = []
  write (line: string): void { this.written.push(line) }
}

// A fixed time, so that the two lines of one comparison can be compared as strings.
const fixedTime = (): string => ',"time":1764000000000'

function loggerWith (options: LoggerOptions): { lines: Lines, logger: pino.Logger } {
  const lines = new Lines()
  return { lines, logger: pino({ ...loggerOptions('info'), timestamp: fixedTime, ...options }, lines) }
}

const CASES: ReadonlyArray<[string, CompletionFields]> = [
  ['a plain request', { method: 'GET', path: '/health/live', statusCode: 200, durationMs: 0.52 }],
  ['quotes and backslashes in the path', { method: 'POST', path: '/a"b\\c', statusCode: 302, durationMs: 12 }],
  ['control characters and non-ASCII in the path', { method: 'GET', path: '/tab\there/\u0001/é/日本', statusCode: 404, durationMs: 0 }],
  ['a path over 100 characters', { method: 'GET', path: `/${'x'.repeat(150)}"`, statusCode: 400, durationMs: 1.01 }],
  ['a duration that is not a number', { method: 'DELETE', path: '/', statusCode: 500, durationMs: Number.NaN }]
]

describe('completion line', () => {
  for (const [name, fields] of CASES) {
    test(`${name}: the line is exactly pino's`, () => {
      const { lines, logger } = loggerWith({})
      const write = completionLineWriter(logger)
      assert.ok(write !== undefined, 'the core logger takes the direct path')
      // A request's child as Fastify makes it (bindings and an options object).
      const child = logger.child({ reqId: '5d0c1b0e-4a38-4d63-9c3e-2f8f1b7d3a11' }, {})
      assert.equal(write(child, fields), true)
      child.info({ event: COMPLETION_EVENT, ...fields }, COMPLETION_MESSAGE)
      assert.equal(lines.written.length, 2)
      assert.equal(lines.written[0], lines.written[1])
      const parsed = JSON.parse(lines.written[0] ?? '') as Record<string, unknown>
      assert.deepEqual(Object.keys(parsed), ['level', 'time', 'pid', 'reqId', 'event', 'method', 'path', 'statusCode', 'durationMs', 'msg'])
      assert.equal(parsed.path, fields.path)
    })
  }

  test('a logger above info writes nothing and reports the line as handled', () => {
    const { lines, logger } = loggerWith({ level: 'warn' })
    const write = completionLineWriter(logger)
    assert.ok(write !== undefined)
    assert.equal(write(logger.child({ reqId: 'r' }, {}), CASES[0]?.[1] as CompletionFields), true)
    assert.deepEqual(lines.written, [])
  })

  test('a child at a level of its own (a route logLevel) follows that level', () => {
    const { lines, logger } = loggerWith({})
    const write = completionLineWriter(logger)
    assert.ok(write !== undefined)
    assert.equal(write(logger.child({ reqId: 'r' }, { level: 'error' }), CASES[0]?.[1] as CompletionFields), true)
    assert.deepEqual(lines.written, [])
  })

  test('a custom message key is honoured', () => {
    const { lines, logger } = loggerWith({ messageKey: 'message' })
    const write = completionLineWriter(logger)
    assert.ok(write !== undefined)
    const child = logger.child({ reqId: 'r' }, {})
    write(child, CASES[0]?.[1] as CompletionFields)
    child.info({ event: COMPLETION_EVENT, ...CASES[0]?.[1] }, COMPLETION_MESSAGE)
    assert.equal(lines.written[0], lines.written[1])
    assert.match(lines.written[0] ?? '', /"message":"request completed"/)
  })

  const REFUSED: ReadonlyArray<[string, LoggerOptions]> = [
    ['a mixin', { mixin: () => ({ traceId: 'abc' }) }],
    ['a log formatter', { formatters: { log: (object) => ({ ...object, extra: true }) } }],
    ['redaction of one of the fields', { redact: { paths: ['path'], censor: '[redacted]' } }],
    ['a serializer of one of the fields', { serializers: { method: () => 'HIDDEN' } }],
    ['a logMethod hook', { hooks: { logMethod (args, method) { method.apply(this, args) } } }],
    ['a nested key', { nestedKey: 'payload' }]
  ]
  for (const [name, options] of REFUSED) {
    test(`a logger with ${name} goes through pino`, () => {
      assert.equal(completionLineWriter(loggerWith(options).logger), undefined)
    })
  }

  test('a child with serializers of its own (a route logSerializers) goes through pino', () => {
    const { lines, logger } = loggerWith({})
    const write = completionLineWriter(logger)
    assert.ok(write !== undefined)
    assert.equal(write(logger.child({ reqId: 'r' }, { serializers: { path: () => 'other' } }), CASES[0]?.[1] as CompletionFields), false)
    assert.deepEqual(lines.written, [])
  })

  test('a child with a message prefix goes through pino', () => {
    const { logger } = loggerWith({})
    const write = completionLineWriter(logger)
    assert.ok(write !== undefined)
    assert.equal(write(logger.child({ reqId: 'r' }, { msgPrefix: '[x] ' }), CASES[0]?.[1] as CompletionFields), false)
  })
})
