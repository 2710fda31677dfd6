/**
 * The API key service (issue 42, item 4; src/api-keys/api-key-service.ts) on the memory store:
 * creation from a fresh session only, the owner never from input (the shape of CVE-2025-61928),
 * scopes within the owner's, the limit, names and lifetimes; authentication that refuses a
 * malformed key without a store look-up, and an unknown, revoked, expired or deprovisioned one;
 * the key principal read by the scope, user, client and tenant policies; the one-second cache and
 * its invalidation; last use written once a minute; a digest version change that keeps old keys
 * working; and no key in any log line.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { API_KEY_DIGESTS, digestOf, type DigestScheme } from '../../src/api-keys/api-key-digest.js'
import { apiKeyCredentialType } from '../../src/api-keys/api-key-credential-type.js'
import { checksumOf } from '../../src/api-keys/api-key-format.js'
import { ApiKeyLimits } from '../../src/api-keys/api-key-limits.js'
import { ApiKeyPrincipal } from '../../src/api-keys/api-key-principal.js'
import {
  ApiKeyManagementError, ApiKeyService, creationPolicyOf, type ApiKeyCreateRequest, type ApiKeyOwnerStatus, type ApiKeyServiceOptions
} from '../../src/api-keys/api-key-service.js'
import type { ApiKeyOwner, ApiKeyStore } from '../../src/api-keys/api-key-store.js'
import { MemoryApiKeyStore } from '../../src/api-keys/memory-api-key-store.js'
import type { ApiKeySettings } from '../../src/api-keys/settings-schema.js'
import { BearerPrincipal } from '../../src/bearer/bearer-principal.js'
import { createBearerHandler } from '../../src/bearer/bearer-handler.js'
import { createEmbeddedStore } from '../../src/plugins/state.js'
import { loadTestConfiguration } from '../helpers/app.js'
import { evaluatePolicy } from '../../src/authorization/policies.js'
import { clientPolicy, scopePolicy, userPolicy } from '../../src/authorization/scopes.js'
import { tenantPolicy } from '../../src/authorization/tenants.js'
import { Principal, type Claim } from '../../src/session/principal.js'
import { userKeyOf } from '../../src/session/user-identity.js'

const SETTINGS: ApiKeySettings = {
  Enabled: true,
  Scheme: 'Keys',
  DisplayName: 'Keys',
  Prefix: 'acme_',
  Scopes: { 'orders.read': 'Read orders', 'orders.write': 'Change orders', 'admin.all': 'Everything' },
  DefaultLifetimeDays: 90,
  MaxLifetimeDays: 365,
  MaxKeysPerOwner: 3,
  Owners: ['User', 'Tenant'],
  TenantAdministratorPolicy: 'contoso.Admins',
  AllowXApiKeyHeader: false,
  CreationMaxAgeSeconds: 300
}
const ISSUER = 'https://login.example.test'
const START = Date.parse('2026-03-01T10:00:00.000Z')

interface Harness {
  readonly service: ApiKeyService
  readonly store: ApiKeyStore
  readonly lines: Array<Record<string, unknown>>
  readonly lookups: () => number
  readonly touches: () => number
  readonly advance: (ms: number) => void
  readonly now: () => number
  readonly status: Map<string, ApiKeyOwnerStatus>
  readonly revokedIds: string[]
}

/** A service on a memory store that counts look-ups, with a clock, a log and an owner check the test controls. */
function harness (options: Partial<ApiKeyServiceOptions> = {}, shared?: { store: MemoryApiKeyStore, clock: { at: number } }): Harness {
  const clock = shared?.clock ?? { at: START }
  const now = (): number => clock.at
  const inner = shared?.store ?? new MemoryApiKeyStore({ now })
  let lookups = 0
  let touches = 0
  const store: ApiKeyStore = {
    addApiKey: async (input, max) => await inner.addApiKey(input, max),
    getApiKey: async (id) => { lookups++; return await inner.getApiKey(id) },
    listApiKeys: async (owner) => await inner.listApiKeys(owner),
    revokeApiKey: async (id, reason) => await inner.revokeApiKey(id, reason),
    revokeApiKeysOf: async (owner, reason) => await inner.revokeApiKeysOf(owner, reason),
    touchApiKey: async (id, interval) => { touches++; return await inner.touchApiKey(id, interval) },
    replaceDigest: async (id, from, to) => await inner.replaceDigest(id, from, to),
    close: async () => { await inner.close() }
  }
  const lines: Array<Record<string, unknown>> = []
  const status = new Map<string, ApiKeyOwnerStatus>()
  const revokedIds: string[] = []
  const service = new ApiKeyService({
    scheme: 'Keys',
    settings: SETTINGS,
    store,
    log: { info: (data) => { lines.push({ level: 'info', ...data }) }, warn: (data) => { lines.push({ level: 'warn', ...data }) } },
    ownerStatus: (owner: ApiKeyOwner) => status.get(owner.kind === 'user' ? owner.identity.subject : owner.tenant) ?? 'valid',
    tenantAdministrator: { name: 'contoso.Admins', requirement: (principal) => principal.hasAnyValue('application:role', new Set(['Admin'])) },
    onRevoked: (ids) => { revokedIds.push(...ids) },
    now,
    ...options
  })
  return { service, store, lines, lookups: () => lookups, touches: () => touches, advance: (ms) => { clock.at += ms }, now, status, revokedIds }
}

