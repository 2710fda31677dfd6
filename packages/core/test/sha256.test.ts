/**
 * The one SHA-256 helper (src/data-protection/sha256.ts) gives exactly what
 * `createHash('sha256').update(text, 'utf8').digest('base64url')` gives, so no stored digest, cache
 * key or index key changed when the core moved to Node's one-shot hash.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { test } from 'node:test'
import { sha256Base64url } from '../src/sha256.js'
import { digestOf } from '../src/api-keys/api-key-digest.js'

test('the digest of ASCII, non-ASCII, empty and long texts is createHash\'s', () => {
  for (const text of ['', 'acme_abc', 'Zoë \u00e9\u4e2d\u6587 \u{1F600}', 'x'.repeat(10_000), 'nul\u0000inside']) {
    assert.equal(sha256Base64url(text), createHash('sha256').update(text, 'utf8').digest('base64url'))
  }
})

test('an API key\'s v1 digest is unchanged: the domain text, then the key', () => {
  const key = 'acme_0123456789ABCDEFabcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ'
  assert.equal(digestOf(key), `v1:${createHash('sha256').update('api-key.v1\u0000').update(key, 'utf8').digest('base64url')}`)
})
