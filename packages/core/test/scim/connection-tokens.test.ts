/**
 * A SCIM request is authenticated only by its connection's own active token (issue 41, item 2):
 * no header, Basic, a session cookie, a user's JWT, another connection's token, a revoked or
 * expired token and an unknown connection all get the same 401, as application/scim+json; tokens
 * are 256 random bits behind a prefix, stored as a digest only, at most two active at once.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { signIn } from '../helpers/app.js'
import { buildScimApp } from '../helpers/scim.js'
import { tokenDigestOf } from '../../src/scim/connection-tokens.js'

const UNAUTHENTICATED = { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '401', detail: 'A valid connection token is required (Authorization: Bearer).' }

test('every credential that is not this connection\'s active token gets the same 401', async (context) => {
  const t = await buildScimApp(context, { testSignIn: true })
  const session = await signIn(t.app, [{ type: 'sub', value: 'alice', issuer: 'TestFlow' }])
  const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl'
  const cases: ReadonlyArray<[string, Parameters<typeof t.scim>[3]]> = [
    ['no Authorization header', { authorization: null }],
    ['Basic credentials', { authorization: `Basic ${Buffer.from(`Contoso:${t.tokens.Contoso}`).toString('base64')}` }],
    ['a session cookie', { authorization: null, headers: { cookie: session } }],
    ['a user\'s JWT', { authorization: `Bearer ${jwt}` }],
    ['another connection\'s token', { authorization: `Bearer ${t.tokens.Fabrikam}` }],
    ['the token with one character changed', { authorization: `Bearer ${t.tokens.Contoso.slice(0, -1)}${t.tokens.Contoso.endsWith('A') ? 'B' : 'A'}` }],
    ['the token as a query parameter only', { authorization: null }]
  ]
  for (const [name, options] of cases) {
    const answer = await t.scim('GET', 'Contoso', '/Users', options)
    assert.equal(answer.statusCode, 401, name)
    assert.equal(answer.headers['content-type'], 'application/scim+json; charset=utf-8', name)
    assert.equal(answer.headers['www-authenticate'], 'Bearer realm="scim"', name)
    assert.deepEqual(answer.json(), UNAUTHENTICATED, name)
  }
  const unknown = await t.app.inject({ url: '/scim/v2/Nobody/Users', headers: { authorization: `Bearer ${t.tokens.Contoso}` } })
  assert.equal(unknown.statusCode, 401, 'an unknown connection is not revealed')
  assert.deepEqual(unknown.json(), UNAUTHENTICATED)
  assert.equal((await t.scim('GET', 'Contoso', '/Users')).statusCode, 200, 'the connection\'s own token passes')
  assert.ok(t.logs.lines.every((line) => !JSON.stringify(line).includes(t.tokens.Contoso)), 'no token in any log line')
})

test('tokens: prefix and 256 bits, a digest only, two active at once, revocation from the next request, expiry', async (context) => {
  let now = Date.parse('2026-11-28T10:00:00Z')
  const t = await buildScimApp(context, { now: () => now })
  const provisioning = t.app.provisioning!
  assert.match(t.tokens.Contoso, /^scimtoken_[A-Za-z0-9_-]{43}$/)
  assert.equal(Buffer.from(t.tokens.Contoso.slice('scimtoken_'.length), 'base64url').length, 32)
  const listed = await provisioning.listTokens('Contoso')
  assert.equal(listed.length, 1)
  assert.equal('digest' in (listed[0] ?? {}), false, 'listing never shows the digest')
  const stored = await provisioningStore(t).listTokens('Contoso')
  assert.equal(stored[0]?.digest, tokenDigestOf(t.tokens.Contoso))
  assert.ok(!JSON.stringify(stored).includes(t.tokens.Contoso), 'the secret is not stored')

  const second = await provisioning.createToken('Contoso', { expiresAt: new Date(now + 60_000) })
  await assert.rejects(provisioning.createToken('Contoso'), { name: 'DirectoryConflictError', attribute: 'activeTokens' })
  assert.equal((await t.scim('GET', 'Contoso', '/Users', { authorization: `Bearer ${second.token}` })).statusCode, 200, 'both active tokens pass (rotation)')
  assert.equal(await provisioning.revokeToken('Contoso', listed[0]!.id), true)
  assert.equal((await t.scim('GET', 'Contoso', '/Users')).statusCode, 401, 'revoked: refused from the next request')
  now += 61_000
  assert.equal((await t.scim('GET', 'Contoso', '/Users', { authorization: `Bearer ${second.token}` })).statusCode, 401, 'expired')
  await assert.rejects(provisioning.createToken('Nobody'), /not a configured connection/)
})

test('SCIM routes are not session routes: a POST needs no anti-forgery token and sets no cookie', async (context) => {
  const t = await buildScimApp(context)
  const created = await t.scim('POST', 'Contoso', '/Users', { body: { userName: 'no-csrf@contoso.test' } })
  assert.equal(created.statusCode, 201)
  assert.equal(created.headers['set-cookie'], undefined)
})

function provisioningStore (t: { app: { directory: unknown } }): { listTokens: (connection: string) => Promise<Array<{ digest: string }>> } {
  return (t.app as unknown as Record<symbol, { store: { listTokens: (connection: string) => Promise<Array<{ digest: string }>> } }>)[Object.getOwnPropertySymbols(t.app).find((symbol) => symbol.description === 'provisioning.runtime')!]!.store
}

test('each connection has its own provisioning budget: over it, 429 with Retry-After as a SCIM error', async (context) => {
  const t = await buildScimApp(context, { settings: { RateLimits: { ProvisioningPerWindow: 2 } } })
  assert.equal((await t.scim('GET', 'Contoso', '/Users')).statusCode, 200)
  assert.equal((await t.scim('GET', 'Contoso', '/Users')).statusCode, 200)
  const limited = await t.scim('GET', 'Contoso', '/Users')
  assert.equal(limited.statusCode, 429)
  assert.ok(Number(limited.headers['retry-after']) >= 1)
  assert.equal(limited.json().status, '429')
  assert.equal((await t.scim('GET', 'Fabrikam', '/Users')).statusCode, 200, 'another connection is not limited by this one')
})
