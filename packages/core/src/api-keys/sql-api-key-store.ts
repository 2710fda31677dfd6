/**
 * The API key store on the directory store's SQL database (directory/sql-database.ts: SQLite or
 * PostgreSQL), one body of parameterised SQL for both, in the `directory_api_keys` table of
 * migration 200 (directory/sql-schema.ts). It shares the directory store's connection or pool and
 * closes nothing: the directory store owns the database. The per-owner limit is counted and the
 * key inserted in one transaction under a lock on the owner (an advisory lock in PostgreSQL; SQLite
 * serialises writers), so two creations at once never both take the last slot.
 */
import { isoOf } from '../directory/records.js'
import type { SqlDatabase, SqlRow, SqlValue } from '../directory/sql-database.js'
import type { UserIdentity } from '../session/user-identity.js'
import { checkApiKeyInput } from './api-key-records.js'
import {
  ApiKeyLimitError, ownerKeyOf, type ApiKeyInput, type ApiKeyOwner, type ApiKeyRecord, type ApiKeyRevocationReason, type ApiKeyStore
} from './api-key-store.js'

const COLUMNS = 'id, scheme, prefix, owner_key, owner_kind, owner_scheme, owner_issuer, owner_subject, owner_identity_kind, owner_tenant, ' +
  'created_by_scheme, created_by_issuer, created_by_subject, created_by_kind, name, scopes, digest, last_four, created_ms, expires_ms, revoked_ms, revoked_reason, last_used_ms'
const COLUMN_COUNT = COLUMNS.split(',').length

const text = (value: unknown): string => String(value)
const ms = (value: unknown): number => Number(value)
const optional = (value: unknown): string | undefined => value === null || value === undefined ? undefined : String(value)

function identityOf (scheme: unknown, issuer: unknown, subject: unknown, kind: unknown): UserIdentity {
  return { scheme: text(scheme), issuer: text(issuer), subject: text(subject), ...(kind === 'client' ? { kind: 'client' as const } : {}) }
}

function ownerOf (row: SqlRow): ApiKeyOwner {
  if (row.owner_kind === 'tenant') return { kind: 'tenant', tenant: text(row.owner_tenant) }
  const tenant = optional(row.owner_tenant)
  return { kind: 'user', identity: identityOf(row.owner_scheme, row.owner_issuer, row.owner_subject, row.owner_identity_kind), ...(tenant === undefined ? {} : { tenant }) }
}

function recordOf (row: SqlRow): ApiKeyRecord {
  const scopes = typeof row.scopes === 'string' ? JSON.parse(row.scopes) as string[] : row.scopes as string[]
  return {
    id: text(row.id),
    scheme: text(row.scheme),
    prefix: text(row.prefix),
    owner: ownerOf(row),
    createdBy: identityOf(row.created_by_scheme, row.created_by_issuer, row.created_by_subject, row.created_by_kind),
    name: text(row.name),
    scopes,
    created: isoOf(ms(row.created_ms)),
    expires: isoOf(ms(row.expires_ms)),
    ...(row.revoked_ms === null ? {} : { revoked: { at: isoOf(ms(row.revoked_ms)), reason: text(row.revoked_reason) as ApiKeyRevocationReason } }),
    ...(row.last_used_ms === null ? {} : { lastUsed: isoOf(ms(row.last_used_ms)) }),
    digest: text(row.digest),
    lastFour: text(row.last_four)
  }
}

function valuesOf (record: ApiKeyRecord): SqlValue[] {
  const { owner, createdBy } = record
  const user = owner.kind === 'user' ? owner.identity : undefined
  return [
    record.id, record.scheme, record.prefix, ownerKeyOf(owner), owner.kind,
    user?.scheme ?? null, user?.issuer ?? null, user?.subject ?? null, user?.kind ?? null, owner.tenant ?? null,
    createdBy.scheme, createdBy.issuer, createdBy.subject, createdBy.kind ?? null,
    record.name, JSON.stringify(record.scopes), record.digest, record.lastFour,
    Date.parse(record.created), Date.parse(record.expires), null, null, null
  ]
}

/** The SQL store's options (tests pass a clock). @experimental */
export interface SqlApiKeyStoreOptions {
  readonly now?: () => number
}

