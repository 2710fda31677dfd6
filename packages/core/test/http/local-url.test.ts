/**
 * The local-URL rule (docs/security.md): one leading `/` not followed by `/`, `\` or an encoded
 * separator, printable ASCII only, no `\`, at most 2048 characters.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { isLocalUrl, MAX_LOCAL_URL_LENGTH } from '../../src/http/local-url.js'

const local = ['/', '/orders', '/orders?id=1&sort=desc', '/a/b/c#section', '/a/%2F%2Fb', '/path;param', `/${'a'.repeat(MAX_LOCAL_URL_LENGTH - 1)}`]
const notLocal: Array<[string, unknown]> = [
  ['empty', ''],
  ['absolute https', 'https://evil.example/'],
  ['scheme-relative', '//evil.example'],
  ['backslash second', '/\\evil.example'],
  ['encoded slash second', '/%2F%2Fevil.example'],
  ['encoded backslash second', '/%5cevil.example'],
  ['encoded percent second', '/%252F%252Fevil.example'],
  ['backslash later', '/a\\b'],
  ['javascript scheme', 'javascript:alert(1)'],
  ['relative path', 'orders'],
  ['tab', '/\t/evil.example'],
  ['space', '/a b'],
  ['newline', '/a\nSet-Cookie:x=y'],
  ['carriage return', '/a\r'],
  ['NUL', '/a\u0000'],
  ['DEL', '/a\u007f'],
  ['non-ASCII', '/caf\u00e9'],
  ['fullwidth solidus', '/\uff0fevil.example'],
  ['too long', `/${'a'.repeat(MAX_LOCAL_URL_LENGTH)}`],
  ['not a string', ['/']],
  ['undefined', undefined]
]

describe('local URL rule', () => {
  for (const value of local) {
    test(`${value.slice(0, 40)} is local`, () => { assert.equal(isLocalUrl(value), true) })
  }
  for (const [name, value] of notLocal) {
    test(`${name} is not local`, () => { assert.equal(isLocalUrl(value), false) })
  }
})
