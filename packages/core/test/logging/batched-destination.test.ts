/**
 * The stdout batching in front of pino's sonic-boom stream: nothing reaches the stream until a
 * batch is full or flushed, lines arrive whole and in order, and flushSync (exit) writes
 * everything before returning. A real sonic-boom on a temporary file, not a stub.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { BatchedDestination, loggerOptions } from '../../src/logger.js'

function fileStream () {
  const directory = mkdtempSync(join(tmpdir(), 'batched-destination-'))
  const file = join(directory, 'log')
  const stream = pino.destination({ dest: file, sync: true })
  return { stream, read: () => readFileSync(file, 'utf8'), remove: () => { stream.end(); rmSync(directory, { recursive: true, force: true }) } }
}

test('lines wait for a full batch, then arrive whole and in order', () => {
  const { stream, read, remove } = fileStream()
  try {
    const batched = new BatchedDestination(stream, 100)
    batched.write('{"n":1}\n')
    batched.write('{"n":2}\n')
    assert.equal(read(), '', 'written before the batch was full')
    const long = `{"n":3,"pad":"${'x'.repeat(100)}"}\n`
    batched.write(long)
    assert.equal(read(), `{"n":1}\n{"n":2}\n${long}`)
    batched.write('{"n":4}\n')
    batched.flush()
    assert.equal(read(), `{"n":1}\n{"n":2}\n${long}{"n":4}\n`)
    batched.flush()
    assert.equal(read().split('\n').length, 5, 'an empty flush wrote something')
  } finally {
    remove()
  }
})

test('flushSync (the exit path) writes what is pending, through the synchronous stdout stream the app uses, before it returns', () => {
  const directory = mkdtempSync(join(tmpdir(), 'batched-destination-'))
  const file = join(directory, 'log')
  // An open descriptor, as stdout is, and synchronous, as createLogger makes it.
  const stream = pino.destination({ dest: openSync(file, 'w'), sync: true })
  try {
    const batched = new BatchedDestination(stream)
    const logger = pino(loggerOptions('info'), batched)
    for (let index = 0; index < 50; index++) logger.info({ event: 'test.line', index }, 'line')
    assert.equal(readFileSync(file, 'utf8'), '', 'lines were written before the batch was full')
    // What the process's exit handler calls.
    batched.flushSync()
    const records = readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { index: number })
    assert.deepEqual(records.map((record) => record.index), Array.from({ length: 50 }, (_, index) => index))
  } finally {
    stream.end()
    rmSync(directory, { recursive: true, force: true })
  }
})

test('an error or fatal line goes out at once, after the lines buffered before it', () => {
  const { stream, read, remove } = fileStream()
  try {
    const batched = new BatchedDestination(stream, 1 << 20)
    const logger = pino(loggerOptions('info'), batched)
    logger.info({ n: 1 }, 'first')
    logger.warn({ n: 2 }, 'second')
    assert.equal(read(), '', 'info and warn lines wait for the batch')
    logger.error({ n: 3 }, 'third')
    assert.deepEqual(read().trim().split('\n').map((line) => (JSON.parse(line) as { n: number }).n), [1, 2, 3])
    logger.info({ n: 4 }, 'fourth')
    logger.fatal({ n: 5 }, 'fifth')
    assert.deepEqual(read().trim().split('\n').map((line) => (JSON.parse(line) as { n: number }).n), [1, 2, 3, 4, 5])
  } finally {
    remove()
  }
})