export class SqlApiKeyStore implements ApiKeyStore {
  readonly #db: SqlDatabase
  readonly #now: () => number

  constructor (db: SqlDatabase, options: SqlApiKeyStoreOptions = {}) {
    this.#db = db
    this.#now = options.now ?? Date.now
  }

  async addApiKey (input: ApiKeyInput, maxActive: number): Promise<ApiKeyRecord> {
    checkApiKeyInput(input)
    const now = this.#now()
    const record: ApiKeyRecord = { ...input, scopes: [...input.scopes].sort(), created: isoOf(now) }
    const ownerKey = ownerKeyOf(input.owner)
    return await this.#db.transaction(async (session) => {
      await this.#db.lockConnection(session, `api-key-owner:${ownerKey}`)
      const active = await session.query('SELECT COUNT(*) AS n FROM directory_api_keys WHERE owner_key = ? AND revoked_ms IS NULL AND expires_ms > ?', [ownerKey, now])
      if (ms(active[0]?.n) >= maxActive) throw new ApiKeyLimitError(maxActive)
      await session.execute(`INSERT INTO directory_api_keys (${COLUMNS}) VALUES (${Array.from({ length: COLUMN_COUNT }, () => '?').join(', ')})`, valuesOf(record))
      return record
    })
  }

  async getApiKey (id: string): Promise<ApiKeyRecord | undefined> {
    const rows = await this.#db.read(async (session) => await session.query(`SELECT ${COLUMNS} FROM directory_api_keys WHERE id = ?`, [id]))
    return rows[0] === undefined ? undefined : recordOf(rows[0])
  }

  async listApiKeys (owner: ApiKeyOwner): Promise<ApiKeyRecord[]> {
    const rows = await this.#db.read(async (session) => await session.query(`SELECT ${COLUMNS} FROM directory_api_keys WHERE owner_key = ? ORDER BY seq`, [ownerKeyOf(owner)]))
    return rows.map(recordOf)
  }

  async revokeApiKey (id: string, reason: ApiKeyRevocationReason): Promise<ApiKeyRecord | undefined> {
    return await this.#db.transaction(async (session) => {
      const changed = await session.execute('UPDATE directory_api_keys SET revoked_ms = ?, revoked_reason = ? WHERE id = ? AND revoked_ms IS NULL', [this.#now(), reason, id])
      if (changed === 0) return undefined
      const rows = await session.query(`SELECT ${COLUMNS} FROM directory_api_keys WHERE id = ?`, [id])
      return rows[0] === undefined ? undefined : recordOf(rows[0])
    })
  }

  async revokeApiKeysOf (owner: ApiKeyOwner, reason: ApiKeyRevocationReason): Promise<ApiKeyRecord[]> {
    const ownerKey = ownerKeyOf(owner)
    return await this.#db.transaction(async (session) => {
      const rows = await session.query(`SELECT ${COLUMNS} FROM directory_api_keys WHERE owner_key = ? AND revoked_ms IS NULL ORDER BY seq${this.#db.forUpdate}`, [ownerKey])
      if (rows.length === 0) return []
      const now = this.#now()
      await session.execute('UPDATE directory_api_keys SET revoked_ms = ?, revoked_reason = ? WHERE owner_key = ? AND revoked_ms IS NULL', [now, reason, ownerKey])
      return rows.map((row) => ({ ...recordOf(row), revoked: { at: isoOf(now), reason } }))
    })
  }

  async touchApiKey (id: string, minIntervalMs: number): Promise<boolean> {
    const now = this.#now()
    const changed = await this.#db.read(async (session) => await session.execute(
      'UPDATE directory_api_keys SET last_used_ms = ? WHERE id = ? AND (last_used_ms IS NULL OR last_used_ms <= ?)', [now, id, now - minIntervalMs]))
    return changed > 0
  }

  async replaceDigest (id: string, from: string, to: string): Promise<boolean> {
    const changed = await this.#db.read(async (session) => await session.execute('UPDATE directory_api_keys SET digest = ? WHERE id = ? AND digest = ?', [to, id, from]))
    return changed > 0
  }

  /** The directory store owns the database: nothing to close here. */
  async close (): Promise<void> {}
}
