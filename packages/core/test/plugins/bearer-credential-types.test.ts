/**
 * A request-credential type registered beside JwtBearer (issue 43, item 1, the seam for API keys
 * and SCIM connection tokens): `app.requestCredentials.registerType` before the app's routes.
 * The bearer handler gives a token to the one type that recognises it (here by its prefix), else
 * to JwtBearer; the type's caller is the request's user exactly as a JwtBearer caller is (scope
 * policies read it, no anti-forgery token, `bearer.authenticated` once per token verified and then
 * its cache), its refusal is the same 401 `invalid_token` with a `bearer.refused` line, and the
 * API routes accept credentials with no JwtBearer scheme configured at all.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { scopePolicy } from '../../src/authorization/scopes.js'
import { BearerPrincipal } from '../../src/bearer/bearer-principal.js'
import type { CredentialType } from '../../src/bearer/credential-types.js'
import { BearerTokenError } from '../../src/bearer/failures.js'
import type { BearerAuthentication } from '../../src/bearer/jwt-bearer-scheme.js'
import { createApp } from '../../src/create-app.js'
import { buildTestApp, type TestApp } from '../../src/testing/app.js'
import { who } from '../helpers/bearer-app.js'
import { APP_ROOT } from '../helpers/app.js'

/** A key type as the API-keys feature will have one: recognised by its prefix, looked up in a table, cached after. */
function keyType (keys: Readonly<Record<string, { subject: string, scopes: string[] }>>): CredentialType & { readonly verified: string[] } {
  const cache = new Map<string, BearerAuthentication>()
  const verified: string[] = []
  return {
    type: 'TestKey',
    verified,
    recognises: (token) => token.startsWith('tk_'),
    cached: (token) => cache.get(token),
    verify: async (token) => {
      verified.push(token)
      const key = keys[token]
      if (key === undefined) throw new BearerTokenError('inactive')
      const principal = new BearerPrincipal({
        sessionId: 'bearer.testkey0000000000000',
        scheme: 'Keys',
        claims: [{ type: 'application:subject', value: key.subject, issuer: 'Keys' }, ...key.scopes.map((value) => ({ type: 'application:scope', value, issuer: 'Keys' }))],
        issuedAt: 0,
        expiresAt: 4_102_444_800,
        absoluteExpiresAt: 4_102_444_800
      }, { scopes: key.scopes, machine: false })
      const authentication = { scheme: 'Keys', principal, scopes: key.scopes, machine: false, expiresAtMs: 4_102_444_800_000 }
      cache.set(token, authentication)
      return authentication
    }
  }
}

describe('a request-credential type registered beside JwtBearer', () => {
  let t: TestApp
  const keys = keyType({ tk_reader: { subject: 'script-1', scopes: ['orders.read'] }, tk_writer: { subject: 'script-2', scopes: ['orders.read', 'orders.write'] } })

  before(async () => {
    t = await buildTestApp({
      contentRoot: APP_ROOT,
      nodeEnv: 'Development',
      settings: { Authentication: { Cookie: { AllowInsecureHttp: true } } },
      buildApp: async (options) => await createApp({
        ...options,
        policies: [scopePolicy('orders.Write', 'orders.write')],
        routes: async (app: FastifyInstance) => {
          app.requestCredentials.registerType(keys)
          app.get('/api/orders', async (request) => who(request))
          app.post('/api/orders', { preHandler: app.csrfProtection, config: { authorize: 'orders.Write' } }, async (request) => who(request))
        }
      })
    })
  })
  after(async () => { await t?.app.close() })

  const call = async (method: 'GET' | 'POST', authorization?: string): Promise<{ statusCode: number, body: string, headers: Record<string, unknown> }> =>
    await t.app.inject({ method, url: '/api/orders', headers: authorization === undefined ? {} : { authorization } })

  test('its token authenticates the caller, served from its cache after the first call', async () => {
    const before = t.logs.events('bearer.authenticated').length
    for (let index = 0; index < 2; index++) {
      const response = await call('GET', 'Bearer tk_reader')
      assert.equal(response.statusCode, 200)
      assert.deepEqual(JSON.parse(response.body), { subject: 'script-1', scheme: 'Keys', machine: false, clientId: null, scopes: ['orders.read'] })
    }
    assert.deepEqual(keys.verified.filter((token) => token === 'tk_reader'), ['tk_reader'])
    assert.equal(t.logs.events('bearer.authenticated').length, before + 1)
  })

  test('policies read its principal unchanged, and it needs no anti-forgery token', async () => {
    assert.equal((await call('POST', 'Bearer tk_reader')).statusCode, 403)
    assert.equal((await call('POST', 'Bearer tk_writer')).statusCode, 200)
  })

  test('a token it refuses, or one no type recognises, is the same 401 invalid_token; none at all the Bearer challenge', async () => {
    const before = t.logs.events('bearer.refused').length
    for (const authorization of ['Bearer tk_unknown', 'Bearer eyJhbGciOiJSUzI1NiJ9.e30.c2ln']) {
      const response = await call('GET', authorization)
      assert.equal(response.statusCode, 401)
      assert.equal(response.headers['www-authenticate'], 'Bearer error="invalid_token"')
      assert.equal(JSON.parse(response.body).code, 'APP_ERR_BEARER_INVALID')
    }
    // The key type's own refusal, then JwtBearer's (no scheme may receive the token: no outbound call).
    assert.deepEqual(t.logs.events('bearer.refused').slice(before).map((line) => line.failure), ['inactive', 'issuer'])
    assert.ok(!keys.verified.includes('eyJhbGciOiJSUzI1NiJ9.e30.c2ln'), 'a token it does not recognise never reaches it')
    const anonymous = await call('GET')
    assert.equal(anonymous.statusCode, 401)
    assert.equal(anonymous.headers['www-authenticate'], 'Bearer')
  })

  test('a second type of the same name is refused', () => {
    assert.throws(() => { t.app.requestCredentials.registerType(keyType({})) }, /TestKey is registered already/)
  })
})
