/**
 * A credential type's own header (credential-types.ts `ownHeader`, presentation.ts
 * `sentCredentialOf`; issue 42, item 1, `X-API-Key`): read only when no `Authorization` came,
 * both at once ambiguous, a non-Bearer/DPoP `Authorization` alone left alone; a type may claim
 * no standard header and no header another type reads.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { CredentialTypes, type CredentialType } from '../../src/bearer/credential-types.js'
import { ownHeaderTokenOf, sentCredentialOf } from '../../src/bearer/presentation.js'

const type = (name: string, ownHeader?: string): CredentialType => ({
  type: name,
  recognises: () => false,
  cached: () => undefined,
  verify: async () => { throw new Error('not called') },
  ...(ownHeader === undefined ? {} : { ownHeader })
})

test('the credential of a request\'s headers, by the table', () => {
  const own = ['x-api-key']
  const cases: Array<[Record<string, string | string[] | undefined>, ReturnType<typeof sentCredentialOf>]> = [
    [{}, undefined],
    [{ authorization: 'Basic dXNlcg==' }, undefined],
    [{ authorization: 'Bearer abc' }, { header: 'authorization', value: 'Bearer abc', presentation: 'Bearer' }],
    [{ authorization: 'DPoP abc' }, { header: 'authorization', value: 'DPoP abc', presentation: 'DPoP' }],
    [{ 'x-api-key': 'acme_key' }, { header: 'x-api-key', value: 'acme_key', presentation: 'Bearer' }],
    [{ 'x-api-key': 'acme_key', authorization: 'Bearer abc' }, 'ambiguous'],
    [{ 'x-api-key': 'acme_key', authorization: 'Basic dXNlcg==' }, 'ambiguous'],
    [{ 'x-api-key': ['a', 'b'] }, { header: 'x-api-key', value: 'a, b', presentation: 'Bearer' }]
  ]
  for (const [headers, expected] of cases) assert.deepEqual(sentCredentialOf(headers, own), expected, JSON.stringify(headers))
  assert.equal(sentCredentialOf({ 'x-api-key': 'acme_key' }, []), undefined, 'no type reads the header: it is not read')
})

test('an own header\'s token is the whole value, a b64token', () => {
  assert.equal(ownHeaderTokenOf('acme_0A1b'), 'acme_0A1b')
  for (const value of ['', 'Bearer acme_0A1b', 'a, b', 'acme 0A1b', 'x'.repeat(9001)]) assert.equal(ownHeaderTokenOf(value), undefined, value.slice(0, 20))
})

test('a type may not claim a standard header, an upper-case name or a header another type reads', () => {
  const types = new CredentialTypes(type('JwtBearer'))
  types.register(type('ApiKey', 'x-api-key'))
  assert.deepEqual(types.ownHeaders(), ['x-api-key'])
  assert.equal(types.typeOfHeader('x-api-key')?.type, 'ApiKey')
  for (const header of ['authorization', 'cookie', 'dpop', 'X-Api-Key', 'x-api-key']) {
    assert.throws(() => { types.register(type(`Other-${header}`, header)) }, TypeError, header)
  }
  assert.deepEqual(types.ownHeaders(), ['x-api-key'])
})
