/**
 * Where a downstream call may go (downstream/request-target.ts): only paths under the BaseUrl on
 * its origin; every way out is refused. Cases as data.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { downstreamTarget } from '../../src/downstream/request-target.js'

const BASE = new URL('https://api.example.test/v1')

const ALLOWED: ReadonlyArray<[string, string]> = [
  ['/orders', 'https://api.example.test/v1/orders'],
  ['/orders/7?status=open&x=%2F', 'https://api.example.test/v1/orders/7?status=open&x=%2F'],
  ['/', 'https://api.example.test/v1/'],
  ['/a/./b', 'https://api.example.test/v1/a/b'],
  ['/a/../b', 'https://api.example.test/v1/b'],
  // An @ in a path is a path character: the origin stays.
  ['/@evil.example', 'https://api.example.test/v1/@evil.example']
]

const REFUSED: readonly string[] = [
  'https://evil.example/x', 'http://api.example.test/v1/x', '//evil.example/x', 'orders', '',
  '/../admin', '/a/../../admin', '/%2e%2e/admin', '/%2E%2E/admin', '/.%2e/admin', '/a%2f..%2f..%2fadmin',
  '/a\\..\\admin', '/a b', '/a\tb', '/a\nb', '/a\u0000b', '/a\u007fb', '/a#fragment', '/%5c'
]

test('paths under the BaseUrl resolve on its origin', () => {
  for (const [path, expected] of ALLOWED) assert.equal(downstreamTarget(BASE, path)?.href, expected, path)
})

test('absolute URLs, scheme-relative ones and paths that leave the BaseUrl are refused', () => {
  for (const path of REFUSED) assert.equal(downstreamTarget(BASE, path), undefined, path)
})

test('a BaseUrl at the origin root accepts any path on that origin only', () => {
  const root = new URL('https://api.example.test')
  assert.equal(downstreamTarget(root, '/x')?.href, 'https://api.example.test/x')
  assert.equal(downstreamTarget(root, '//evil.example/x'), undefined)
  assert.equal(downstreamTarget(root, '/../x')?.href, 'https://api.example.test/x')
})
