/**
 * The directory store in process memory: the embedded store on a Node.js without `node:sqlite`
 * (20; 22 before 22.13), and in tests. Everything is lost on restart (the customers' directories
 * provision again on their next cycle, but their connection tokens must be issued again), and it
 * serves one instance only. Indexed as the SQL stores are (id, userName, externalId, a group's
 * displayName, active with lastModified), so the common filters read no whole connection.
 *
 * Records are deep-frozen copies: nothing a caller holds can change what is stored. Each call
 * runs to completion synchronously, so every call is atomic.
 */
import { foldCase } from './attributes.js'
import { DirectoryConflictError, DirectoryInvalidValueError } from './directory-errors.js'
import {
  MAX_ACTIVE_CONNECTION_TOKENS, type ConnectionToken, type ConnectionTokenInput, type DirectoryGroup, type DirectoryGroupChange, type DirectoryGroupInput,
  type DirectoryGroupUpdate, type DirectoryPage, type DirectoryQuery, type DirectoryStore, type DirectoryUpdate, type DirectoryUser, type DirectoryUserDeletion,
  type DirectoryUserInput, type LinkedIdentity
} from './directory-store.js'
import { groupMatches, userMatches } from './filter-evaluation.js'
import { ModifiedIndex } from './modified-index.js'
import { planQuery, type AccessPath, type KeyAttribute } from './query-plan.js'
import {
  applyMembers, checkConnection, checkGroupInput, checkTokenInput, checkUserInput, isoOf, modifiedAt, newGroupRecord, newId, pageOf, stableJson, userFields
} from './records.js'

interface Entry<T> {
  record: T
  readonly seq: number
  readonly createdMs: number
  modifiedMs: number
}

/** One connection's records and indexes. */
class Connection {
  readonly users = new Map<string, Entry<DirectoryUser>>()
  readonly userNames = new Map<string, string>()
  readonly externalIds = new Map<string, string>()
  readonly identities = new Map<string, string>()
  readonly usersModified = { true: new ModifiedIndex(), false: new ModifiedIndex() }
  readonly groups = new Map<string, Entry<DirectoryGroup>>()
  readonly groupNames = new Map<string, Set<string>>()
  readonly groupExternalIds = new Map<string, Set<string>>()
  readonly groupsModified = new ModifiedIndex()
  readonly members = new Map<string, Set<string>>()
  readonly memberOf = new Map<string, Set<string>>()
  tokens: ConnectionToken[] = []
}

const identityKey = (identity: LinkedIdentity): string => JSON.stringify([identity.scheme, identity.issuer, identity.subject])

function deepFreeze<T> (value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const item of Object.values(value)) deepFreeze(item)
    Object.freeze(value)
  }
  return value
}

const frozenCopy = <T>(value: T): T => deepFreeze(structuredClone(value))

function addTo (map: Map<string, Set<string>>, key: string, value: string): void {
  let set = map.get(key)
  if (set === undefined) map.set(key, set = new Set())
  set.add(value)
}

function removeFrom (map: Map<string, Set<string>>, key: string, value: string): void {
  const set = map.get(key)
  set?.delete(value)
  if (set?.size === 0) map.delete(key)
}

/** The memory store's options (tests pass a clock). @public @experimental */
export interface MemoryDirectoryStoreOptions {
  readonly now?: () => number
}

/**
 * The directory store in memory (see the module comment).
 *
 * @public @experimental
 */
export class MemoryDirectoryStore implements DirectoryStore {
  readonly provider = 'Embedded'
  readonly #connections = new Map<string, Connection>()
  /** Linked identities across connections: identity key to `[connection, id]` pairs. */
  readonly #identities = new Map<string, Set<string>>()
  readonly #now: () => number
  #seq = 0

  constructor (options: MemoryDirectoryStoreOptions = {}) {
    this.#now = options.now ?? Date.now
  }

