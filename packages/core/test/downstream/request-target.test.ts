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
  ['/@evil.example', 'https://api.example.test/v1/@evil.example'],
  // Letters outside ASCII are path characters, raw or encoded.
  ['/users/Zo%C3%AB', 'https://api.example.test/v1/users/Zo%C3%AB'],
  ['/users/Zo\u00eb', 'https://api.example.test/v1/users/Zo%C3%AB'],
  ['/search?q=a;b%25', 'https://api.example.test/v1/search?q=a;b%25']
]

const REFUSED: readonly string[] = [
  'https://evil.example/x', 'http://api.example.test/v1/x', '//evil.example/x', 'orders', '',
  '/../admin', '/a/../../admin', '/%2e%2e/admin', '/%2E%2E/admin', '/.%2e/admin', '/a%2f..%2f..%2fadmin',
  '/a\\..\\admin', '/a b', '/a\tb', '/a\nb', '/a\u0000b', '/a\u007fb', '/a#fragment', '/%5c'
]

/** Issue 40, item 6: what some server decodes or normalizes into a way out after the check. */
const DISGUISED: ReadonlyArray<[string, string]> = [
  ['path parameter', '/..;/admin'], ['semicolon', '/a;b'], ['encoded semicolon', '/a%3Bb'],
  ['encoded percent', '/a%25b'], ['double-encoded dots', '/%252e%252e/admin'],
  ['U+2024 ONE DOT LEADER', '/\u2024\u2024/admin'], ['U+2024 encoded', '/%E2%80%A4%E2%80%A4/admin'],
  ['U+FF0E FULLWIDTH FULL STOP', '/\uff0e\uff0e/admin'], ['U+FF0E encoded', '/%EF%BC%8E%EF%BC%8E/admin'],
  ['U+3002 IDEOGRAPHIC FULL STOP', '/\u3002\u3002/admin'], ['U+3002 encoded', '/%E3%80%82%E3%80%82/admin'],
  ['U+FF61 HALFWIDTH IDEOGRAPHIC FULL STOP', '/\uff61'], ['U+FE52 SMALL FULL STOP', '/\ufe52\ufe52/admin'],
  ['U+FF0F FULLWIDTH SOLIDUS', '/a\uff0f..\uff0fadmin'], ['U+FF3C FULLWIDTH REVERSE SOLIDUS', '/a%EF%BC%BCadmin'],
  ['not UTF-8 once decoded', '/a%FFb']
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

test('a semicolon, an encoded percent sign and characters that normalize into dots or slashes are refused in the path, raw or encoded', () => {
  for (const [name, path] of DISGUISED) assert.equal(downstreamTarget(BASE, path), undefined, name)
})
