/**
 * The table of endpoint kinds (src/providers/provider.ts, ENDPOINT_KINDS): an endpoint declared
 * with providerEndpoint has the limits of its kind, and the kinds' path keys are exactly the
 * path keys a named scheme has defaults for, so every default path has a parametric route.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { ENDPOINT_KINDS, providerEndpoint } from '../../src/providers/provider.js'
import { defaultPathsOf, SCHEME_TYPES } from '../../src/providers/provider-types.js'

const handle = (): never => { throw new Error('not called') }

describe('endpoint kinds', () => {
  test('a declared endpoint has its kind\'s rate-limit group, and a body limit on POST only', () => {
    assert.deepEqual(providerEndpoint('callback', 'POST', '/signin-x', handle), { method: 'POST', path: '/signin-x', kind: 'callback', bodyLimit: 16 * 1024, rateLimitBucket: 'callback', handle })
    assert.deepEqual(providerEndpoint('callback', 'GET', '/signin-x', handle), { method: 'GET', path: '/signin-x', kind: 'callback', rateLimitBucket: 'callback', handle })
    assert.deepEqual(providerEndpoint('acs', 'POST', '/Saml2/X/Acs', handle), { method: 'POST', path: '/Saml2/X/Acs', kind: 'acs', bodyLimit: 256 * 1024, rateLimitBucket: 'callback', handle })
    assert.deepEqual(providerEndpoint('metadata', 'GET', '/Saml2/X/Metadata', handle), { method: 'GET', path: '/Saml2/X/Metadata', kind: 'metadata', handle })
  })

  test('the path keys of the kinds are the path keys a named scheme has defaults for, each once', () => {
    const pathKeys = Object.values(ENDPOINT_KINDS).map((kind) => kind.pathKey)
    const defaulted = SCHEME_TYPES.flatMap((type) => Object.keys(defaultPathsOf(type, 'Name')))
    assert.deepEqual(pathKeys, defaulted)
    assert.equal(new Set(pathKeys).size, pathKeys.length)
  })
})
