/**
 * The directory store on a SQL database (sql-database.ts: SQLite or PostgreSQL), one body of
 * parameterised SQL for both: the tables of sql-schema.ts, a listing planned by query-plan.ts
 * (an exact plan is counted and paged by the index alone; otherwise the indexed candidates, or
 * the connection in pages of {@link SCAN_BATCH}, are confirmed by filter-evaluation.ts), and
 * every change in one transaction that first locks the row it changes. Listings come in
 * insertion order (`seq`), as the memory store's do.
 */
import { foldCase } from './attributes.js'
import { DirectoryConflictError, DirectoryInvalidValueError } from './directory-errors.js'
import {
  MAX_ACTIVE_CONNECTION_TOKENS, type ConnectionToken, type ConnectionTokenInput, type DirectoryGroup, type DirectoryGroupChange, type DirectoryGroupInput,
  type DirectoryGroupUpdate, type DirectoryPage, type DirectoryQuery, type DirectoryStore, type DirectoryUpdate, type DirectoryUser, type DirectoryUserDeletion,
  type DirectoryUserInput, type LinkedIdentity, type ScimAttributes
} from './directory-store.js'
import { groupMatches, userMatches } from './filter-evaluation.js'
import { planQuery, type AccessPath } from './query-plan.js'
import {
  applyMembers, checkConnection, checkGroupInput, checkTokenInput, checkUserInput, isoOf, modifiedAt, newGroupRecord, newId, pageOf, stableJson, userFields
} from './records.js'
import type { SqlDatabase, SqlRow, SqlSession, SqlValue } from './sql-database.js'

/** Rows read at once when a filter has no index to narrow it. */
export const SCAN_BATCH = 500
/** Most rows of one multi-row INSERT (memberships). */
const INSERT_BATCH = 200

const USER_COLUMNS = 'connection, id, external_id, user_name, active, attributes, identity_scheme, identity_issuer, identity_subject, created_ms, last_modified_ms, version'
const GROUP_COLUMNS = 'connection, id, external_id, display_name, attributes, created_ms, last_modified_ms, version'
const TOKEN_COLUMNS = 'connection, id, digest, created_ms, expires_ms, revoked_ms'

const text = (value: unknown): string => String(value)
const ms = (value: unknown): number => Number(value)
const json = (value: unknown): ScimAttributes => (typeof value === 'string' ? JSON.parse(value) : value) as ScimAttributes

function userOf (row: SqlRow): DirectoryUser {
  return {
    connection: text(row.connection),
    id: text(row.id),
    ...(row.external_id === null ? {} : { externalId: text(row.external_id) }),
    userName: text(row.user_name),
    active: row.active === true || row.active === 1,
    attributes: json(row.attributes),
    ...(row.identity_subject === null ? {} : { identity: { scheme: text(row.identity_scheme), issuer: text(row.identity_issuer), subject: text(row.identity_subject) } }),
    created: isoOf(ms(row.created_ms)),
    lastModified: isoOf(ms(row.last_modified_ms)),
    version: ms(row.version)
  }
}

function groupOf (row: SqlRow): DirectoryGroup {
  return {
    connection: text(row.connection),
    id: text(row.id),
    ...(row.external_id === null ? {} : { externalId: text(row.external_id) }),
    displayName: text(row.display_name),
    attributes: json(row.attributes),
    created: isoOf(ms(row.created_ms)),
    lastModified: isoOf(ms(row.last_modified_ms)),
    version: ms(row.version)
  }
}

function tokenOf (row: SqlRow): ConnectionToken {
  return {
    connection: text(row.connection),
    id: text(row.id),
    digest: text(row.digest),
    created: isoOf(ms(row.created_ms)),
    ...(row.expires_ms === null ? {} : { expires: isoOf(ms(row.expires_ms)) }),
    ...(row.revoked_ms === null ? {} : { revoked: isoOf(ms(row.revoked_ms)) })
  }
}

