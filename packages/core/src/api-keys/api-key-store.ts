/**
 * The API key store port (issue 42, item 3): the keys' records, never a key. A port of its own
 * beside the directory store (directory/directory-store.ts), sharing its database:
 * - API keys exist without provisioning (`Provisioning:Enabled` false) and are not scoped by a
 *   SCIM connection, which every directory operation is;
 * - an app that brings its own `DirectoryStore` need not implement keys, nor the reverse;
 * - the core's implementations share the directory store's database and its migrations (the
 *   `directory_api_keys` table, migration 200 of directory/sql-schema.ts): one file beside the
 *   state file (SQLite), one pool (PostgreSQL), one backup.
 * Implementations: memory-api-key-store.ts, sql-api-key-store.ts (SQLite and PostgreSQL), opened
 * beside a directory store by open-api-key-store.ts. `@project-template/core/testing`'s
 * `describeApiKeyStore` holds an app's own to the same cases.
 *
 * The rules every implementation keeps: the per-owner limit is checked and the key inserted
 * atomically (two creations at once never both pass the last slot); a revocation is written once
 * (a second one changes nothing and reports nothing); timestamps come from the store's clock.
 */
import { CoreError } from '../errors.js'
import { userKeyOf, type UserIdentity } from '../session/user-identity.js'

/**
 * Who owns a key: a user (their identity, and the tenant they belonged to when it was created,
 * which tenant policies read), or a tenant (a customer organisation).
 *
 * @public @experimental
 */
export type ApiKeyOwner =
  | { readonly kind: 'user', readonly identity: UserIdentity, readonly tenant?: string }
  | { readonly kind: 'tenant', readonly tenant: string }

/**
 * Why a key was revoked (the `reason` of `api_key.revoked`): by a user on the key page or through
 * `app.apiKeys` (`user`), because its owner's sessions were revoked (`owner_revoked`), its owner
 * was deprovisioned (`deprovisioned`), its tenant was removed (`tenant_removed`), or swept after
 * expiry (`expired`).
 *
 * @public @experimental
 */
export type ApiKeyRevocationReason = 'user' | 'owner_revoked' | 'deprovisioned' | 'tenant_removed' | 'expired'

/** A key as stored. Timestamps are ISO 8601 UTC with milliseconds. @public @experimental */
export interface ApiKeyRecord {
  /** The id part of the key (api-key-format.ts): public, unique. */
  readonly id: string
  /** The ApiKey scheme that issued it. */
  readonly scheme: string
  /** The scheme's prefix when it was issued. */
  readonly prefix: string
  readonly owner: ApiKeyOwner
  /** Who created it (for a tenant-owned key, the employee; the key outlives them). */
  readonly createdBy: UserIdentity
  readonly name: string
  /** The scopes it grants, sorted, at least one. */
  readonly scopes: readonly string[]
  readonly created: string
  readonly expires: string
  readonly revoked?: { readonly at: string, readonly reason: ApiKeyRevocationReason }
  readonly lastUsed?: string
  /** The versioned digest of the key (`v1:...`, api-key-digest.ts). */
  readonly digest: string
  /** The key's last four characters, shown beside the prefix. */
  readonly lastFour: string
}

/** What a key is added with: the store adds `created`. @public @experimental */
export type ApiKeyInput = Omit<ApiKeyRecord, 'created' | 'revoked' | 'lastUsed'>

/**
 * The owner already holds the most active keys allowed (409). Never raised for another owner's
 * keys.
 *
 * @public @experimental
 */
export class ApiKeyLimitError extends CoreError {
  readonly limit: number
  constructor (limit: number) {
    super(`The owner already holds ${limit} active API keys.`)
    this.name = 'ApiKeyLimitError'
    this.limit = limit
  }
}

/**
 * The API key store port (see the module comment). Every method rejects with the directory's
 * `DirectoryStoreUnavailableError` when the database cannot answer.
 *
 * @public @experimental
 */
export interface ApiKeyStore {
  /**
   * Adds a key unless its owner already holds `maxActive` keys that are neither revoked nor expired
   * (then {@link ApiKeyLimitError}); the check and the insert are one atomic step.
   */
  addApiKey: (input: ApiKeyInput, maxActive: number) => Promise<ApiKeyRecord>
  getApiKey: (id: string) => Promise<ApiKeyRecord | undefined>
  /** Every key of the owner (of any scheme), revoked and expired ones included, oldest first. */
  listApiKeys: (owner: ApiKeyOwner) => Promise<ApiKeyRecord[]>
  /** Revokes a key; undefined when there is none or it was revoked already. */
  revokeApiKey: (id: string, reason: ApiKeyRevocationReason) => Promise<ApiKeyRecord | undefined>
  /** Revokes every unrevoked key of the owner; the keys it revoked. */
  revokeApiKeysOf: (owner: ApiKeyOwner, reason: ApiKeyRevocationReason) => Promise<ApiKeyRecord[]>
  /** Sets `lastUsed` to now unless it is less than `minIntervalMs` old (across instances: a conditional write); whether it wrote. */
  touchApiKey: (id: string, minIntervalMs: number) => Promise<boolean>
  /** Replaces the digest `from` with `to` (a newer digest version); false when the stored digest is no longer `from`. */
  replaceDigest: (id: string, from: string, to: string) => Promise<boolean>
  /** Closes what the store opened (nothing, when it shares the directory store's database). */
  close: () => Promise<void>
}

/**
 * The key an owner is indexed by: `user:` and the user key (session/user-identity.ts: scheme,
 * issuer, subject and kind, hashed), or `tenant:` and the tenant.
 *
 * @experimental
 */
export function ownerKeyOf (owner: ApiKeyOwner): string {
  return owner.kind === 'user' ? `user:${userKeyOf(owner.identity)}` : `tenant:${owner.tenant}`
}