  #connection (name: string, create = false): Connection | undefined {
    checkConnection(name)
    let connection = this.#connections.get(name)
    if (connection === undefined && create) this.#connections.set(name, connection = new Connection())
    return connection
  }

  // ------------------------------------------------------------------------------------------ users

  #checkUserUnique (connection: Connection, input: DirectoryUserInput, id: string | undefined): void {
    const taken = (map: Map<string, string>, key: string | undefined): boolean => key !== undefined && map.has(key) && map.get(key) !== id
    if (taken(connection.userNames, foldCase(input.userName))) throw new DirectoryConflictError('userName')
    if (taken(connection.externalIds, input.externalId)) throw new DirectoryConflictError('externalId')
    if (taken(connection.identities, input.identity === undefined ? undefined : identityKey(input.identity))) throw new DirectoryConflictError('identity')
  }

  #indexUser (connectionName: string, connection: Connection, entry: Entry<DirectoryUser>, add: boolean): void {
    const { record: user } = entry
    const set = <K, V>(map: Map<K, V>, key: K | undefined, value: V): void => {
      if (key === undefined) return
      if (add) map.set(key, value)
      else map.delete(key)
    }
    set(connection.userNames, foldCase(user.userName), user.id)
    set(connection.externalIds, user.externalId, user.id)
    const identity = user.identity === undefined ? undefined : identityKey(user.identity)
    set(connection.identities, identity, user.id)
    if (identity !== undefined) (add ? addTo : removeFrom)(this.#identities, identity, JSON.stringify([connectionName, user.id]))
    const modified = connection.usersModified[user.active ? 'true' : 'false']
    if (add) modified.add(entry.modifiedMs, entry.seq, user.id)
    else modified.remove(entry.modifiedMs, entry.seq)
  }

  async createUser (connectionName: string, input: DirectoryUserInput): Promise<DirectoryUser> {
    checkUserInput(input)
    const connection = this.#connection(connectionName, true) as Connection
    this.#checkUserUnique(connection, input, undefined)
    const now = this.#now()
    const user: DirectoryUser = frozenCopy({ connection: connectionName, id: newId(), ...userFields(input), created: isoOf(now), lastModified: isoOf(now), version: 1 })
    const entry = { record: user, seq: ++this.#seq, createdMs: now, modifiedMs: now }
    connection.users.set(user.id, entry)
    this.#indexUser(connectionName, connection, entry, true)
    return user
  }

  async getUser (connection: string, id: string): Promise<DirectoryUser | undefined> {
    return this.#connection(connection)?.users.get(id)?.record
  }

  async updateUser (connectionName: string, id: string, mutate: (current: DirectoryUser) => DirectoryUserInput | undefined): Promise<DirectoryUpdate<DirectoryUser> | undefined> {
    const connection = this.#connection(connectionName)
    const entry = connection?.users.get(id)
    if (connection === undefined || entry === undefined) return undefined
    const before = entry.record
    const change = mutate(before)
    if (change === undefined) return { before, after: before, changed: false }
    checkUserInput(change)
    const fields = userFields(change)
    const { connection: _c, id: _i, created: _cr, lastModified: _l, version: _v, ...current } = before
    if (stableJson(fields) === stableJson(current)) return { before, after: before, changed: false }
    this.#checkUserUnique(connection, fields, id)
    this.#indexUser(connectionName, connection, entry, false)
    entry.modifiedMs = modifiedAt(this.#now(), entry.modifiedMs)
    entry.record = frozenCopy({ connection: connectionName, id, ...fields, created: before.created, lastModified: isoOf(entry.modifiedMs), version: before.version + 1 })
    this.#indexUser(connectionName, connection, entry, true)
    return { before, after: entry.record, changed: true }
  }

  async deleteUser (connectionName: string, id: string): Promise<DirectoryUserDeletion | undefined> {
    const connection = this.#connection(connectionName)
    const entry = connection?.users.get(id)
    if (connection === undefined || entry === undefined) return undefined
    this.#indexUser(connectionName, connection, entry, false)
    connection.users.delete(id)
    const groups = [...connection.memberOf.get(id) ?? []].sort()
    for (const group of groups) removeFrom(connection.members, group, id)
    connection.memberOf.delete(id)
    return { user: entry.record, groups }
  }

  async listUsers (connectionName: string, query: DirectoryQuery): Promise<DirectoryPage<DirectoryUser>> {
    const connection = this.#connection(connectionName)
    const page = pageOf(query)
    if (connection === undefined) return { totalResults: 0, startIndex: page.startIndex, resources: [] }
    const plan = planQuery('User', query.filter)
    const candidates = this.#userCandidates(connection, plan.path)
    const filter = query.filter
    return paged(candidates, connection.users, plan.exact || filter === undefined ? undefined : (user) => userMatches(user, filter), page)
  }

  #userCandidates (connection: Connection, path: AccessPath): Iterable<string> | undefined {
    switch (path.kind) {
      case 'all':
      case 'scan': return undefined
      case 'keys': return keyIds(path.values, (value) => {
        const id = lookupKey(connection, path.key, value)
        return id === undefined ? [] : [id]
      })
      case 'modified': {
        const indexes = path.active === undefined ? [connection.usersModified.true, connection.usersModified.false] : [connection.usersModified[path.active ? 'true' : 'false']]
        return indexes.flatMap((index) => [...index.range(path.from, path.to)])
      }
    }
  }

  async findUsersByIdentity (identity: LinkedIdentity): Promise<DirectoryUser[]> {
    const found: DirectoryUser[] = []
    for (const pair of this.#identities.get(identityKey(identity)) ?? []) {
      const [connection, id] = JSON.parse(pair) as [string, string]
      const user = this.#connections.get(connection)?.users.get(id)?.record
      if (user !== undefined) found.push(user)
    }
    return found.sort((a, b) => a.connection < b.connection ? -1 : a.connection > b.connection ? 1 : 0)
  }

  // ----------------------------------------------------------------------------------------- groups

  #indexGroup (connection: Connection, entry: Entry<DirectoryGroup>, add: boolean): void {
    const { record: group } = entry
    const change = add ? addTo : removeFrom
    change(connection.groupNames, foldCase(group.displayName), group.id)
    if (group.externalId !== undefined) change(connection.groupExternalIds, group.externalId, group.id)
    if (add) connection.groupsModified.add(entry.modifiedMs, entry.seq, group.id)
    else connection.groupsModified.remove(entry.modifiedMs, entry.seq)
  }

  #checkMembers (connection: Connection, members: readonly string[]): void {
    if (members.some((member) => !connection.users.has(member))) throw new DirectoryInvalidValueError('members', 'a member is not a user of this connection')
  }

  #setMembers (connection: Connection, groupId: string, added: readonly string[], removed: readonly string[]): void {
    for (const user of added) {
      addTo(connection.members, groupId, user)
      addTo(connection.memberOf, user, groupId)
    }
    for (const user of removed) {
      removeFrom(connection.members, groupId, user)
      removeFrom(connection.memberOf, user, groupId)
    }
  }

  async createGroup (connectionName: string, input: DirectoryGroupInput): Promise<DirectoryGroup> {
    checkGroupInput({ ...input, members: { replace: input.members ?? [] } })
    const connection = this.#connection(connectionName, true) as Connection
    const members = [...new Set(input.members ?? [])]
    this.#checkMembers(connection, members)
    const now = this.#now()
    const group: DirectoryGroup = frozenCopy(newGroupRecord(connectionName, input, now))
    const entry = { record: group, seq: ++this.#seq, createdMs: now, modifiedMs: now }
    connection.groups.set(group.id, entry)
    this.#indexGroup(connection, entry, true)
    this.#setMembers(connection, group.id, members, [])
    return group
  }

  async getGroup (connection: string, id: string): Promise<DirectoryGroup | undefined> {
    return this.#connection(connection)?.groups.get(id)?.record
  }

  async updateGroup (connectionName: string, id: string, mutate: (current: DirectoryGroup) => DirectoryGroupChange | undefined): Promise<DirectoryGroupUpdate | undefined> {
    const connection = this.#connection(connectionName)
    const entry = connection?.groups.get(id)
    if (connection === undefined || entry === undefined) return undefined
    const before = entry.record
    const change = mutate(before)
    if (change === undefined) return { before, after: before, changed: false, added: [], removed: [] }
    checkGroupInput(change)
    const { added, removed } = applyMembers([...connection.members.get(id) ?? []].sort(), change.members)
    this.#checkMembers(connection, added)
    const fields = { ...(change.externalId === undefined ? {} : { externalId: change.externalId }), displayName: change.displayName, attributes: change.attributes }
    const { connection: _c, id: _i, created: _cr, lastModified: _l, version: _v, ...current } = before
    if (stableJson(fields) === stableJson(current) && added.length === 0 && removed.length === 0) return { before, after: before, changed: false, added, removed }
    this.#indexGroup(connection, entry, false)
    entry.modifiedMs = modifiedAt(this.#now(), entry.modifiedMs)
    entry.record = frozenCopy({ connection: connectionName, id, ...fields, created: before.created, lastModified: isoOf(entry.modifiedMs), version: before.version + 1 })
    this.#indexGroup(connection, entry, true)
    this.#setMembers(connection, id, added, removed)
    return { before, after: entry.record, changed: true, added, removed }
  }

  async deleteGroup (connectionName: string, id: string): Promise<boolean> {
    const connection = this.#connection(connectionName)
    const entry = connection?.groups.get(id)
    if (connection === undefined || entry === undefined) return false
    this.#indexGroup(connection, entry, false)
    connection.groups.delete(id)
    this.#setMembers(connection, id, [], [...connection.members.get(id) ?? []])
    return true
  }

  async listGroups (connectionName: string, query: DirectoryQuery): Promise<DirectoryPage<DirectoryGroup>> {
    const connection = this.#connection(connectionName)
    const page = pageOf(query)
    if (connection === undefined) return { totalResults: 0, startIndex: page.startIndex, resources: [] }
    const plan = planQuery('Group', query.filter)
    const filter = query.filter
    const membersOf = (group: DirectoryGroup): string[] => plan.needsMembers ? [...connection.members.get(group.id) ?? []] : []
    return paged(this.#groupCandidates(connection, plan.path), connection.groups,
      plan.exact || filter === undefined ? undefined : (group) => groupMatches(group, filter, membersOf(group)), page)
  }

  #groupCandidates (connection: Connection, path: AccessPath): Iterable<string> | undefined {
    switch (path.kind) {
      case 'all':
      case 'scan': return undefined
      case 'keys': return keyIds(path.values, (value) => {
        if (path.key === 'id') return connection.groups.has(value) ? [value] : []
        return [...(path.key === 'displayName' ? connection.groupNames : connection.groupExternalIds).get(value) ?? []]
      })
      case 'modified': return path.active === undefined ? [...connection.groupsModified.range(path.from, path.to)] : []
    }
  }

  async groupMembers (connection: string, groupId: string): Promise<string[]> {
    return [...this.#connection(connection)?.members.get(groupId) ?? []].sort()
  }

  async groupsOfUser (connectionName: string, userId: string): Promise<DirectoryGroup[]> {
    const connection = this.#connection(connectionName)
    if (connection === undefined) return []
    return [...connection.memberOf.get(userId) ?? []].sort().flatMap((id) => {
      const group = connection.groups.get(id)?.record
      return group === undefined ? [] : [group]
    })
  }

  // ----------------------------------------------------------------------------------------- tokens

  #isActive (token: ConnectionToken, now: number): boolean {
    return token.revoked === undefined && (token.expires === undefined || Date.parse(token.expires) > now)
  }

  async addToken (connectionName: string, input: ConnectionTokenInput): Promise<ConnectionToken> {
    checkTokenInput(input)
    const connection = this.#connection(connectionName, true) as Connection
    const now = this.#now()
    if (connection.tokens.some((token) => token.id === input.id)) throw new DirectoryInvalidValueError('id', 'a token with this id exists')
    if (connection.tokens.filter((token) => this.#isActive(token, now)).length >= MAX_ACTIVE_CONNECTION_TOKENS) throw new DirectoryConflictError('activeTokens')
    const token: ConnectionToken = frozenCopy({
      connection: connectionName,
      id: input.id,
      digest: input.digest,
      created: isoOf(now),
      ...(input.expires === undefined ? {} : { expires: isoOf(Date.parse(input.expires)) })
    })
    connection.tokens.push(token)
    return token
  }

  async listTokens (connection: string): Promise<ConnectionToken[]> {
    return [...this.#connection(connection)?.tokens ?? []]
  }

  async activeTokens (connection: string): Promise<ConnectionToken[]> {
    const now = this.#now()
    return (this.#connection(connection)?.tokens ?? []).filter((token) => this.#isActive(token, now))
  }

  async revokeToken (connectionName: string, id: string): Promise<boolean> {
    const connection = this.#connection(connectionName)
    const index = connection?.tokens.findIndex((token) => token.id === id && token.revoked === undefined) ?? -1
    if (connection === undefined || index === -1) return false
    connection.tokens[index] = frozenCopy({ ...connection.tokens[index] as ConnectionToken, revoked: isoOf(this.#now()) })
    return true
  }

  async deleteConnection (connectionName: string): Promise<void> {
    const connection = this.#connection(connectionName)
    if (connection === undefined) return
    for (const entry of connection.users.values()) this.#indexUser(connectionName, connection, entry, false)
    this.#connections.delete(connectionName)
  }

  async close (): Promise<void> {}
}

function lookupKey (connection: Connection, key: KeyAttribute, value: string): string | undefined {
  switch (key) {
    case 'id': return connection.users.has(value) ? value : undefined
    case 'userName': return connection.userNames.get(value)
    case 'externalId': return connection.externalIds.get(value)
    default: return undefined
  }
}

function keyIds (values: readonly string[], idsOf: (value: string) => string[]): string[] {
  return [...new Set(values.flatMap(idsOf))]
}

/**
 * One page of `records` (in creation order): of the `candidates` ids when an index gave them
 * (every record otherwise), those `matches` accepts (all when undefined: the plan was exact).
 */
function paged<T> (candidates: Iterable<string> | undefined, records: Map<string, Entry<T>>, matches: ((record: T) => boolean) | undefined, page: { offset: number, limit: number, startIndex: number }): DirectoryPage<T> {
  let entries: Iterable<Entry<T>>
  if (candidates === undefined) entries = records.values()
  else {
    const found: Array<Entry<T>> = []
    for (const id of candidates) {
      const entry = records.get(id)
      if (entry !== undefined) found.push(entry)
    }
    entries = found.sort((a, b) => a.seq - b.seq)
  }
  if (matches === undefined && candidates === undefined) {
    // Every record, in creation order: count without evaluating.
    return { totalResults: records.size, startIndex: page.startIndex, resources: take(entries, page.offset, page.limit) }
  }
  const resources: T[] = []
  let total = 0
  for (const entry of entries) {
    if (matches !== undefined && !matches(entry.record)) continue
    if (total >= page.offset && resources.length < page.limit) resources.push(entry.record)
    total++
  }
  return { totalResults: total, startIndex: page.startIndex, resources }
}

function take<T> (entries: Iterable<Entry<T>>, offset: number, limit: number): T[] {
  const taken: T[] = []
  let index = 0
  for (const entry of entries) {
    if (taken.length >= limit) break
    if (index++ >= offset) taken.push(entry.record)
  }
  return taken
}
