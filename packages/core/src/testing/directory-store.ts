/**
 * The directory store conformance suite: the cases every {@link DirectoryStore} must pass, run by
 * the core against its embedded store (SQLite and memory) and PostgreSQL, and by an app against
 * its own store, so that all are held to the same rules (scoping by connection, atomic updates,
 * uniqueness, parsed filters and paging, memberships, tokens).
 *
 * `directoryStoreCases()` lists them runner-free (`{ name, run }`); {@link describeDirectoryStore}
 * runs them with `node:test`. The store is created once for the suite with the suite's clock,
 * which it must use for every timestamp and expiry (`created`, `lastModified`, token expiry):
 * each case works in connections of its own, so the cases share one store.
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { DirectoryConflictError, DirectoryInvalidValueError } from '../directory/directory-errors.js'
import type { DirectoryStore, DirectoryUser, DirectoryUserInput } from '../directory/directory-store.js'
import { parseScimFilter } from '../directory/filter-parser.js'

/**
 * What a case gets: the store, fresh connection names, and the suite's clock.
 *
 * @public @experimental
 */
export interface DirectoryStoreCaseContext {
  readonly store: DirectoryStore
  /** A connection name no other case uses. */
  readonly connection: () => string
  /** The suite's clock (milliseconds); the store was created with it. */
  readonly now: () => number
  /** Moves the clock forward. */
  readonly advance: (ms: number) => void
}

/** One conformance case. @public @experimental */
export interface DirectoryStoreCase {
  readonly name: string
  readonly run: (context: DirectoryStoreCaseContext) => Promise<void>
}

/** What {@link describeDirectoryStore} creates the store with. @public @experimental */
export interface DirectoryStoreFactoryOptions {
  /** The clock the store must use for its timestamps and token expiry. */
  readonly now: () => number
}

const user = (userName: string, extra: Partial<DirectoryUserInput> = {}): DirectoryUserInput => ({
  userName,
  active: true,
  attributes: { name: { givenName: 'Given', familyName: userName }, emails: [{ value: `${userName.toLowerCase()}@example.test`, type: 'work', primary: true }] },
  ...extra
})

const filter = (text: string): ReturnType<typeof parseScimFilter> => parseScimFilter('User', text)

async function userNames (store: DirectoryStore, connection: string, text: string): Promise<string[]> {
  const page = await store.listUsers(connection, { filter: filter(text), startIndex: 1, count: 100 })
  assert.equal(page.totalResults, page.resources.length, `${text}: every match fits in one page`)
  return page.resources.map((resource) => resource.userName).sort()
}

const conflict = (attribute: DirectoryConflictError['attribute']) => (error: unknown): boolean => {
  assert.ok(error instanceof DirectoryConflictError, `a DirectoryConflictError, got ${String(error)}`)
  assert.equal(error.attribute, attribute)
  assert.equal(error.scimType, 'uniqueness')
  return true
}

const invalid = (attribute: string) => (error: unknown): boolean => {
  assert.ok(error instanceof DirectoryInvalidValueError, `a DirectoryInvalidValueError, got ${String(error)}`)
  assert.equal(error.attribute, attribute)
  return true
}

