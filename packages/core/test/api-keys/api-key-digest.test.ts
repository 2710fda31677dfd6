/**
 * What is stored of a key (issue 42, item 2; src/api-keys/api-key-digest.ts): a versioned
 * digest, never the key; a match only for the same key in the digest's own version; a version this
 * release does not know never matches.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { API_KEY_DIGESTS, digestMatches, digestOf, digestVersionOf, type DigestScheme } from '../../src/api-keys/api-key-digest.js'
import { generateApiKey } from '../../src/api-keys/api-key-format.js'

const key = generateApiKey('acme_').text

test('v1 is SHA-256 over a fixed label and the key, base64url, and holds nothing of the key', () => {
  const digest = digestOf(key) as string
  assert.equal(digest, `v1:${createHash('sha256').update(`api-key.v1\u0000${key}`).digest('base64url')}`)
  assert.equal(digestVersionOf(digest), 'v1')
  assert.ok(!digest.includes(key.slice(5, 21)) && !digest.includes(key.slice(-10)))
})

test('a digest matches its own key only', () => {
  const digest = digestOf(key) as string
  assert.equal(digestMatches(key, digest), true)
  assert.equal(digestMatches(generateApiKey('acme_').text, digest), false)
  assert.equal(digestMatches(key, digest.slice(0, -1)), false)
  assert.equal(digestMatches(key, `${digest}A`), false)
})

test('a digest without a version, or of a version this release does not know, never matches', () => {
  const digest = digestOf(key) as string
  assert.equal(digestMatches(key, digest.slice(3)), false)
  assert.equal(digestMatches(key, `v9:${digest.slice(3)}`), false)
  assert.equal(digestMatches(key, `__proto__:${digest.slice(3)}`), false)
  assert.equal(digestOf(key, API_KEY_DIGESTS, 'v9'), undefined)
})

test('a later version adds an algorithm: digests of both versions match, each in its own', () => {
  const later: DigestScheme = { current: 'v2', algorithms: { ...API_KEY_DIGESTS.algorithms, v2: (text) => createHash('sha512').update(text).digest('base64url') } }
  const old = digestOf(key) as string
  const current = digestOf(key, later) as string
  assert.match(current, /^v2:/)
  assert.equal(digestMatches(key, old, later), true)
  assert.equal(digestMatches(key, current, later), true)
  assert.equal(digestMatches(key, current), false, 'a release without v2 does not misread a v2 digest')
})
