/**
 * The API key store conformance suite (issue 42, item 3): the cases every {@link ApiKeyStore}
 * must pass, run by the core against its memory, SQLite and PostgreSQL stores, and by an app
 * against its own: records read back as written, listing by owner only, the per-owner limit
 * atomic (revoked and expired keys free a slot), a revocation written once, `lastUsed` written at
 * most once per interval, digest replacement only from the expected digest.
 *
 * `apiKeyStoreCases()` lists them runner-free; {@link describeApiKeyStore} runs them with
 * `node:test`. The store is created once with the suite's clock; each case uses owners of its own.
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { ApiKeyLimitError, type ApiKeyInput, type ApiKeyOwner, type ApiKeyStore } from '../api-keys/api-key-store.js'
import { DirectoryInvalidValueError } from '../directory/directory-errors.js'

/** What a case gets: the store and the suite's clock. @public @experimental */
export interface ApiKeyStoreCaseContext {
  readonly store: ApiKeyStore
  readonly now: () => number
  readonly advance: (ms: number) => void
}

/** One conformance case. @public @experimental */
export interface ApiKeyStoreCase {
  readonly name: string
  readonly run: (context: ApiKeyStoreCaseContext) => Promise<void>
}

const DAY = 86_400_000
const userOwner = (): ApiKeyOwner => ({ kind: 'user', identity: { scheme: 'OpenIdConnect', issuer: 'https://issuer.example', subject: `sub-${randomUUID()}` }, tenant: 'contoso' })
const tenantOwner = (): ApiKeyOwner => ({ kind: 'tenant', tenant: `tenant-${randomUUID()}` })
const CREATOR = { scheme: 'OpenIdConnect', issuer: 'https://issuer.example', subject: 'creator' }

function key (owner: ApiKeyOwner, now: number, extra: Partial<ApiKeyInput> = {}): ApiKeyInput {
  return {
    id: randomUUID().replace(/-/g, '').slice(0, 16),
    scheme: 'Keys',
    prefix: 'test_',
    owner,
    createdBy: CREATOR,
    name: 'CI pipeline',
    scopes: ['orders.write', 'orders.read'],
    expires: new Date(now + 30 * DAY).toISOString(),
    digest: `v1:${randomUUID()}`,
    lastFour: 'AbC1',
    ...extra
  }
}

const limitError = (limit: number) => (error: unknown): boolean => {
  assert.ok(error instanceof ApiKeyLimitError, `an ApiKeyLimitError, got ${String(error)}`)
  assert.equal(error.limit, limit)
  return true
}