const USERS: DirectoryStoreCase[] = [
  {
    name: 'a created user reads back with a store-assigned id, version 1 and the clock\'s timestamps',
    run: async ({ store, connection, now }) => {
      const c = connection()
      const created = await store.createUser(c, user('Ada', { externalId: 'ext-ada' }))
      assert.ok(created.id.length >= 16, 'an unguessable id')
      assert.equal(created.connection, c)
      assert.equal(created.version, 1)
      assert.equal(created.created, new Date(now()).toISOString())
      assert.equal(created.lastModified, created.created)
      assert.deepEqual(await store.getUser(c, created.id), created)
      const other = await store.createUser(c, user('Grace'))
      assert.notEqual(other.id, created.id)
      assert.equal(other.externalId, undefined)
    }
  },
  {
    name: 'a resource id of another connection is exactly not found: read, update, delete, list, members',
    run: async ({ store, connection }) => {
      const [a, b] = [connection(), connection()]
      const ada = await store.createUser(a, user('ada'))
      const group = await store.createGroup(a, { displayName: 'Staff', attributes: {}, members: [ada.id] })
      assert.equal(await store.getUser(b, ada.id), undefined)
      assert.equal(await store.updateUser(b, ada.id, (current) => ({ ...current, active: false })), undefined)
      assert.equal(await store.deleteUser(b, ada.id), undefined)
      assert.equal(await store.getGroup(b, group.id), undefined)
      assert.equal(await store.updateGroup(b, group.id, (current) => ({ ...current, displayName: 'Renamed' })), undefined)
      assert.equal(await store.deleteGroup(b, group.id), false)
      assert.deepEqual(await store.groupMembers(b, group.id), [])
      assert.deepEqual(await store.groupsOfUser(b, ada.id), [])
      assert.equal((await store.listUsers(b, { filter: filter(`id eq "${ada.id}"`), startIndex: 1, count: 10 })).totalResults, 0)
      assert.equal((await store.listUsers(b, { startIndex: 1, count: 10 })).totalResults, 0)
      assert.deepEqual(await store.getUser(a, ada.id), ada, 'unchanged in its own connection')
      assert.deepEqual(await store.groupMembers(a, group.id), [ada.id])
    }
  },
  {
    name: 'userName is unique within a connection, case-insensitively, and free in another connection',
    run: async ({ store, connection }) => {
      const [a, b] = [connection(), connection()]
      await store.createUser(a, user('Bjensen'))
      await assert.rejects(store.createUser(a, user('bJENSEN')), conflict('userName'))
      const elsewhere = await store.createUser(b, user('bjensen'))
      assert.equal(elsewhere.userName, 'bjensen')
      assert.equal((await store.listUsers(a, { startIndex: 1, count: 10 })).totalResults, 1, 'the refused user was not stored')
    }
  },
  {
    name: 'a user\'s externalId and a linked identity are unique within a connection',
    run: async ({ store, connection }) => {
      const [a, b] = [connection(), connection()]
      const identity = { scheme: 'Entra', issuer: 'https://login.example.test/tenant/v2.0', subject: 'oid-1' }
      await store.createUser(a, user('one', { externalId: 'ext-1', identity }))
      await assert.rejects(store.createUser(a, user('two', { externalId: 'ext-1' })), conflict('externalId'))
      await assert.rejects(store.createUser(a, user('three', { identity })), conflict('identity'))
      await store.createUser(b, user('one', { externalId: 'ext-1', identity }))
      const linked = await store.findUsersByIdentity(identity)
      assert.deepEqual(linked.map((found) => [found.connection, found.userName]).sort(), [[a, 'one'], [b, 'one']].sort())
      assert.deepEqual(await store.findUsersByIdentity({ ...identity, subject: 'oid-2' }), [])
      assert.deepEqual(await store.findUsersByIdentity({ ...identity, scheme: 'Other' }), [])
    }
  },
  {
    name: 'an update applies the whole change, bumps version and lastModified, and reports the user before and after',
    run: async ({ store, connection, advance, now }) => {
      const c = connection()
      const created = await store.createUser(c, user('ada'))
      advance(1000)
      const update = await store.updateUser(c, created.id, (current) => ({ ...current, active: false, attributes: { ...current.attributes, title: 'Engineer' } }))
      assert.ok(update !== undefined)
      assert.equal(update.changed, true)
      assert.deepEqual(update.before, created)
      assert.equal(update.after.active, false)
      assert.equal(update.after.version, 2)
      assert.equal(update.after.lastModified, new Date(now()).toISOString())
      assert.equal(update.after.created, created.created)
      assert.deepEqual(update.after.attributes, { ...created.attributes, title: 'Engineer' })
      assert.deepEqual(await store.getUser(c, created.id), update.after)
    }
  },
  {
    name: 'an update that changes nothing writes nothing: version and lastModified kept',
    run: async ({ store, connection, advance }) => {
      const c = connection()
      const created = await store.createUser(c, user('ada', { externalId: 'x' }))
      advance(1000)
      const same = await store.updateUser(c, created.id, (current) => ({
        userName: current.userName, active: current.active, externalId: current.externalId, attributes: JSON.parse(JSON.stringify(current.attributes)) as Record<string, unknown>
      }))
      assert.equal(same?.changed, false)
      assert.deepEqual(same?.after, created)
      assert.equal((await store.updateUser(c, created.id, () => undefined))?.changed, false)
      assert.deepEqual(await store.getUser(c, created.id), created)
    }
  },
  {
    name: 'an update whose mutate throws changes nothing and the error reaches the caller',
    run: async ({ store, connection }) => {
      const c = connection()
      const created = await store.createUser(c, user('ada'))
      const refusal = new Error('a PATCH operation was refused')
      await assert.rejects(store.updateUser(c, created.id, () => { throw refusal }), (error) => error === refusal)
      assert.deepEqual(await store.getUser(c, created.id), created)
    }
  },
  {
    name: 'renaming to a taken userName is a conflict and changes nothing; a change of case of one\'s own name is not',
    run: async ({ store, connection }) => {
      const c = connection()
      const ada = await store.createUser(c, user('ada'))
      await store.createUser(c, user('grace'))
      await assert.rejects(store.updateUser(c, ada.id, (current) => ({ ...current, userName: 'GRACE', active: false })), conflict('userName'))
      assert.deepEqual(await store.getUser(c, ada.id), ada)
      const recased = await store.updateUser(c, ada.id, (current) => ({ ...current, userName: 'Ada' }))
      assert.equal(recased?.after.userName, 'Ada')
      assert.deepEqual(await userNames(store, c, 'userName eq "ADA"'), ['Ada'])
    }
  },
  {
    name: 'concurrent updates of one user are serialised: none is lost',
    run: async ({ store, connection }) => {
      const c = connection()
      const created = await store.createUser(c, user('counter', { attributes: { nickName: '0' } }))
      await Promise.all(Array.from({ length: 8 }, async () => await store.updateUser(c, created.id, (current) => ({
        ...current, attributes: { nickName: String(Number(current.attributes.nickName) + 1) }
      }))))
      const final = await store.getUser(c, created.id)
      assert.equal(final?.attributes.nickName, '8')
      assert.equal(final?.version, 9)
    }
  },
  {
    name: 'concurrent creations of one userName: exactly one succeeds',
    run: async ({ store, connection }) => {
      const c = connection()
      const results = await Promise.allSettled(Array.from({ length: 4 }, async (_, index) => await store.createUser(c, user(index % 2 === 0 ? 'same' : 'SAME'))))
      assert.equal(results.filter((result) => result.status === 'fulfilled').length, 1)
      for (const result of results) if (result.status === 'rejected') conflict('userName')(result.reason)
    }
  },
  {
    name: 'a store never holds a password, and refuses an empty userName',
    run: async ({ store, connection }) => {
      const c = connection()
      await assert.rejects(store.createUser(c, user('ada', { attributes: { password: 'hunter2' } })), invalid('password'))
      await assert.rejects(store.createUser(c, user('')), invalid('userName'))
      const ada = await store.createUser(c, user('ada'))
      await assert.rejects(store.updateUser(c, ada.id, (current) => ({ ...current, attributes: { Password: 'x' } })), invalid('password'))
      assert.equal((await store.listUsers(c, { startIndex: 1, count: 10 })).totalResults, 1)
    }
  },
  {
    name: 'what a caller does to a returned user never changes the stored one',
    run: async ({ store, connection }) => {
      const c = connection()
      const created = await store.createUser(c, user('ada'))
      const copy = structuredClone(created)
      try { (created.attributes as Record<string, unknown>).title = 'Changed' } catch {}
      assert.deepEqual(await store.getUser(c, created.id), copy)
    }
  },
  {
    name: 'a deleted user takes its memberships with it and reports the groups it left',
    run: async ({ store, connection }) => {
      const c = connection()
      const ada = await store.createUser(c, user('ada'))
      const grace = await store.createUser(c, user('grace'))
      const one = await store.createGroup(c, { displayName: 'One', attributes: {}, members: [ada.id, grace.id] })
      const two = await store.createGroup(c, { displayName: 'Two', attributes: {}, members: [ada.id] })
      const deletion = await store.deleteUser(c, ada.id)
      assert.deepEqual(deletion?.user, ada)
      assert.deepEqual(deletion?.groups, [one.id, two.id].sort())
      assert.equal(await store.getUser(c, ada.id), undefined)
      assert.equal(await store.deleteUser(c, ada.id), undefined)
      assert.deepEqual(await store.groupMembers(c, one.id), [grace.id])
      assert.deepEqual(await store.groupMembers(c, two.id), [])
    }
  }
]

