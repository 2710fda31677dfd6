/**
 * The error catalogue (src/errors.ts) and docs/errors.md stay in step: every code has exactly one
 * line with its status, meaning and what to do, and the document names no code the catalogue lacks.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { AppError, createError, ERRORS, LOG_CODES, type ErrorCode } from '../src/errors.js'
import { CORE_ROOT } from './helpers/app.js'

const document = readFileSync(join(CORE_ROOT, 'docs', 'errors.md'), 'utf8')
const LINE = /^- `(APP_ERR_[A-Z_]+)` \((\d{3})(?:, startup)?\): (.+)$/
const documented = document.split('\n').map((line) => LINE.exec(line)).filter((match) => match !== null)

describe('error catalogue', () => {
  test('every catalogue code has exactly one line in docs/errors.md', () => {
    for (const code of Object.keys(ERRORS)) {
      assert.equal(documented.filter((match) => match[1] === code).length, 1, `${code} in docs/errors.md`)
    }
  })

  test('docs/errors.md names no code that the catalogue lacks', () => {
    const mentioned = new Set(document.match(/APP_ERR_[A-Z_]+/g) ?? [])
    assert.deepEqual([...mentioned].filter((code) => !(code in ERRORS)), [])
  })

  test('each line states the catalogue status, a meaning and what to do', () => {
    for (const match of documented) {
      const code = match[1] as ErrorCode
      assert.equal(Number(match[2]), ERRORS[code].status, code)
      assert.match(match[3] ?? '', /^.{20,}\. What to do: .{10,}$/, code)
    }
  })

  test('codes are stable APP_ERR_ names and AppError carries the catalogue status', () => {
    for (const code of Object.keys(ERRORS) as ErrorCode[]) {
      assert.match(code, /^APP_ERR_[A-Z]+(_[A-Z]+)*$/)
      const error = new AppError(code, 'message')
      assert.equal(error.statusCode, ERRORS[code].status)
      assert.equal(error.code, code)
    }
  })

  test('every code has its message beside it: a sentence naming its parameters, never a value it was not given', () => {
    for (const code of Object.keys(ERRORS) as ErrorCode[]) {
      const parameters = Array.from({ length: ERRORS[code].message.length }, (_, index) => `<parameter ${index}>`)
      const error = (createError as (code: ErrorCode, ...values: string[]) => AppError)(code, ...parameters)
      assert.equal(error.code, code)
      assert.match(error.message, /^[A-Z].{10,}\.$/, code)
      for (const parameter of parameters) assert.ok(error.message.includes(parameter), `${code} names ${parameter}`)
    }
  })

  test('every log code has exactly one line in docs/errors.md, and the document names no other', () => {
    const logLines = document.split('\n').map((line) => /^- `([A-Z_]+)` \(log\): (.+)$/.exec(line)).filter((match) => match !== null)
    for (const code of Object.keys(LOG_CODES)) {
      assert.equal(logLines.filter((match) => match[1] === code).length, 1, `${code} in docs/errors.md`)
    }
    for (const match of logLines) {
      assert.ok(match[1] !== undefined && match[1] in LOG_CODES, `${match[1] ?? ''} is a log code`)
      assert.match(match[2] ?? '', /^.{20,}\. What to do: .{10,}$/, match[1])
    }
  })

  test('CoreError is the only error class of the core that extends a built-in error', () => {
    const builtIn = /\bclass (\w+)(?:<[^{]*>)? extends (?:Error|TypeError|RangeError|SyntaxError|ReferenceError|EvalError|URIError|AggregateError)\b/g
    const source = join(CORE_ROOT, 'src')
    const files = (readdirSync(source, { recursive: true }) as string[]).filter((file) => file.endsWith('.ts'))
    const roots = files.flatMap((file) => [...readFileSync(join(source, file), 'utf8').matchAll(builtIn)].map((match) => `${file}: ${match[1] ?? ''}`))
    assert.deepEqual(roots, ['errors.ts: CoreError'])
  })
})