/** A signed-in session user who authenticated `ageSeconds` ago, with permission claims (`tenant` empty: none). */
function sessionUser (subject: string, { ageSeconds = 60, permissions = ['orders.read', 'orders.write'], roles = [] as string[], tenant = 'contoso', at = START } = {}): Principal {
  const claims: Claim[] = [
    { type: 'application:subject', value: subject, issuer: ISSUER },
    { type: 'application:name', value: `Name of ${subject}`, issuer: ISSUER },
    ...permissions.map((value) => ({ type: 'application:permission', value, issuer: ISSUER })),
    ...roles.map((value) => ({ type: 'application:role', value, issuer: ISSUER })),
    ...(tenant === '' ? [] : [{ type: 'application:tenant', value: tenant, issuer: 'OpenIdConnect' }])
  ]
  const seconds = Math.floor(at / 1000)
  return new Principal({ sessionId: `session-${subject}`, scheme: 'OpenIdConnect', claims, issuedAt: seconds, expiresAt: seconds + 3600, absoluteExpiresAt: seconds + 28800, authentication: { authTime: seconds - ageSeconds } })
}

const REQUEST: ApiKeyCreateRequest = { name: 'CI pipeline', scopes: ['orders.read'] }

const refusedWith = (code: string, field?: string) => (error: unknown): boolean => {
  assert.ok(error instanceof ApiKeyManagementError, String(error))
  assert.equal(error.code, code)
  assert.equal(error.field, field)
  return true
}

