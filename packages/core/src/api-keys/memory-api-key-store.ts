/**
 * The API key store in process memory: beside the memory directory store (Node.js without
 * `node:sqlite`, `State:Embedded:Persist` false) and in tests. A restart forgets every key, and it
 * serves one instance only. Records are frozen copies; each call runs to completion synchronously,
 * so the limit check and the insert are atomic.
 */
import { isoOf } from '../directory/records.js'
import { ApiKeyLimitError, ownerKeyOf, type ApiKeyInput, type ApiKeyOwner, type ApiKeyRecord, type ApiKeyRevocationReason, type ApiKeyStore } from './api-key-store.js'
import { checkApiKeyInput } from './api-key-records.js'

/** The memory store's options (tests pass a clock). @public @experimental */
export interface MemoryApiKeyStoreOptions {
  readonly now?: () => number
}

const frozen = <T>(value: T): T => {
  const copy = structuredClone(value)
  for (const item of Object.values(copy as object)) if (typeof item === 'object' && item !== null) Object.freeze(item)
  return Object.freeze(copy)
}

/** @public @experimental */
export class MemoryApiKeyStore implements ApiKeyStore {
  readonly #keys = new Map<string, ApiKeyRecord>()
  readonly #byOwner = new Map<string, string[]>()
  readonly #now: () => number

  constructor (options: MemoryApiKeyStoreOptions = {}) {
    this.#now = options.now ?? Date.now
  }

  #active (record: ApiKeyRecord, now: number): boolean {
    return record.revoked === undefined && Date.parse(record.expires) > now
  }

  async addApiKey (input: ApiKeyInput, maxActive: number): Promise<ApiKeyRecord> {
    checkApiKeyInput(input)
    const now = this.#now()
    const ownerKey = ownerKeyOf(input.owner)
    const ids = this.#byOwner.get(ownerKey) ?? []
    if (ids.filter((id) => this.#active(this.#keys.get(id) as ApiKeyRecord, now)).length >= maxActive) throw new ApiKeyLimitError(maxActive)
    if (this.#keys.has(input.id)) throw new TypeError('An API key with this id exists.')
    const record: ApiKeyRecord = frozen({ ...input, scopes: [...input.scopes].sort(), created: isoOf(now) })
    this.#keys.set(record.id, record)
    this.#byOwner.set(ownerKey, [...ids, record.id])
    return record
  }

  async getApiKey (id: string): Promise<ApiKeyRecord | undefined> {
    return this.#keys.get(id)
  }

  async listApiKeys (owner: ApiKeyOwner): Promise<ApiKeyRecord[]> {
    return (this.#byOwner.get(ownerKeyOf(owner)) ?? []).map((id) => this.#keys.get(id) as ApiKeyRecord)
  }

  #revoke (record: ApiKeyRecord, reason: ApiKeyRevocationReason): ApiKeyRecord {
    const revoked: ApiKeyRecord = frozen({ ...record, revoked: { at: isoOf(this.#now()), reason } })
    this.#keys.set(record.id, revoked)
    return revoked
  }

  async revokeApiKey (id: string, reason: ApiKeyRevocationReason): Promise<ApiKeyRecord | undefined> {
    const record = this.#keys.get(id)
    return record === undefined || record.revoked !== undefined ? undefined : this.#revoke(record, reason)
  }

  async revokeApiKeysOf (owner: ApiKeyOwner, reason: ApiKeyRevocationReason): Promise<ApiKeyRecord[]> {
    const records = await this.listApiKeys(owner)
    return records.filter((record) => record.revoked === undefined).map((record) => this.#revoke(record, reason))
  }

  async touchApiKey (id: string, minIntervalMs: number): Promise<boolean> {
    const record = this.#keys.get(id)
    const now = this.#now()
    if (record === undefined || (record.lastUsed !== undefined && now - Date.parse(record.lastUsed) < minIntervalMs)) return false
    this.#keys.set(id, frozen({ ...record, lastUsed: isoOf(now) }))
    return true
  }

  async replaceDigest (id: string, from: string, to: string): Promise<boolean> {
    const record = this.#keys.get(id)
    if (record === undefined || record.digest !== from) return false
    this.#keys.set(id, frozen({ ...record, digest: to }))
    return true
  }

  async close (): Promise<void> {}
}