/** The values of a user's row, in the order of `USER_COLUMNS` after connection and id. */
function userValues (user: DirectoryUserInput): SqlValue[] {
  return [
    user.externalId ?? null, user.userName, foldCase(user.userName), user.active, JSON.stringify(user.attributes),
    user.identity?.scheme ?? null, user.identity?.issuer ?? null, user.identity?.subject ?? null
  ]
}

const placeholders = (count: number): string => Array.from({ length: count }, () => '?').join(', ')

interface Table {
  readonly name: string
  readonly columns: string
  /** The column of each key attribute. */
  readonly keys: Readonly<Record<string, string>>
}

const USERS: Table = { name: 'directory_users', columns: USER_COLUMNS, keys: { id: 'id', userName: 'user_name_key', externalId: 'external_id' } }
const GROUPS: Table = { name: 'directory_groups', columns: GROUP_COLUMNS, keys: { id: 'id', displayName: 'display_name_key', externalId: 'external_id' } }

/** The WHERE clause of an access path within one connection. */
function whereOf (table: Table, connection: string, path: AccessPath): { sql: string, parameters: SqlValue[] } {
  const clauses = ['connection = ?']
  const parameters: SqlValue[] = [connection]
  if (path.kind === 'keys') {
    clauses.push(`${table.keys[path.key] as string} IN (${placeholders(path.values.length)})`)
    parameters.push(...path.values)
  } else if (path.kind === 'modified') {
    if (path.active !== undefined) {
      clauses.push('active = ?')
      parameters.push(path.active)
    }
    if (path.from !== undefined) {
      clauses.push(`last_modified_ms ${path.from.inclusive ? '>=' : '>'} ?`)
      parameters.push(path.from.ms)
    }
    if (path.to !== undefined) {
      clauses.push(`last_modified_ms ${path.to.inclusive ? '<=' : '<'} ?`)
      parameters.push(path.to.ms)
    }
  }
  return { sql: clauses.join(' AND '), parameters }
}

/** The SQL store's options (tests pass a clock). */
export interface SqlDirectoryStoreOptions {
  readonly now?: () => number
}

export class SqlDirectoryStore implements DirectoryStore {
  readonly #db: SqlDatabase
  readonly #now: () => number

  constructor (db: SqlDatabase, options: SqlDirectoryStoreOptions = {}) {
    this.#db = db
    this.#now = options.now ?? Date.now
  }

  get provider (): string {
    return this.#db.provider
  }

  /** The database, for a store that shares it (the API key store, api-keys/open-api-key-store.ts); not part of the port. */
  get database (): SqlDatabase {
    return this.#db
  }

  async close (): Promise<void> {
    await this.#db.close()
  }

  // ------------------------------------------------------------------------------------------ users