describe('creating a key', () => {
  test('the key is shown once as a Secret; the record holds a v1 digest, never the key; api_key.created names the owner and the creator', async () => {
    const h = harness()
    const ada = sessionUser('ada')
    const created = await h.service.create(ada, { name: 'CI pipeline', scopes: ['orders.write', 'orders.read'], lifetimeDays: 30 })
    const text = created.secret.reveal()
    assert.match(text, /^acme_[0-9A-Za-z]{65}$/)
    assert.equal(JSON.stringify(created), JSON.stringify({ apiKey: created.apiKey, secret: '[redacted]' }))
    assert.equal('digest' in created.apiKey, false)
    const stored = await h.store.getApiKey(created.apiKey.id)
    assert.equal(stored?.digest, digestOf(text))
    assert.deepEqual(stored?.owner, { kind: 'user', identity: { scheme: 'OpenIdConnect', issuer: ISSUER, subject: 'ada' }, tenant: 'contoso' })
    assert.deepEqual(stored?.scopes, ['orders.read', 'orders.write'])
    assert.equal(stored?.expires, new Date(START + 30 * 86_400_000).toISOString())
    assert.equal(stored?.lastFour, text.slice(-4))
    assert.deepEqual(h.lines, [{
      level: 'info',
      event: 'api_key.created',
      scheme: 'Keys',
      keyId: created.apiKey.id,
      prefix: 'acme_',
      ownerKind: 'user',
      ownerProvider: 'OpenIdConnect',
      ownerIssuer: ISSUER,
      ownerSubject: 'ada',
      ownerUserKey: userKeyOf({ scheme: 'OpenIdConnect', issuer: ISSUER, subject: 'ada' }),
      tenant: 'contoso',
      provider: 'OpenIdConnect',
      issuer: ISSUER,
      subject: 'ada',
      userKey: userKeyOf({ scheme: 'OpenIdConnect', issuer: ISSUER, subject: 'ada' }),
      sessionAuditId: h.lines[0]?.sessionAuditId,
      scopes: ['orders.read', 'orders.write'],
      expires: stored?.expires
    }])
    assert.ok(!JSON.stringify(h.lines).includes(text.slice(5)))
  })

  test('CVE-2025-61928\'s shape: a request naming another user is impossible by the types and refused at runtime, and no key exists for that user', async () => {
    const h = harness()
    const mallory = sessionUser('mallory')
    // @ts-expect-error The request has no userId: the owner comes from the caller.
    const namingUser: ApiKeyCreateRequest = { ...REQUEST, userId: 'ada' }
    await assert.rejects(h.service.create(mallory, namingUser), refusedWith('APP_ERR_API_KEY_REQUEST_INVALID', 'userId'))
    // @ts-expect-error owner is a kind, never an identity.
    const namingOwner: ApiKeyCreateRequest = { ...REQUEST, owner: { kind: 'user', identity: { scheme: 'OpenIdConnect', issuer: ISSUER, subject: 'ada' } } }
    await assert.rejects(h.service.create(mallory, namingOwner), refusedWith('APP_ERR_API_KEY_REQUEST_INVALID', 'owner'))
    // @ts-expect-error a tenant cannot be named either.
    await assert.rejects(h.service.create(mallory, { ...REQUEST, owner: 'tenant', tenant: 'fabrikam' }), refusedWith('APP_ERR_API_KEY_REQUEST_INVALID', 'tenant'))
    // No caller at all (an anonymous request): refused before the body is read.
    await assert.rejects(h.service.create(undefined, { ...REQUEST, userId: 'ada' } as ApiKeyCreateRequest), refusedWith('APP_ERR_AUTH_REQUIRED'))
    await assert.rejects(h.service.create({ ticket: 'forged' } as unknown as Principal, REQUEST), refusedWith('APP_ERR_AUTH_REQUIRED'))
    assert.deepEqual(await h.store.listApiKeys({ kind: 'user', identity: { scheme: 'OpenIdConnect', issuer: ISSUER, subject: 'ada' }, tenant: 'contoso' }), [])
    assert.deepEqual(await h.store.listApiKeys({ kind: 'user', identity: { scheme: 'OpenIdConnect', issuer: ISSUER, subject: 'mallory' }, tenant: 'contoso' }), [])
    assert.deepEqual(h.lines.map((line) => [line.event, line.code, line.field]), [
      ['api_key.management_refused', 'APP_ERR_API_KEY_REQUEST_INVALID', 'userId'],
      ['api_key.management_refused', 'APP_ERR_API_KEY_REQUEST_INVALID', 'owner'],
      ['api_key.management_refused', 'APP_ERR_API_KEY_REQUEST_INVALID', 'tenant'],
      ['api_key.management_refused', 'APP_ERR_AUTH_REQUIRED', undefined],
      ['api_key.management_refused', 'APP_ERR_AUTH_REQUIRED', undefined]
    ])
  })

  test('a key verified within its cached second is reported from the cache: one bearer.authenticated line per verification, not per call', async () => {
    const h = harness()
    const created = await h.service.create(sessionUser('ada'), REQUEST)
    const type = apiKeyCredentialType([h.service])
    const first = await type.verify(created.secret.reveal(), '/api/orders', undefined)
    const second = await type.verify(created.secret.reveal(), '/api/orders', undefined)
    assert.deepEqual([first.fromCache, second.fromCache, h.lookups()], [false, true, 1])
    h.advance(1_001)
    assert.equal((await type.verify(created.secret.reveal(), '/api/orders', undefined)).fromCache, false, 'past its second: looked up and verified again')
  })

  test('within its verified second a key is answered at once (the handler\'s synchronous path) while its count leaves room; at the limit it waits for the store again', async () => {
    const h = harness()
    const created = await h.service.create(sessionUser('ada'), REQUEST)
    const key = created.secret.reveal()
    const counts = new Map<string, number>()
    const limits = new ApiKeyLimits({ increment: async (name) => { counts.set(name, (counts.get(name) ?? 0) + 1); return { count: counts.get(name) as number, ttlMs: 60_000 } }, requestsPerWindow: 3, failuresPerWindow: 30, windowMs: 60_000, now: h.now })
    const type = apiKeyCredentialType([h.service], limits)
    // As the bearer handler serves a cached caller: `cached` reads, `admitted` counts the call it served.
    const serve = (routeSchemes?: ReadonlySet<string>): ReturnType<typeof type.cached> => { const served = type.cached(key, '/api/orders', routeSchemes); if (served !== undefined) type.admitted?.(served); return served }
    assert.equal(type.cached(key, '/api/orders', undefined), undefined, 'never verified: the asynchronous path decides')
    await type.verify(key, '/api/orders', undefined)
    const atOnce = serve()
    assert.deepEqual([atOnce?.fromCache, atOnce?.clientId, h.lookups()], [true, created.apiKey.id, 1])
    assert.equal(serve(new Set(['OtherScheme'])), undefined, 'a route for other schemes: the asynchronous path refuses it')
    await new Promise((resolve) => setImmediate(resolve))
    assert.notEqual(serve(), undefined, 'the second call left room')
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(serve(), undefined, 'three counted: the next call waits for the store (and is refused there)')
    assert.equal([...counts.values()][0], 3)
    h.advance(60_001)
    assert.equal(type.cached(key, '/api/orders', undefined), undefined, 'past its second: verified again first')
  })

  test('within its cached second every call gets the one caller made at verification (nothing per call); a text of a key\'s length that is no key misses without a look-up', async () => {
    const h = harness()
    const created = await h.service.create(sessionUser('ada'), REQUEST)
    const key = created.secret.reveal()
    const type = apiKeyCredentialType([h.service])
    const verified = await type.verify(key, '/api/orders', undefined)
    const [first, second] = [type.cached(key, '/api/orders', undefined), type.cached(key, '/api/orders', undefined)]
    const fromCache = await type.verify(key, '/api/orders', undefined)
    assert.ok(first !== undefined && first === second && fromCache === first, 'one caller object for the cached second')
    assert.equal(first.principal, verified.principal, 'the principal made when the key was verified')
    assert.deepEqual(first.logBindings, { keyId: created.apiKey.id, keyPrefix: 'acme_' })
    // Same prefix and length, another secret (a valid checksum or not): not in the cache, and no store look-up on this path.
    const head = `${key.slice(0, 5 + 16)}${'Z'.repeat(43)}`
    for (const forged of [`${head}${checksumOf(head)}`, `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`, `${key}A`]) {
      assert.equal(type.cached(forged, '/api/orders', undefined), undefined)
    }
    assert.equal(h.lookups(), 1)
    h.advance(1_001)
    assert.equal(type.cached(key, '/api/orders', undefined), undefined, 'past its second')
    const again = await type.verify(key, '/api/orders', undefined)
    assert.notEqual(again.principal, verified.principal, 'verified again: a new principal')
  })

  test('through the bearer handler, a cached key is counted once per call when a deny check answers with a promise', async () => {
    const h = harness()
    const created = await h.service.create(sessionUser('ada'), REQUEST)
    const key = created.secret.reveal()
    let counted = 0
    const limits = new ApiKeyLimits({ increment: async () => ({ count: ++counted, ttlMs: 60_000 }), requestsPerWindow: 100, failuresPerWindow: 30, windowMs: 60_000, now: h.now })
    const config = loadTestConfiguration().config
    const { handler, api } = createBearerHandler({ schemes: () => [], registered: () => undefined, transformation: config.Authentication.ClaimsTransformation, store: createEmbeddedStore(config.State.Embedded), rateLimits: { ...config.RateLimits, Enabled: false } })
    api.registerType(apiKeyCredentialType([h.service], limits))
    let asked = 0
    api.addDenyCheck(async () => { asked++; return false })
    const call = async (): Promise<string> => {
      const header = `Bearer ${key}`
      // As plugins/bearer.ts does: the synchronous path first, else the outcome.
      if (handler.cached(header, '/api/orders', undefined) !== undefined) return 'at once'
      const outcome = await handler.authenticate({ header, presentation: 'Bearer', method: 'GET', path: '/api/orders', ip: '127.0.0.1', rawHeaders: [], htuOrigin: () => undefined }, undefined)
      return outcome.kind
    }
    assert.deepEqual([await call(), await call(), await call()], ['accepted', 'accepted', 'accepted'], 'the promise of the deny check keeps every call on the asynchronous path')
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepEqual([counted, asked], [3, 5], 'one count per call; the check asked once when verified, then by cached() and by authenticate()')
  })

  test('a key or a bearer token can create, list and revoke no key', async () => {
    const h = harness()
    const created = await h.service.create(sessionUser('ada'), REQUEST)
    const result = await h.service.authenticate(created.secret.reveal())
    assert.ok(result.ok)
    const bearer = new BearerPrincipal(sessionUser('ada').ticket, { scopes: ['orders.read'], machine: false, clientId: 'app' })
    for (const caller of [result.principal, bearer]) {
      await assert.rejects(h.service.create(caller, REQUEST), refusedWith('APP_ERR_API_KEY_SESSION_REQUIRED'))
      await assert.rejects(h.service.list(caller), refusedWith('APP_ERR_API_KEY_SESSION_REQUIRED'))
      await assert.rejects(h.service.revoke(caller, created.apiKey.id), refusedWith('APP_ERR_API_KEY_SESSION_REQUIRED'))
    }
    assert.equal((await h.store.listApiKeys(created.apiKey.owner)).length, 1)
    assert.equal((await h.store.getApiKey(created.apiKey.id))?.revoked, undefined)
  })

  test('a sign-in older than CreationMaxAgeSeconds, or one that proved no time, is sent to step up first', async () => {
    const h = harness()
    assert.deepEqual(creationPolicyOf('Keys', SETTINGS), { name: 'application.ApiKeys.Keys.Create', authentication: { maxAgeSeconds: 300 } })
    await assert.rejects(h.service.create(sessionUser('ada', { ageSeconds: 3600 }), REQUEST), (error: unknown) => {
      refusedWith('APP_ERR_AUTH_STEP_UP_REQUIRED')(error)
      assert.deepEqual((error as ApiKeyManagementError).requirement, { maxAgeSeconds: 300 })
      return true
    })
    const noProof = new Principal({ ...sessionUser('ada').ticket, authentication: {} })
    await assert.rejects(h.service.create(noProof, REQUEST), refusedWith('APP_ERR_AUTH_STEP_UP_REQUIRED'))
    await h.service.create(sessionUser('ada', { ageSeconds: 299 }), REQUEST)
  })

  const BAD: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
    ['an empty name', { name: '' }, 'name'],
    ['a name of spaces', { name: '   ' }, 'name'],
    ['a name over 100 characters', { name: 'x'.repeat(101) }, 'name'],
    ['a name with a control character', { name: 'CI\u0007' }, 'name'],
    ['a name with a line break', { name: 'CI\nAdmin key' }, 'name'],
    ['a name with a bidirectional override', { name: 'CI \u202Eyek nimda' }, 'name'],
    ['a name that is not text', { name: 42 }, 'name'],
    ['no scopes', { scopes: [] }, 'scopes'],
    ['a scope twice', { scopes: ['orders.read', 'orders.read'] }, 'scopes'],
    ['a scope the scheme does not offer', { scopes: ['orders.delete'] }, 'scopes'],
    ['a scope named like an object property', { scopes: ['__proto__'] }, 'scopes'],
    ['a scope the owner does not hold', { scopes: ['admin.all'] }, 'scopes'],
    ['a lifetime of 0 days', { lifetimeDays: 0 }, 'lifetimeDays'],
    ['a lifetime in the past', { lifetimeDays: -1 }, 'lifetimeDays'],
    ['a lifetime over the maximum', { lifetimeDays: 366 }, 'lifetimeDays'],
    ['a fractional lifetime', { lifetimeDays: 1.5 }, 'lifetimeDays'],
    ['an unknown owner kind', { owner: 'organisation' }, 'owner']
  ]
  for (const [name, change, field] of BAD) {
    test(`refused naming the field: ${name}`, async () => {
      const h = harness()
      await assert.rejects(h.service.create(sessionUser('ada'), { ...REQUEST, ...change } as ApiKeyCreateRequest), refusedWith('APP_ERR_API_KEY_REQUEST_INVALID', field))
      assert.deepEqual(await h.service.list(sessionUser('ada')), [])
    })
  }

  test('the per-owner limit answers 409; a revoked key frees a slot', async () => {
    const h = harness()
    const ada = sessionUser('ada')
    const first = await h.service.create(ada, REQUEST)
    await h.service.create(ada, REQUEST)
    await h.service.create(ada, REQUEST)
    await assert.rejects(h.service.create(ada, REQUEST), refusedWith('APP_ERR_API_KEY_LIMIT'))
    await h.service.create(sessionUser('bob'), REQUEST)
    assert.equal(await h.service.revoke(ada, first.apiKey.id), true)
    await h.service.create(ada, REQUEST)
  })

  test('a tenant key needs the tenant administrator policy, outlives its creator, and acts as a client of the tenant', async () => {
    const h = harness()
    await assert.rejects(h.service.create(sessionUser('ada'), { ...REQUEST, owner: 'tenant' }), refusedWith('APP_ERR_AUTH_FORBIDDEN'))
    await assert.rejects(h.service.create(sessionUser('root', { roles: ['Admin'], tenant: '' }), { ...REQUEST, owner: 'tenant' }), refusedWith('APP_ERR_AUTH_FORBIDDEN'))
    const admin = sessionUser('ada', { roles: ['Admin'], permissions: [] })
    const created = await h.service.create(admin, { ...REQUEST, scopes: ['admin.all'], owner: 'tenant' })
    assert.deepEqual(created.apiKey.owner, { kind: 'tenant', tenant: 'contoso' })
    assert.deepEqual(created.apiKey.createdBy, { scheme: 'OpenIdConnect', issuer: ISSUER, subject: 'ada' })
    assert.equal(await h.service.revokeAllOf({ kind: 'user', identity: created.apiKey.createdBy, tenant: 'contoso' }, 'deprovisioned'), 0)
    const result = await h.service.authenticate(created.secret.reveal())
    assert.ok(result.ok)
    const principal = result.principal
    assert.equal(principal.access.machine, true)
    assert.equal(principal.ticket.kind, 'client')
    assert.deepEqual(principal.identity, { scheme: 'Keys', issuer: 'Keys', subject: created.apiKey.id, kind: 'client' })
    assert.equal(evaluatePolicy(tenantPolicy('contoso.Orders', 'contoso'), principal), 'allow')
    assert.equal(evaluatePolicy(tenantPolicy('fabrikam.Orders', 'fabrikam'), principal), 'forbid')
    assert.equal(evaluatePolicy(userPolicy('users'), principal), 'forbid')
    assert.deepEqual((await h.service.list(admin, 'tenant')).map((key) => key.id), [created.apiKey.id])
    await assert.rejects(h.service.list(sessionUser('bob'), 'tenant'), refusedWith('APP_ERR_AUTH_FORBIDDEN'))
    assert.equal(await h.service.revoke(sessionUser('bob'), created.apiKey.id), false)
    assert.equal(await h.service.revoke(sessionUser('eve', { roles: ['Admin'], tenant: 'fabrikam' }), created.apiKey.id), false)
    assert.equal(await h.service.revoke(sessionUser('carol', { roles: ['Admin'] }), created.apiKey.id), true)
  })
})