const LISTING: DirectoryStoreCase[] = [
  {
    name: 'listing answers the common filters exactly: id, userName (any case), externalId, active with lastModified',
    run: async ({ store, connection, advance, now }) => {
      const c = connection()
      const other = connection()
      const ada = await store.createUser(c, user('Ada', { externalId: 'e-ada' }))
      await store.createUser(other, user('Ada', { externalId: 'e-ada' }))
      advance(60_000)
      const since = new Date(now()).toISOString()
      const grace = await store.createUser(c, user('Grace', { externalId: 'e-grace' }))
      await store.createUser(c, user('Alan', { active: false }))
      advance(60_000)
      await store.updateUser(c, ada.id, (current) => ({ ...current, attributes: { ...current.attributes, title: 'Countess' } }))
      assert.deepEqual(await userNames(store, c, `id eq "${grace.id}"`), ['Grace'])
      assert.deepEqual(await userNames(store, c, 'userName eq "ADA"'), ['Ada'])
      assert.deepEqual(await userNames(store, c, 'userName eq "Ad"'), [])
      assert.deepEqual(await userNames(store, c, 'externalId eq "e-grace"'), ['Grace'])
      assert.deepEqual(await userNames(store, c, 'externalId eq "E-GRACE"'), [], 'externalId is case-exact')
      assert.deepEqual(await userNames(store, c, `active eq true and meta.lastModified ge "${since}"`), ['Ada', 'Grace'])
      assert.deepEqual(await userNames(store, c, `active eq false and meta.lastModified ge "${since}"`), ['Alan'])
      assert.deepEqual(await userNames(store, c, `meta.lastModified gt "${grace.lastModified}"`), ['Ada'])
      assert.deepEqual(await userNames(store, c, `meta.lastModified lt "${since}"`), [])
      assert.deepEqual(await userNames(store, c, 'active eq false'), ['Alan'])
      assert.deepEqual(await userNames(store, c, `userName eq "ada" or userName eq "alan" or id eq "${grace.id}"`), ['Ada', 'Alan', 'Grace'])
      assert.deepEqual(await userNames(store, c, 'userName eq "ada" and active eq false'), [])
    }
  },
  {
    name: 'listing answers any parsed filter: substring, presence, not, value paths, extension attributes, dates',
    run: async ({ store, connection }) => {
      const c = connection()
      await store.createUser(c, user('ada', { attributes: { emails: [{ value: 'ada@work.example', type: 'work' }, { value: 'ada@home.example', type: 'home' }], title: 'Countess' } }))
      await store.createUser(c, user('grace', { attributes: { emails: [{ value: 'grace@home.example', type: 'home' }], 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'Navy', manager: { value: 'm-1' } } } }))
      await store.createUser(c, user('alan', { attributes: {} }))
      assert.deepEqual(await userNames(store, c, 'emails[type eq "work" and value co "@WORK."]'), ['ada'])
      assert.deepEqual(await userNames(store, c, 'emails co "home.example"'), ['ada', 'grace'])
      assert.deepEqual(await userNames(store, c, 'emails.value ew ".example" and not (emails[type eq "work"])'), ['grace'])
      assert.deepEqual(await userNames(store, c, 'title pr'), ['ada'])
      assert.deepEqual(await userNames(store, c, 'not (title pr)'), ['alan', 'grace'])
      assert.deepEqual(await userNames(store, c, 'title eq null'), ['alan', 'grace'])
      assert.deepEqual(await userNames(store, c, 'title ne "Countess"'), ['alan', 'grace'])
      assert.deepEqual(await userNames(store, c, 'userName sw "A" or userName ew "E"'), ['ada', 'alan', 'grace'])
      assert.deepEqual(await userNames(store, c, 'userName gt "b"'), ['grace'])
      assert.deepEqual(await userNames(store, c, 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "navy"'), ['grace'])
      assert.deepEqual(await userNames(store, c, 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value eq "m-1"'), ['grace'])
      assert.deepEqual(await userNames(store, c, 'meta.created ge "2000-01-01T00:00:00Z" and meta.resourceType eq "User"'), ['ada', 'alan', 'grace'])
    }
  },
  {
    name: 'paging: startIndex and count over creation order, totalResults counts every match, no resource twice',
    run: async ({ store, connection, advance }) => {
      const c = connection()
      const created: DirectoryUser[] = []
      for (let index = 0; index < 12; index++) {
        created.push(await store.createUser(c, user(`user-${String(index).padStart(2, '0')}`, { active: index % 3 !== 0 })))
        advance(10)
      }
      const all = await store.listUsers(c, { startIndex: 1, count: 5 })
      assert.equal(all.totalResults, 12)
      assert.deepEqual(all.resources.map((found) => found.id), created.slice(0, 5).map((found) => found.id))
      const seen: string[] = []
      for (let startIndex = 1; startIndex <= 12; startIndex += 5) {
        const page = await store.listUsers(c, { filter: filter('userName sw "user"'), startIndex, count: 5 })
        assert.equal(page.totalResults, 12)
        assert.equal(page.startIndex, startIndex)
        seen.push(...page.resources.map((found) => found.id))
      }
      assert.deepEqual(seen, created.map((found) => found.id))
      const active = await store.listUsers(c, { filter: filter('active eq true'), startIndex: 3, count: 2 })
      assert.equal(active.totalResults, 8)
      assert.deepEqual(active.resources.map((found) => found.userName), ['user-04', 'user-05'])
      const counted = await store.listUsers(c, { filter: filter('userName co "-1"'), startIndex: 1, count: 0 })
      assert.deepEqual([counted.totalResults, counted.resources.length], [2, 0])
      const beyond = await store.listUsers(c, { startIndex: 50, count: 5 })
      assert.deepEqual([beyond.totalResults, beyond.resources.length], [12, 0])
      const clamped = await store.listUsers(c, { startIndex: -3, count: 1 })
      assert.deepEqual([clamped.startIndex, clamped.resources[0]?.id], [1, created[0]?.id])
    }
  },
  {
    // More users than a SQL store's scan batch (500): the count and the page span batches.
    name: 'a filter no index serves reads the whole connection, in batches, and still counts exactly',
    run: async ({ store, connection }) => {
      const c = connection()
      const noise = connection()
      for (let index = 0; index < 510; index++) {
        await store.createUser(c, user(`bulk-${index}`, { attributes: index % 100 === 7 ? { title: 'Match' } : {} }))
      }
      await store.createUser(noise, user('bulk-x', { attributes: { title: 'Match' } }))
      const page = await store.listUsers(c, { filter: filter('title eq "match"'), startIndex: 2, count: 3 })
      assert.equal(page.totalResults, 6)
      assert.deepEqual(page.resources.map((found) => found.userName), ['bulk-107', 'bulk-207', 'bulk-307'])
    }
  }
]

const GROUPS: DirectoryStoreCase[] = [
  {
    name: 'a group is created with members of its own connection only; another connection\'s user is refused and nothing is stored',
    run: async ({ store, connection }) => {
      const [a, b] = [connection(), connection()]
      const ada = await store.createUser(a, user('ada'))
      const stranger = await store.createUser(b, user('stranger'))
      await assert.rejects(store.createGroup(a, { displayName: 'Staff', attributes: {}, members: [ada.id, stranger.id] }), invalid('members'))
      assert.equal((await store.listGroups(a, { startIndex: 1, count: 10 })).totalResults, 0)
      const group = await store.createGroup(a, { displayName: 'Staff', externalId: 'g-1', attributes: {}, members: [ada.id, ada.id] })
      assert.equal(group.version, 1)
      assert.deepEqual(await store.getGroup(a, group.id), group)
      assert.deepEqual(await store.groupMembers(a, group.id), [ada.id])
      assert.deepEqual((await store.groupsOfUser(a, ada.id)).map((found) => found.id), [group.id])
    }
  },
  {
    name: 'a group update applies replace, add and remove atomically and reports who was added and removed',
    run: async ({ store, connection, advance }) => {
      const [c, other] = [connection(), connection()]
      const [ada, grace, alan] = await Promise.all(['ada', 'grace', 'alan'].map(async (name) => await store.createUser(c, user(name))))
      const stranger = await store.createUser(other, user('stranger'))
      assert.ok(ada !== undefined && grace !== undefined && alan !== undefined)
      const group = await store.createGroup(c, { displayName: 'Staff', attributes: {}, members: [ada.id, grace.id] })
      advance(1000)
      const update = await store.updateGroup(c, group.id, (current) => ({ ...current, displayName: 'Crew', members: { add: [alan.id], remove: [ada.id] } }))
      assert.equal(update?.changed, true)
      assert.deepEqual(update?.added, [alan.id])
      assert.deepEqual(update?.removed, [ada.id])
      assert.equal(update?.after.version, 2)
      assert.equal(update?.after.displayName, 'Crew')
      assert.deepEqual(await store.groupMembers(c, group.id), [alan.id, grace.id].sort())
      const refused = await store.getGroup(c, group.id)
      await assert.rejects(store.updateGroup(c, group.id, (current) => ({ ...current, displayName: 'Hijacked', members: { add: [stranger.id] } })), invalid('members'))
      assert.deepEqual(await store.getGroup(c, group.id), refused, 'the whole change was refused')
      assert.deepEqual(await store.groupMembers(c, group.id), [alan.id, grace.id].sort())
      const replaced = await store.updateGroup(c, group.id, (current) => ({ ...current, members: { replace: [ada.id] } }))
      assert.deepEqual([replaced?.added, replaced?.removed], [[ada.id], [alan.id, grace.id].sort()])
      const unchanged = await store.updateGroup(c, group.id, (current) => ({ ...current, members: { add: [ada.id] } }))
      assert.deepEqual([unchanged?.changed, unchanged?.after.version], [false, replaced?.after.version])
      assert.deepEqual(await store.groupMembers(other, group.id), [])
    }
  },
  {
    name: 'groups are listed by displayName (any case), externalId, id and membership; deleting a group keeps its users',
    run: async ({ store, connection }) => {
      const c = connection()
      const ada = await store.createUser(c, user('ada'))
      const staff = await store.createGroup(c, { displayName: 'Staff', externalId: 'g-staff', attributes: {}, members: [ada.id] })
      const admins = await store.createGroup(c, { displayName: 'Admins', attributes: {} })
      const names = async (text: string): Promise<string[]> =>
        (await store.listGroups(c, { filter: parseScimFilter('Group', text), startIndex: 1, count: 10 })).resources.map((group) => group.displayName).sort()
      assert.deepEqual(await names('displayName eq "STAFF"'), ['Staff'])
      assert.deepEqual(await names('externalId eq "g-staff"'), ['Staff'])
      assert.deepEqual(await names(`id eq "${admins.id}"`), ['Admins'])
      assert.deepEqual(await names(`members eq "${ada.id}"`), ['Staff'])
      assert.deepEqual(await names(`id eq "${staff.id}" and members[value eq "${ada.id}"]`), ['Staff'])
      assert.deepEqual(await names('displayName sw "a"'), ['Admins'])
      assert.equal(await store.deleteGroup(c, staff.id), true)
      assert.equal(await store.deleteGroup(c, staff.id), false)
      assert.deepEqual(await store.groupsOfUser(c, ada.id), [])
      assert.deepEqual(await store.getUser(c, ada.id), ada)
    }
  }
]

const TOKENS: DirectoryStoreCase[] = [
  {
    name: 'two tokens may be active at once (rotation); a third is a conflict until one is revoked or expires',
    run: async ({ store, connection, advance, now }) => {
      const c = connection()
      const first = await store.addToken(c, { id: 't1', digest: 'sha256:one' })
      advance(10)
      await store.addToken(c, { id: 't2', digest: 'sha256:two', expires: new Date(now() + 60_000).toISOString() })
      await assert.rejects(store.addToken(c, { id: 't3', digest: 'sha256:three' }), conflict('activeTokens'))
      assert.deepEqual(first, { connection: c, id: 't1', digest: 'sha256:one', created: new Date(now() - 10).toISOString() })
      assert.equal(await store.revokeToken(c, 't1'), true)
      assert.equal(await store.revokeToken(c, 't1'), false)
      advance(10)
      await store.addToken(c, { id: 't3', digest: 'sha256:three' })
      assert.deepEqual((await store.activeTokens(c)).map((token) => token.id), ['t2', 't3'])
      advance(60_000)
      assert.deepEqual((await store.activeTokens(c)).map((token) => token.id), ['t3'], 't2 expired')
      advance(10)
      await store.addToken(c, { id: 't4', digest: 'sha256:four' })
      const all = await store.listTokens(c)
      assert.deepEqual(all.map((token) => token.id), ['t1', 't2', 't3', 't4'])
      assert.ok(all[0]?.revoked !== undefined)
      assert.equal(all[1]?.revoked, undefined)
    }
  },
  {
    name: 'tokens are scoped by connection: another connection\'s token is neither listed nor revoked, and counts for none',
    run: async ({ store, connection }) => {
      const [a, b] = [connection(), connection()]
      await store.addToken(a, { id: 'same', digest: 'sha256:a' })
      await store.addToken(a, { id: 'a2', digest: 'sha256:a2' })
      await store.addToken(b, { id: 'same', digest: 'sha256:b' })
      await store.addToken(b, { id: 'b2', digest: 'sha256:b2' })
      assert.equal(await store.revokeToken(b, 'a2'), false)
      assert.deepEqual((await store.activeTokens(a)).map((token) => token.digest), ['sha256:a', 'sha256:a2'])
      assert.deepEqual((await store.activeTokens(b)).map((token) => token.digest), ['sha256:b', 'sha256:b2'])
      await store.revokeToken(a, 'same')
      await assert.rejects(store.addToken(a, { id: 'a2', digest: 'sha256:again' }), invalid('id'))
      assert.deepEqual((await store.activeTokens(b)).map((token) => token.id), ['same', 'b2'])
    }
  },
  {
    name: 'concurrent token additions never leave more than two active',
    run: async ({ store, connection }) => {
      const c = connection()
      const results = await Promise.allSettled(Array.from({ length: 5 }, async (_, index) => await store.addToken(c, { id: `t${index}`, digest: `sha256:${index}` })))
      assert.equal(results.filter((result) => result.status === 'fulfilled').length, 2)
      assert.equal((await store.activeTokens(c)).length, 2)
    }
  }
]

const CONNECTIONS: DirectoryStoreCase[] = [
  {
    name: 'deleting a connection removes its users, groups, memberships and tokens, and nothing of another',
    run: async ({ store, connection }) => {
      const [a, b] = [connection(), connection()]
      for (const c of [a, b]) {
        const ada = await store.createUser(c, user('ada', { identity: { scheme: 'S', issuer: 'https://issuer.example', subject: `sub-${c}` } }))
        await store.createGroup(c, { displayName: 'Staff', attributes: {}, members: [ada.id] })
        await store.addToken(c, { id: 't', digest: 'sha256:x' })
      }
      await store.deleteConnection(a)
      assert.equal((await store.listUsers(a, { startIndex: 1, count: 10 })).totalResults, 0)
      assert.equal((await store.listGroups(a, { startIndex: 1, count: 10 })).totalResults, 0)
      assert.deepEqual(await store.listTokens(a), [])
      assert.deepEqual(await store.findUsersByIdentity({ scheme: 'S', issuer: 'https://issuer.example', subject: `sub-${a}` }), [])
      assert.equal((await store.listUsers(b, { startIndex: 1, count: 10 })).totalResults, 1)
      assert.equal((await store.listGroups(b, { startIndex: 1, count: 10 })).totalResults, 1)
      assert.equal((await store.listTokens(b)).length, 1)
    }
  }
]

/**
 * Every conformance case, runner-free.
 *
 * @public @experimental
 */
export function directoryStoreCases (): readonly DirectoryStoreCase[] {
  return [...USERS, ...LISTING, ...GROUPS, ...TOKENS, ...CONNECTIONS]
}

/**
 * Runs the conformance cases with `node:test` against the store `create` returns (created once,
 * with the suite's clock, and closed after the suite).
 *
 * @public @experimental
 */
export function describeDirectoryStore (name: string, create: (options: DirectoryStoreFactoryOptions) => Promise<DirectoryStore>, options: { readonly skip?: string | false } = {}): void {
  describe(`${name} directory store conformance`, { skip: options.skip ?? false }, () => {
    let clock = Date.parse('2026-01-01T00:00:00.000Z')
    let store: DirectoryStore | undefined
    const context = (): DirectoryStoreCaseContext => {
      if (store === undefined) throw new Error('the store was not created')
      return { store, connection: () => `c-${randomUUID()}`, now: () => clock, advance: (ms) => { clock += ms } }
    }
    before(async () => { store = await create({ now: () => clock }) })
    after(async () => { await store?.close() })
    for (const entry of directoryStoreCases()) test(entry.name, async () => { await entry.run(context()) })
  })
}
