/**
 * The verified-token cache's bounds (issue 35, "Speed and memory"): an entry lives until its
 * token's expiry and never after, the cache holds at most its entry count and its byte budget
 * (oldest out first), an entry larger than the whole budget is not kept, an entry's byte estimate
 * covers the heap bench/token-cache-memory.ts measured (issue 40, item 6), and the key is a hash:
 * the cache never holds the token. The RFC 6750 challenge quotes its values.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { bearerChallenge } from '../../src/bearer/challenge.js'
import { bytesOf } from '../../src/bearer/bearer-schemes.js'
import { BearerPrincipal } from '../../src/bearer/bearer-principal.js'
import type { BearerAuthentication } from '../../src/bearer/jwt-bearer-scheme.js'
import { TokenCache, tokenCacheKeyOf } from '../../src/bearer/token-cache.js'

/** A verified caller with `claims` values (type `roles`), as bearer-principal.ts builds one. */
function caller (values: readonly string[]): BearerAuthentication {
  const issuer = 'https://idp.test'
  const principal = new BearerPrincipal({
    sessionId: 'bearer.0123456789abcdefghijkl',
    scheme: 'Api',
    claims: [{ type: 'application:subject', value: 'user-1', issuer }, ...values.map((value) => ({ type: 'roles', value, issuer }))],
    issuedAt: 0,
    expiresAt: 3600,
    absoluteExpiresAt: 3600
  }, { scopes: ['orders.read'], machine: false, clientId: 'mobile-app' })
  return { scheme: 'Api', principal, clientId: 'mobile-app', scopes: ['orders.read'], machine: false, expiresAtMs: 3_600_000 }
}

describe('the verified-token cache', () => {
  test('an entry is served until its expiry and dropped after it', () => {
    const cache = new TokenCache<string>()
    cache.set('k', 'v', 1000, 10)
    assert.equal(cache.get('k', 999), 'v')
    assert.equal(cache.get('k', 1000), undefined)
    assert.equal(cache.size, 0)
  })

  test('at most maxEntries, the oldest first out', () => {
    const cache = new TokenCache<number>({ maxEntries: 3 })
    for (let index = 0; index < 5; index++) cache.set(`k${index}`, index, 10_000, 1)
    assert.equal(cache.size, 3)
    assert.deepEqual(['k0', 'k1', 'k2', 'k3', 'k4'].map((key) => cache.get(key, 0)), [undefined, undefined, 2, 3, 4])
  })

  test('at most maxBytes; an entry over the whole budget is not kept', () => {
    const cache = new TokenCache<number>({ maxBytes: 100 })
    cache.set('a', 1, 10_000, 60)
    cache.set('b', 2, 10_000, 60)
    assert.deepEqual([cache.get('a', 0), cache.get('b', 0)], [undefined, 2])
    cache.set('huge', 3, 10_000, 101)
    assert.equal(cache.get('huge', 0), undefined)
    assert.equal(cache.get('b', 0), 2)
  })

  test('an entry\'s estimate covers what bench/token-cache-memory.ts measured: 2,339 bytes for 15 short claims; Latin-1 one byte per character, other text two', () => {
    assert.ok(bytesOf(caller(Array.from({ length: 14 }, (_, index) => `value-${index}-of-twenty-chars`))) >= 2339)
    const latin = bytesOf(caller(['x'.repeat(1000)]))
    const cyrillic = bytesOf(caller(['ж'.repeat(1000)]))
    assert.ok(latin >= 1000 && cyrillic - latin >= 1000)
  })

  test('the byte accounting evicts at the bound: the estimates held never exceed maxBytes, the oldest out first', () => {
    const entries = Array.from({ length: 10 }, (_, index) => caller(Array.from({ length: 20 }, (_, role) => `role-${index}-${role}`)))
    const maxBytes = 3 * bytesOf(entries[0] as BearerAuthentication) + 10
    const cache = new TokenCache<BearerAuthentication>({ maxBytes })
    entries.forEach((entry, index) => {
      cache.set(`k${index}`, entry, 10_000, bytesOf(entry))
      assert.ok(cache.bytes <= maxBytes)
    })
    assert.equal(cache.size, 3)
    assert.deepEqual(['k6', 'k7', 'k8', 'k9'].map((key) => cache.get(key, 0) !== undefined), [false, true, true, true])
    cache.clear()
    assert.equal(cache.bytes, 0)
  })

  test('the key is a SHA-256 of the token, not the token', () => {
    const token = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln'
    const key = tokenCacheKeyOf(token)
    assert.match(key, /^[A-Za-z0-9_-]{43}$/)
    assert.equal(key.includes('eyJ'), false)
  })
})

describe('RFC 6750 challenges', () => {
  test('Bearer alone, invalid_token, insufficient_scope with its scope and the metadata URL, quoted', () => {
    assert.equal(bearerChallenge(), 'Bearer')
    assert.equal(bearerChallenge({ error: 'invalid_token' }), 'Bearer error="invalid_token"')
    assert.equal(bearerChallenge({ error: 'insufficient_scope', scope: 'a b', resourceMetadata: 'https://x.test/.well-known/oauth-protected-resource' }),
      'Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x.test/.well-known/oauth-protected-resource"')
    assert.equal(bearerChallenge({ scope: 'q"\\\u0001' }), 'Bearer scope="q\\"\\\\"')
  })
})
