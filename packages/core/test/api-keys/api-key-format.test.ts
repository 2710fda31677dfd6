/**
 * The key text (issue 42, item 2; src/api-keys/api-key-format.ts): prefix, 16-character id,
 * 43-character secret (256 bits), 6-character CRC32 checksum, base62 only; a malformed text is
 * refused by its shape alone, naming why, and every single-character change of a real key is
 * refused (the checksum, or the alphabet).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  API_KEY_BODY_LENGTH, API_KEY_ID_LENGTH, API_KEY_PREFIX_PATTERN, checksumOf, generateApiKey, parseApiKey, randomBase62
} from '../../src/api-keys/api-key-format.js'

test('a generated key is the prefix, 65 base62 characters and a valid checksum; parsing gives its prefix and id', () => {
  const key = generateApiKey('acme_')
  assert.match(key.text, /^acme_[0-9A-Za-z]{65}$/)
  assert.equal(key.text.length, 'acme_'.length + API_KEY_BODY_LENGTH)
  assert.equal(key.id, key.text.slice(5, 5 + API_KEY_ID_LENGTH))
  assert.equal(key.lastFour, key.text.slice(-4))
  assert.deepEqual(parseApiKey(key.text, ['other_', 'acme_']), { ok: true, prefix: 'acme_', id: key.id, checksumOk: true })
})

test('keys do not repeat: 1,000 keys, 1,000 ids and secrets', () => {
  const keys = Array.from({ length: 1000 }, () => generateApiKey('acme_'))
  assert.equal(new Set(keys.map((key) => key.text)).size, 1000)
  assert.equal(new Set(keys.map((key) => key.id)).size, 1000)
  assert.equal(new Set(keys.map((key) => key.text.slice(5 + API_KEY_ID_LENGTH, -6))).size, 1000)
})

test('the random characters use the whole base62 alphabet', () => {
  assert.equal(new Set(randomBase62(20_000)).size, 62)
})

const real = generateApiKey('acme_').text
const withChecksum = (head: string): string => `${head}${checksumOf(head)}`

const MALFORMED: ReadonlyArray<readonly [string, string, string]> = [
  ['another prefix', `acne_${real.slice(5)}`, 'prefix'],
  ['no prefix', real.slice(5), 'prefix'],
  ['the prefix in another case', `ACME_${real.slice(5)}`, 'prefix'],
  ['empty', '', 'prefix'],
  ['one character short', real.slice(0, -1), 'length'],
  ['one character long', `${real}A`, 'length'],
  ['a bearer JWT under the prefix', `acme_${'eyJhbGciOiJSUzI1NiJ9.e30.'.padEnd(API_KEY_BODY_LENGTH, 'A')}`, 'alphabet'],
  ['a non-ASCII letter', `acme_${'é'.padEnd(API_KEY_BODY_LENGTH, 'A')}`, 'alphabet'],
  ['trailing whitespace', `${real.slice(0, -1)} `, 'alphabet'],
  ['a checksum of another key', `${real.slice(0, -6)}${generateApiKey('acme_').text.slice(-6)}`, 'checksum'],
  ['a well-formed head with a made-up checksum', `${real.slice(0, -6)}000000`, 'checksum']
]

for (const [name, text, reason] of MALFORMED) {
  test(`refused without a look-up: ${name} (${reason})`, () => {
    const parsed = parseApiKey(text, ['acme_'])
    assert.equal(parsed.ok, false)
    assert.equal(parsed.ok ? undefined : parsed.reason, reason)
  })
}

test('every single-character change of a real key is refused', () => {
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
  for (let index = 5; index < real.length; index++) {
    const replacement = alphabet[(alphabet.indexOf(real[index] as string) + 1) % 62] as string
    const changed = `${real.slice(0, index)}${replacement}${real.slice(index + 1)}`
    assert.equal(parseApiKey(changed, ['acme_']).ok, false, `position ${index}`)
  }
})

test('a text made with a valid checksum is well formed (the checksum is not a secret: only the store decides)', () => {
  assert.equal(parseApiKey(withChecksum(`acme_${'A'.repeat(59)}`), ['acme_']).ok, true)
})

test('prefixes: a lower-case letter, letters and digits, a final underscore, 3-24 characters', () => {
  for (const good of ['pt_', 'acme_', 'projecttemplate_', 'a1_', `a${'b'.repeat(22)}_`]) assert.match(good, API_KEY_PREFIX_PATTERN, good)
  for (const bad of ['', '_', 'a_', 'Acme_', 'acme', 'acme-', '1acme_', 'ac me_', `a${'b'.repeat(23)}_`]) assert.doesNotMatch(bad, API_KEY_PREFIX_PATTERN, bad)
})
