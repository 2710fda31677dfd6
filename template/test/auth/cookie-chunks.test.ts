/**
 * Chunk cookies: a long value splits into `<name>C1..Cn` under a `chunks-<n>` header and joins
 * back; a partial, padded or malformed set never joins.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { CHUNK_SIZE, joinCookieValue, MAX_CHUNKS, splitCookieValue } from '../../src/auth/cookie-chunks.js'

const NAME = '__Host-ProjectTemplate.Web.Authentication'
const long = 'x'.repeat(CHUNK_SIZE * 2) + 'tail'

describe('cookie chunks', () => {
  test('a value that fits is one cookie', () => {
    assert.deepEqual(splitCookieValue(NAME, 'short'), [[NAME, 'short']])
    assert.deepEqual(splitCookieValue(NAME, 'y'.repeat(CHUNK_SIZE)), [[NAME, 'y'.repeat(CHUNK_SIZE)]])
  })

  test('a long value becomes a chunks-<n> header and n numbered chunks that join back', () => {
    const cookies = splitCookieValue(NAME, long)
    assert.deepEqual(cookies.map(([name]) => name), [NAME, `${NAME}C1`, `${NAME}C2`, `${NAME}C3`])
    assert.equal(cookies[0]?.[1], 'chunks-3')
    for (const [, value] of cookies) assert.ok(value.length <= CHUNK_SIZE)
    assert.equal(joinCookieValue(Object.fromEntries(cookies), NAME), long)
  })

  test('more than the chunk limit is refused when splitting', () => {
    assert.throws(() => splitCookieValue(NAME, 'z'.repeat(CHUNK_SIZE * MAX_CHUNKS + 1)), RangeError)
  })

  const complete = Object.fromEntries(splitCookieValue(NAME, long))
  const without = (name: string): Record<string, string> => Object.fromEntries(Object.entries(complete).filter(([key]) => key !== name))
  const broken: Array<[string, Record<string, string | undefined>]> = [
    ['a missing middle chunk', without(`${NAME}C2`)],
    ['a missing last chunk', without(`${NAME}C3`)],
    ['an empty chunk', { ...complete, [`${NAME}C1`]: '' }],
    ['an extra chunk beyond the announced count', { ...complete, [`${NAME}C4`]: 'padding' }],
    ['a header announcing zero chunks', { ...complete, [NAME]: 'chunks-0' }],
    ['a header announcing more than the limit', { ...complete, [NAME]: 'chunks-99' }],
    ['a non-numeric header', { ...complete, [NAME]: 'chunks-x' }],
    ['an empty main cookie', { ...complete, [NAME]: '' }],
    ['no main cookie', without(NAME)],
    ['a plain value with a stray chunk', { [NAME]: 'plain', [`${NAME}C1`]: 'stray' }]
  ]
  for (const [name, cookies] of broken) {
    test(`${name} does not join`, () => {
      assert.equal(joinCookieValue(cookies, NAME), undefined)
    })
  }
})