const CASES: ApiKeyStoreCase[] = [
  {
    name: 'an added key reads back as written, its scopes sorted, created at the store\'s clock, neither revoked nor used',
    run: async ({ store, now }) => {
      const input = key(userOwner(), now())
      const added = await store.addApiKey(input, 10)
      assert.deepEqual(added, { ...input, scopes: ['orders.read', 'orders.write'], created: new Date(now()).toISOString() })
      assert.deepEqual(await store.getApiKey(input.id), added)
      assert.equal(await store.getApiKey('no-such-key-id'), undefined)
    }
  },
  {
    name: 'a tenant-owned key and a client-owned key read back with their owners',
    run: async ({ store, now }) => {
      const tenant = key(tenantOwner(), now())
      assert.deepEqual((await store.addApiKey(tenant, 10)).owner, tenant.owner)
      const client: ApiKeyOwner = { kind: 'user', identity: { scheme: 'Api', issuer: 'https://issuer.example', subject: `c-${randomUUID()}`, kind: 'client' } }
      const added = await store.addApiKey(key(client, now()), 10)
      assert.deepEqual((await store.getApiKey(added.id))?.owner, client)
    }
  },
  {
    name: 'keys are listed by owner only, oldest first; an identity differing only by kind is another owner',
    run: async ({ store, now, advance }) => {
      const owner = userOwner()
      const first = await store.addApiKey(key(owner, now(), { name: 'first' }), 10)
      advance(1000)
      const second = await store.addApiKey(key(owner, now(), { name: 'second' }), 10)
      if (owner.kind !== 'user') throw new Error('a user owner')
      await store.addApiKey(key({ kind: 'user', identity: { ...owner.identity, kind: 'client' } }, now()), 10)
      await store.addApiKey(key(userOwner(), now()), 10)
      assert.deepEqual((await store.listApiKeys(owner)).map((record) => record.id), [first.id, second.id])
      assert.deepEqual(await store.listApiKeys(tenantOwner()), [])
    }
  },
  {
    name: 'one key over the per-owner limit is refused; a revoked or an expired key frees its slot; another owner is not counted',
    run: async ({ store, now, advance }) => {
      const owner = tenantOwner()
      const a = await store.addApiKey(key(owner, now()), 2)
      await store.addApiKey(key(owner, now(), { expires: new Date(now() + 60_000).toISOString() }), 2)
      await assert.rejects(store.addApiKey(key(owner, now()), 2), limitError(2))
      await store.addApiKey(key(tenantOwner(), now()), 2)
      await store.revokeApiKey(a.id, 'user')
      await store.addApiKey(key(owner, now()), 2)
      await assert.rejects(store.addApiKey(key(owner, now()), 2), limitError(2))
      advance(60_000)
      await store.addApiKey(key(owner, now()), 2)
      assert.equal((await store.listApiKeys(owner)).length, 4)
    }
  },
  {
    name: 'creations at once never both take the last slot',
    run: async ({ store, now }) => {
      const owner = userOwner()
      const results = await Promise.allSettled(Array.from({ length: 6 }, async () => await store.addApiKey(key(owner, now()), 2)))
      assert.equal(results.filter((result) => result.status === 'fulfilled').length, 2)
      for (const result of results) if (result.status === 'rejected') limitError(2)(result.reason)
      assert.equal((await store.listApiKeys(owner)).length, 2)
    }
  },
  {
    name: 'a revocation is written once, with its time and reason',
    run: async ({ store, now, advance }) => {
      const added = await store.addApiKey(key(userOwner(), now()), 10)
      advance(5000)
      const revoked = await store.revokeApiKey(added.id, 'user')
      assert.deepEqual(revoked?.revoked, { at: new Date(now()).toISOString(), reason: 'user' })
      assert.deepEqual(await store.getApiKey(added.id), revoked)
      advance(5000)
      assert.equal(await store.revokeApiKey(added.id, 'deprovisioned'), undefined)
      assert.deepEqual((await store.getApiKey(added.id))?.revoked?.reason, 'user')
      assert.equal(await store.revokeApiKey('no-such-key-id', 'user'), undefined)
    }
  },
  {
    name: 'revoking every key of an owner revokes only its unrevoked keys and returns them',
    run: async ({ store, now }) => {
      const owner = userOwner()
      const other = userOwner()
      const [a, b, c] = [await store.addApiKey(key(owner, now()), 10), await store.addApiKey(key(owner, now()), 10), await store.addApiKey(key(owner, now()), 10)]
      const kept = await store.addApiKey(key(other, now()), 10)
      await store.revokeApiKey(a.id, 'user')
      const revoked = await store.revokeApiKeysOf(owner, 'deprovisioned')
      assert.deepEqual(revoked.map((record) => [record.id, record.revoked?.reason]), [[b.id, 'deprovisioned'], [c.id, 'deprovisioned']])
      assert.equal((await store.getApiKey(a.id))?.revoked?.reason, 'user')
      assert.equal((await store.getApiKey(kept.id))?.revoked, undefined)
      assert.deepEqual(await store.revokeApiKeysOf(owner, 'deprovisioned'), [])
    }
  },
  {
    name: 'lastUsed is written at most once per interval',
    run: async ({ store, now, advance }) => {
      const added = await store.addApiKey(key(userOwner(), now()), 10)
      assert.equal(await store.touchApiKey(added.id, 60_000), true)
      const first = now()
      advance(59_999)
      assert.equal(await store.touchApiKey(added.id, 60_000), false)
      assert.equal((await store.getApiKey(added.id))?.lastUsed, new Date(first).toISOString())
      advance(1)
      assert.equal(await store.touchApiKey(added.id, 60_000), true)
      assert.equal((await store.getApiKey(added.id))?.lastUsed, new Date(now()).toISOString())
      assert.equal(await store.touchApiKey('no-such-key-id', 60_000), false)
    }
  },
  {
    name: 'a digest is replaced only from the digest expected',
    run: async ({ store, now }) => {
      const added = await store.addApiKey(key(userOwner(), now()), 10)
      assert.equal(await store.replaceDigest(added.id, 'v1:not-the-stored-one', 'v2:new'), false)
      assert.equal(await store.replaceDigest(added.id, added.digest, 'v2:new'), true)
      assert.equal((await store.getApiKey(added.id))?.digest, 'v2:new')
    }
  },
  {
    name: 'a key without a versioned digest, without scopes or with an expiry that is not a date is refused; an id in use is refused',
    run: async ({ store, now }) => {
      const invalid = (attribute: string) => (error: unknown): boolean => {
        assert.ok(error instanceof DirectoryInvalidValueError, String(error))
        assert.equal(error.attribute, attribute)
        return true
      }
      await assert.rejects(store.addApiKey(key(userOwner(), now(), { digest: 'plain-text-key' }), 10), invalid('digest'))
      await assert.rejects(store.addApiKey(key(userOwner(), now(), { scopes: [] }), 10), invalid('scopes'))
      await assert.rejects(store.addApiKey(key(userOwner(), now(), { expires: 'next year' }), 10), invalid('expires'))
      const added = await store.addApiKey(key(userOwner(), now()), 10)
      await assert.rejects(store.addApiKey(key(userOwner(), now(), { id: added.id }), 10))
      assert.equal((await store.getApiKey(added.id))?.digest, added.digest)
    }
  }
]

/** Every conformance case, runner-free. @public @experimental */
export function apiKeyStoreCases (): readonly ApiKeyStoreCase[] {
  return CASES
}

/**
 * Runs the conformance cases with `node:test` against the store `create` returns (created once,
 * with the suite's clock, and closed after the suite).
 *
 * @public @experimental
 */
export function describeApiKeyStore (name: string, create: (options: { readonly now: () => number }) => Promise<ApiKeyStore>, options: { readonly skip?: string | false } = {}): void {
  describe(`${name} API key store conformance`, { skip: options.skip ?? false }, () => {
    let clock = Date.parse('2026-01-01T00:00:00.000Z')
    let store: ApiKeyStore | undefined
    before(async () => { store = await create({ now: () => clock }) })
    after(async () => { await store?.close() })
    for (const entry of apiKeyStoreCases()) {
      test(entry.name, async () => {
        if (store === undefined) throw new Error('the store was not created')
        await entry.run({ store, now: () => clock, advance: (ms) => { clock += ms } })
      })
    }
  })
}