describe('authenticating a key', () => {
  test('a valid key is the owner\'s principal with the key\'s scopes as a client: scope, client, user and tenant policies read it unchanged', async () => {
    const h = harness()
    const created = await h.service.create(sessionUser('ada'), REQUEST)
    const result = await h.service.authenticate(created.secret.reveal())
    assert.ok(result.ok)
    const principal = result.principal
    assert.ok(principal instanceof ApiKeyPrincipal && principal instanceof BearerPrincipal)
    assert.equal(principal.userKey, sessionUser('ada').userKey)
    assert.deepEqual(principal.scopes, ['orders.read'])
    assert.deepEqual(principal.apiKey, { id: created.apiKey.id, scheme: 'Keys', prefix: 'acme_', owner: 'user' })
    assert.equal(principal.access.clientId, created.apiKey.id)
    assert.equal(principal.access.machine, false)
    assert.equal(evaluatePolicy(scopePolicy('read', 'orders.read'), principal), 'allow')
    assert.equal(evaluatePolicy(scopePolicy('write', 'orders.write'), principal), 'forbid')
    assert.equal(evaluatePolicy(clientPolicy('this key', created.apiKey.id), principal), 'allow')
    assert.equal(evaluatePolicy(userPolicy('users'), principal), 'allow')
    assert.equal(evaluatePolicy(tenantPolicy('contoso.Orders', 'contoso'), principal), 'allow')
    // The owner's permission claims are not carried: a key does what its scopes say.
    assert.equal(principal.claims.some((claim) => claim.type === 'application:permission'), false)
    assert.equal(evaluatePolicy({ name: 'fresh', authentication: { maxAgeSeconds: 600 } }, principal), 'step_up')
  })

  test('a malformed key is refused without a store look-up, naming the prefix only', async () => {
    const h = harness()
    const created = await h.service.create(sessionUser('ada'), REQUEST)
    const text = created.secret.reveal()
    for (const malformed of [`ghp_${text.slice(5)}`, text.slice(0, -1), `${text.slice(0, -6)}000000`, 'Bearer', '']) {
      assert.deepEqual(await h.service.authenticate(malformed), { ok: false, refusal: 'malformed' })
    }
    assert.equal(h.lookups(), 0)
    assert.deepEqual(h.lines.slice(1).map((line) => [line.event, line.failure, line.prefix, line.keyId]), Array.from({ length: 5 }, () => ['api_key.refused', 'malformed', 'acme_', undefined]))
  })

  test('an unknown key, and a forged secret for a real key id, are refused as unknown', async () => {
    const h = harness()
    const created = await h.service.create(sessionUser('ada'), REQUEST)
    const head = `acme_${created.apiKey.id}${'A'.repeat(43)}`
    assert.deepEqual(await h.service.authenticate(`${head}${checksumOf(head)}`), { ok: false, refusal: 'unknown', keyId: created.apiKey.id })
    const stranger = `acme_${'B'.repeat(59)}`
    assert.deepEqual(await h.service.authenticate(`${stranger}${checksumOf(stranger)}`), { ok: false, refusal: 'unknown', keyId: 'B'.repeat(16) })
  })

  test('revoking a key refuses it on the next call (the cache forgets it), with api_key.revoked naming the reason and the ids published', async () => {
    const h = harness()
    const ada = sessionUser('ada')
    const created = await h.service.create(ada, REQUEST)
    const text = created.secret.reveal()
    assert.equal((await h.service.authenticate(text)).ok, true)
    assert.equal(await h.service.revoke(sessionUser('mallory'), created.apiKey.id), false, 'another user\'s key is not found')
    assert.equal((await h.service.authenticate(text)).ok, true)
    assert.equal(await h.service.revoke(ada, created.apiKey.id), true)
    assert.deepEqual(await h.service.authenticate(text), { ok: false, refusal: 'revoked', keyId: created.apiKey.id })
    assert.equal(await h.service.revoke(ada, created.apiKey.id), false)
    assert.deepEqual(h.revokedIds, [created.apiKey.id])
    const revoked = h.lines.find((line) => line.event === 'api_key.revoked')
    assert.deepEqual([revoked?.reason, revoked?.keyId, revoked?.prefix, revoked?.subject], ['user', created.apiKey.id, 'acme_', 'ada'])
  })

  test('a revocation resolves only once its announcement to the other instances has', async () => {
    let announce: () => void = () => {}
    const announced: string[][] = []
    const h = harness({ onRevoked: async (ids) => { await new Promise<void>((resolve) => { announce = resolve }); announced.push([...ids]) } })
    const ada = sessionUser('ada')
    const [one, two] = [await h.service.create(ada, REQUEST), await h.service.create(ada, REQUEST)]
    for (const revocation of [
      async () => await h.service.revoke(ada, one.apiKey.id),
      async () => await h.service.revokeAllOf({ kind: 'user', identity: { scheme: 'OpenIdConnect', issuer: ISSUER, subject: 'ada' }, tenant: 'contoso' }, 'deprovisioned')
    ]) {
      let resolved = false
      const pending = revocation().then(() => { resolved = true })
      for (let tick = 0; tick < 20; tick++) await new Promise((resolve) => setImmediate(resolve))
      assert.equal(resolved, false, 'not before the announcement')
      announce()
      await pending
    }
    assert.deepEqual(announced, [[one.apiKey.id], [two.apiKey.id]])
  })

  test('deprovisioning: revokeAllOf refuses every key of the owner; an owner the check denies is refused before any revocation', async () => {
    const h = harness()
    const ada = sessionUser('ada')
    const [a, b] = [await h.service.create(ada, REQUEST), await h.service.create(ada, REQUEST)]
    const bob = await h.service.create(sessionUser('bob'), REQUEST)
    h.status.set('bob', 'deprovisioned')
    assert.deepEqual(await h.service.authenticate(bob.secret.reveal()), { ok: false, refusal: 'owner_denied', keyId: bob.apiKey.id })
    assert.equal(await h.service.revokeAllOf(a.apiKey.owner, 'deprovisioned'), 2)
    for (const key of [a, b]) assert.deepEqual(await h.service.authenticate(key.secret.reveal()), { ok: false, refusal: 'revoked', keyId: key.apiKey.id })
    assert.deepEqual(h.lines.filter((line) => line.event === 'api_key.revoked').map((line) => [line.keyId, line.reason]), [[a.apiKey.id, 'deprovisioned'], [b.apiKey.id, 'deprovisioned']])
    assert.deepEqual(h.revokedIds, [a.apiKey.id, b.apiKey.id])
  })

  test('a key past its expiry is refused, from the store and from the cache', async () => {
    const h = harness()
    const created = await h.service.create(sessionUser('ada'), { ...REQUEST, lifetimeDays: 1 })
    const text = created.secret.reveal()
    h.advance(86_400_000 - 500)
    assert.equal((await h.service.authenticate(text)).ok, true)
    h.advance(500)
    assert.deepEqual(await h.service.authenticate(text), { ok: false, refusal: 'expired', keyId: created.apiKey.id })
    h.advance(5000)
    assert.deepEqual(await h.service.authenticate(text), { ok: false, refusal: 'expired', keyId: created.apiKey.id })
  })

  test('a verified key is reused for at most one second; another instance\'s revocation reaches this one through invalidate', async () => {
    const h = harness()
    const created = await h.service.create(sessionUser('ada'), REQUEST)
    const text = created.secret.reveal()
    for (let call = 0; call < 5; call++) assert.equal((await h.service.authenticate(text)).ok, true)
    assert.equal(h.lookups(), 1)
    h.status.set('ada', 'revoked')
    h.advance(999)
    assert.equal((await h.service.authenticate(text)).ok, true, 'within the second')
    h.advance(1)
    assert.deepEqual(await h.service.authenticate(text), { ok: false, refusal: 'owner_denied', keyId: created.apiKey.id })
    h.status.delete('ada')
    assert.equal((await h.service.authenticate(text)).ok, true)
    await h.store.revokeApiKey(created.apiKey.id, 'user')
    h.service.invalidate([created.apiKey.id])
    assert.deepEqual(await h.service.authenticate(text), { ok: false, refusal: 'revoked', keyId: created.apiKey.id })
  })

  test('the last use is written at most once a minute per key', async () => {
    const h = harness({ cacheMs: 0 })
    const created = await h.service.create(sessionUser('ada'), REQUEST)
    const text = created.secret.reveal()
    for (let call = 0; call < 10; call++) {
      await h.service.authenticate(text)
      h.advance(5000)
    }
    assert.equal(h.touches(), 1)
    assert.equal((await h.store.getApiKey(created.apiKey.id))?.lastUsed, new Date(START).toISOString())
    h.advance(10_000)
    await h.service.authenticate(text)
    assert.equal(h.touches(), 2)
    assert.equal((await h.store.getApiKey(created.apiKey.id))?.lastUsed, new Date(h.now()).toISOString())
  })

  test('a digest version change keeps old keys working and rewrites their digest on first use; a release without the new version refuses it as unknown', async () => {
    const store = new MemoryApiKeyStore({ now: () => clock.at })
    const clock = { at: START }
    const before = harness({}, { store, clock })
    const created = await before.service.create(sessionUser('ada'), REQUEST)
    const text = created.secret.reveal()
    const next: DigestScheme = { current: 'v2', algorithms: { ...API_KEY_DIGESTS.algorithms, v2: (key) => Buffer.from(key).reverse().toString('base64url') } }
    const after = harness({ digests: next }, { store, clock })
    assert.equal((await after.service.authenticate(text)).ok, true)
    assert.match((await store.getApiKey(created.apiKey.id))?.digest ?? '', /^v2:/)
    assert.deepEqual(after.lines.map((line) => [line.event, line.from, line.to]), [['api_key.digest_upgraded', 'v1', 'v2']])
    clock.at += 1000
    assert.equal((await after.service.authenticate(text)).ok, true)
    const newKey = await after.service.create(sessionUser('ada'), REQUEST)
    assert.match((await store.getApiKey(newKey.apiKey.id))?.digest ?? '', /^v2:/)
    assert.deepEqual(await harness({}, { store, clock }).service.authenticate(newKey.secret.reveal()), { ok: false, refusal: 'unknown', keyId: newKey.apiKey.id })
  })

  test('no log line of any outcome carries a key or a digest', async () => {
    const h = harness()
    const ada = sessionUser('ada')
    const created = await h.service.create(ada, REQUEST)
    const text = created.secret.reveal()
    await h.service.authenticate(text)
    await h.service.authenticate(`${text.slice(0, -1)}x`)
    await h.service.revoke(ada, created.apiKey.id)
    await h.service.authenticate(text)
    const digest = (await h.store.getApiKey(created.apiKey.id))?.digest ?? ''
    const logged = JSON.stringify(h.lines)
    assert.ok(h.lines.length >= 4)
    for (const secret of [text.slice(5 + 16, -6), digest.slice(3)]) assert.ok(!logged.includes(secret))
  })
})