  async createUser (connection: string, input: DirectoryUserInput): Promise<DirectoryUser> {
    checkConnection(connection)
    checkUserInput(input)
    const now = this.#now()
    const user: DirectoryUser = { connection, id: newId(), ...userFields(input), created: isoOf(now), lastModified: isoOf(now), version: 1 }
    await this.#db.read(async (session) => await session.execute(
      `INSERT INTO directory_users (connection, id, external_id, user_name, user_name_key, active, attributes, identity_scheme, identity_issuer, identity_subject, created_ms, last_modified_ms, version)
       VALUES (${placeholders(13)})`,
      [connection, user.id, ...userValues(user), now, now, 1]))
    return user
  }

  async getUser (connection: string, id: string): Promise<DirectoryUser | undefined> {
    checkConnection(connection)
    const rows = await this.#db.read(async (session) => await session.query(`SELECT ${USER_COLUMNS} FROM directory_users WHERE connection = ? AND id = ?`, [connection, id]))
    return rows[0] === undefined ? undefined : userOf(rows[0])
  }

  async updateUser (connection: string, id: string, mutate: (current: DirectoryUser) => DirectoryUserInput | undefined): Promise<DirectoryUpdate<DirectoryUser> | undefined> {
    checkConnection(connection)
    return await this.#db.transaction(async (session) => {
      const rows = await session.query(`SELECT ${USER_COLUMNS} FROM directory_users WHERE connection = ? AND id = ?${this.#db.forUpdate}`, [connection, id])
      if (rows[0] === undefined) return undefined
      const before = userOf(rows[0])
      const change = mutate(before)
      if (change === undefined) return { before, after: before, changed: false }
      checkUserInput(change)
      const fields = userFields(change)
      const { connection: _c, id: _i, created: _cr, lastModified: _l, version: _v, ...current } = before
      if (stableJson(fields) === stableJson(current)) return { before, after: before, changed: false }
      const modified = modifiedAt(this.#now(), Date.parse(before.lastModified))
      await session.execute(
        `UPDATE directory_users SET external_id = ?, user_name = ?, user_name_key = ?, active = ?, attributes = ?, identity_scheme = ?, identity_issuer = ?, identity_subject = ?,
         last_modified_ms = ?, version = version + 1 WHERE connection = ? AND id = ?`,
        [...userValues(fields), modified, connection, id])
      const after: DirectoryUser = { connection, id, ...fields, created: before.created, lastModified: isoOf(modified), version: before.version + 1 }
      return { before, after, changed: true }
    })
  }

  async deleteUser (connection: string, id: string): Promise<DirectoryUserDeletion | undefined> {
    checkConnection(connection)
    return await this.#db.transaction(async (session) => {
      const rows = await session.query(`SELECT ${USER_COLUMNS} FROM directory_users WHERE connection = ? AND id = ?${this.#db.forUpdate}`, [connection, id])
      if (rows[0] === undefined) return undefined
      const groups = await session.query('SELECT group_id FROM directory_memberships WHERE connection = ? AND user_id = ? ORDER BY group_id', [connection, id])
      await session.execute('DELETE FROM directory_memberships WHERE connection = ? AND user_id = ?', [connection, id])
      await session.execute('DELETE FROM directory_users WHERE connection = ? AND id = ?', [connection, id])
      return { user: userOf(rows[0]), groups: groups.map((row) => text(row.group_id)) }
    })
  }

  async listUsers (connection: string, query: DirectoryQuery): Promise<DirectoryPage<DirectoryUser>> {
    checkConnection(connection)
    const filter = query.filter
    return await this.#list(USERS, connection, query, userOf, filter === undefined ? undefined : async (users) => users.filter((user) => userMatches(user, filter)))
  }

  async findUsersByIdentity (identity: LinkedIdentity): Promise<DirectoryUser[]> {
    const rows = await this.#db.read(async (session) => await session.query(
      `SELECT ${USER_COLUMNS} FROM directory_users WHERE identity_subject = ? AND identity_issuer = ? AND identity_scheme = ? ORDER BY connection, id`,
      [identity.subject, identity.issuer, identity.scheme]))
    return rows.map(userOf)
  }

  // ----------------------------------------------------------------------------------------- groups

  /** Refuses members that are not users of `connection` (the foreign keys refuse them too). */
  async #checkMembers (session: SqlSession, connection: string, members: readonly string[]): Promise<void> {
    for (let index = 0; index < members.length; index += INSERT_BATCH) {
      const batch = members.slice(index, index + INSERT_BATCH)
      const rows = await session.query(`SELECT COUNT(*) AS n FROM directory_users WHERE connection = ? AND id IN (${placeholders(batch.length)})`, [connection, ...batch])
      if (ms(rows[0]?.n) !== batch.length) throw new DirectoryInvalidValueError('members', 'a member is not a user of this connection')
    }
  }

  async #addMembers (session: SqlSession, connection: string, groupId: string, members: readonly string[]): Promise<void> {
    for (let index = 0; index < members.length; index += INSERT_BATCH) {
      const batch = members.slice(index, index + INSERT_BATCH)
      await session.execute(`INSERT INTO directory_memberships (connection, group_id, user_id) VALUES ${batch.map(() => '(?, ?, ?)').join(', ')}`,
        batch.flatMap((member) => [connection, groupId, member]))
    }
  }

  async #removeMembers (session: SqlSession, connection: string, groupId: string, members: readonly string[]): Promise<void> {
    for (let index = 0; index < members.length; index += INSERT_BATCH) {
      const batch = members.slice(index, index + INSERT_BATCH)
      await session.execute(`DELETE FROM directory_memberships WHERE connection = ? AND group_id = ? AND user_id IN (${placeholders(batch.length)})`, [connection, groupId, ...batch])
    }
  }

  async createGroup (connection: string, input: DirectoryGroupInput): Promise<DirectoryGroup> {
    checkConnection(connection)
    checkGroupInput({ ...input, members: { replace: input.members ?? [] } })
    const members = [...new Set(input.members ?? [])].sort()
    const now = this.#now()
    const group = newGroupRecord(connection, input, now)
    await this.#db.transaction(async (session) => {
      await this.#checkMembers(session, connection, members)
      await session.execute(
        `INSERT INTO directory_groups (connection, id, external_id, display_name, display_name_key, attributes, created_ms, last_modified_ms, version) VALUES (${placeholders(9)})`,
        [connection, group.id, group.externalId ?? null, group.displayName, foldCase(group.displayName), JSON.stringify(group.attributes), now, now, 1])
      await this.#addMembers(session, connection, group.id, members)
    })
    return group
  }

  async getGroup (connection: string, id: string): Promise<DirectoryGroup | undefined> {
    checkConnection(connection)
    const rows = await this.#db.read(async (session) => await session.query(`SELECT ${GROUP_COLUMNS} FROM directory_groups WHERE connection = ? AND id = ?`, [connection, id]))
    return rows[0] === undefined ? undefined : groupOf(rows[0])
  }

  async updateGroup (connection: string, id: string, mutate: (current: DirectoryGroup) => DirectoryGroupChange | undefined): Promise<DirectoryGroupUpdate | undefined> {
    checkConnection(connection)
    return await this.#db.transaction(async (session) => {
      const rows = await session.query(`SELECT ${GROUP_COLUMNS} FROM directory_groups WHERE connection = ? AND id = ?${this.#db.forUpdate}`, [connection, id])
      if (rows[0] === undefined) return undefined
      const before = groupOf(rows[0])
      const change = mutate(before)
      if (change === undefined) return { before, after: before, changed: false, added: [], removed: [] }
      checkGroupInput(change)
      const current = change.members === undefined ? [] : await this.#members(session, connection, id)
      const { added, removed } = applyMembers(current, change.members)
      const fields = { ...(change.externalId === undefined ? {} : { externalId: change.externalId }), displayName: change.displayName, attributes: change.attributes }
      const { connection: _c, id: _i, created: _cr, lastModified: _l, version: _v, ...unchanged } = before
      if (stableJson(fields) === stableJson(unchanged) && added.length === 0 && removed.length === 0) return { before, after: before, changed: false, added, removed }
      await this.#checkMembers(session, connection, added)
      const modified = modifiedAt(this.#now(), Date.parse(before.lastModified))
      await session.execute(
        'UPDATE directory_groups SET external_id = ?, display_name = ?, display_name_key = ?, attributes = ?, last_modified_ms = ?, version = version + 1 WHERE connection = ? AND id = ?',
        [fields.externalId ?? null, fields.displayName, foldCase(fields.displayName), JSON.stringify(fields.attributes), modified, connection, id])
      await this.#removeMembers(session, connection, id, removed)
      await this.#addMembers(session, connection, id, added)
      const after: DirectoryGroup = { connection, id, ...fields, created: before.created, lastModified: isoOf(modified), version: before.version + 1 }
      return { before, after, changed: true, added, removed }
    })
  }

  async deleteGroup (connection: string, id: string): Promise<boolean> {
    checkConnection(connection)
    return await this.#db.transaction(async (session) => {
      await session.execute('DELETE FROM directory_memberships WHERE connection = ? AND group_id = ?', [connection, id])
      return await session.execute('DELETE FROM directory_groups WHERE connection = ? AND id = ?', [connection, id]) > 0
    })
  }

  async listGroups (connection: string, query: DirectoryQuery): Promise<DirectoryPage<DirectoryGroup>> {
    checkConnection(connection)
    const filter = query.filter
    if (filter === undefined) return await this.#list(GROUPS, connection, query, groupOf, undefined)
    const needsMembers = planQuery('Group', filter).needsMembers
    const confirm = async (groups: DirectoryGroup[], session: SqlSession): Promise<DirectoryGroup[]> => {
      // A group's members are read only when the filter names them, for the candidates only.
      const members = needsMembers ? await this.#membersOfGroups(session, connection, groups.map((group) => group.id)) : new Map<string, string[]>()
      return groups.filter((group) => groupMatches(group, filter, members.get(group.id) ?? []))
    }
    return await this.#list(GROUPS, connection, query, groupOf, confirm)
  }

  async #members (session: SqlSession, connection: string, groupId: string): Promise<string[]> {
    const rows = await session.query('SELECT user_id FROM directory_memberships WHERE connection = ? AND group_id = ? ORDER BY user_id', [connection, groupId])
    return rows.map((row) => text(row.user_id))
  }

  async #membersOfGroups (session: SqlSession, connection: string, groupIds: readonly string[]): Promise<Map<string, string[]>> {
    const members = new Map<string, string[]>()
    if (groupIds.length === 0) return members
    const rows = await session.query(`SELECT group_id, user_id FROM directory_memberships WHERE connection = ? AND group_id IN (${placeholders(groupIds.length)})`, [connection, ...groupIds])
    for (const row of rows) {
      const list = members.get(text(row.group_id)) ?? []
      list.push(text(row.user_id))
      members.set(text(row.group_id), list)
    }
    return members
  }

  async groupMembers (connection: string, groupId: string): Promise<string[]> {
    checkConnection(connection)
    return await this.#db.read(async (session) => await this.#members(session, connection, groupId))
  }

  async groupsOfUser (connection: string, userId: string): Promise<DirectoryGroup[]> {
    checkConnection(connection)
    const rows = await this.#db.read(async (session) => await session.query(
      `SELECT ${GROUP_COLUMNS.split(', ').map((column) => `g.${column}`).join(', ')} FROM directory_memberships m
       JOIN directory_groups g ON g.connection = m.connection AND g.id = m.group_id WHERE m.connection = ? AND m.user_id = ? ORDER BY g.id`,
      [connection, userId]))
    return rows.map(groupOf)
  }

  // ---------------------------------------------------------------------------------------- listing

  /**
   * One page of `table` in `connection`: with an exact plan, counted and paged in the index;
   * otherwise the candidates (indexed, or the whole connection in batches) kept by `confirm`.
   */
  async #list<T> (table: Table, connection: string, query: DirectoryQuery, decode: (row: SqlRow) => T,
    confirm: ((records: T[], session: SqlSession) => Promise<T[]>) | undefined): Promise<DirectoryPage<T>> {
    const page = pageOf(query)
    const plan = planQuery(table.name === USERS.name ? 'User' : 'Group', query.filter)
    const where = whereOf(table, connection, plan.path)
    // Narrowed by an index: ordered by an expression, so that no planner walks the connection in
    // seq order hoping to meet the matches early (PostgreSQL does with LIMIT); the matches are sorted.
    const order = plan.path.kind === 'all' || plan.path.kind === 'scan' ? 'seq' : 'seq + 0'
    return await this.#db.read(async (session) => {
      if (plan.exact || confirm === undefined) {
        const counted = await session.query(`SELECT COUNT(*) AS n FROM ${table.name} WHERE ${where.sql}`, where.parameters)
        const rows = page.limit === 0
          ? []
          : await session.query(`SELECT ${table.columns} FROM ${table.name} WHERE ${where.sql} ORDER BY ${order} LIMIT ? OFFSET ?`, [...where.parameters, page.limit, page.offset])
        return { totalResults: ms(counted[0]?.n), startIndex: page.startIndex, resources: rows.map(decode) }
      }
      return await this.#confirmed(session, table, where, order, page, decode, confirm)
    })
  }

  async #confirmed<T> (session: SqlSession, table: Table, where: { sql: string, parameters: SqlValue[] }, order: string, page: { offset: number, limit: number, startIndex: number },
    decode: (row: SqlRow) => T, confirm: (records: T[], session: SqlSession) => Promise<T[]>): Promise<DirectoryPage<T>> {
    const resources: T[] = []
    let total = 0
    let after: number | undefined
    // Keyset pages in insertion order: bounded by the connection's size.
    for (;;) {
      const rows = await session.query(
        `SELECT ${table.columns}, seq FROM ${table.name} WHERE ${where.sql}${after === undefined ? '' : ' AND seq > ?'} ORDER BY ${order} LIMIT ?`,
        [...where.parameters, ...(after === undefined ? [] : [after]), SCAN_BATCH])
      for (const record of await confirm(rows.map(decode), session)) {
        if (total >= page.offset && resources.length < page.limit) resources.push(record)
        total++
      }
      const last = rows.at(-1)
      if (rows.length < SCAN_BATCH || last === undefined) break
      after = ms(last.seq)
    }
    return { totalResults: total, startIndex: page.startIndex, resources }
  }

  // ----------------------------------------------------------------------------------------- tokens

  async addToken (connection: string, input: ConnectionTokenInput): Promise<ConnectionToken> {
    checkConnection(connection)
    checkTokenInput(input)
    const now = this.#now()
    const expires = input.expires === undefined ? undefined : Date.parse(input.expires)
    return await this.#db.transaction(async (session) => {
      await this.#db.lockConnection(session, connection)
      const active = await session.query('SELECT COUNT(*) AS n FROM directory_tokens WHERE connection = ? AND revoked_ms IS NULL AND (expires_ms IS NULL OR expires_ms > ?)', [connection, now])
      if (ms(active[0]?.n) >= MAX_ACTIVE_CONNECTION_TOKENS) throw new DirectoryConflictError('activeTokens')
      const existing = await session.query('SELECT id FROM directory_tokens WHERE connection = ? AND id = ?', [connection, input.id])
      if (existing.length > 0) throw new DirectoryInvalidValueError('id', 'a token with this id exists')
      await session.execute(`INSERT INTO directory_tokens (${TOKEN_COLUMNS}) VALUES (?, ?, ?, ?, ?, NULL)`, [connection, input.id, input.digest, now, expires ?? null])
      return { connection, id: input.id, digest: input.digest, created: isoOf(now), ...(expires === undefined ? {} : { expires: isoOf(expires) }) }
    })
  }

  async listTokens (connection: string): Promise<ConnectionToken[]> {
    checkConnection(connection)
    const rows = await this.#db.read(async (session) => await session.query(`SELECT ${TOKEN_COLUMNS} FROM directory_tokens WHERE connection = ? ORDER BY seq`, [connection]))
    return rows.map(tokenOf)
  }

  async activeTokens (connection: string): Promise<ConnectionToken[]> {
    checkConnection(connection)
    const rows = await this.#db.read(async (session) => await session.query(
      `SELECT ${TOKEN_COLUMNS} FROM directory_tokens WHERE connection = ? AND revoked_ms IS NULL AND (expires_ms IS NULL OR expires_ms > ?) ORDER BY seq`,
      [connection, this.#now()]))
    return rows.map(tokenOf)
  }

  async revokeToken (connection: string, id: string): Promise<boolean> {
    checkConnection(connection)
    const changed = await this.#db.read(async (session) => await session.execute(
      'UPDATE directory_tokens SET revoked_ms = ? WHERE connection = ? AND id = ? AND revoked_ms IS NULL', [this.#now(), connection, id]))
    return changed > 0
  }

  async deleteConnection (connection: string): Promise<void> {
    checkConnection(connection)
    await this.#db.transaction(async (session) => {
      for (const table of ['directory_memberships', 'directory_groups', 'directory_users', 'directory_tokens']) {
        await session.execute(`DELETE FROM ${table} WHERE connection = ?`, [connection])
      }
    })
  }
}
