/**
 * Who has been deprovisioned (issue 41, item 4), as records in the state store, so that every
 * instance sees a deactivation from the next request: the SCIM endpoint marks a person when their
 * SCIM user is deactivated or deleted and clears the mark when it is reactivated; the bearer
 * handler's deny check (and API keys) ask {@link DeprovisionedIdentities.isDeprovisioned} for
 * every request, one state-store read (Redis: one round trip; embedded: memory).
 *
 * A person is their issuer and subject, not the scheme: a bearer token of the same person is
 * verified by a JwtBearer scheme of another name than the sign-in scheme the SCIM user is linked
 * to, with the same issuer and subject. A client (client credentials) is never a person here.
 */
import { createHash } from 'node:crypto'
import { deprovisionedKey } from '../state/keys.js'
import type { StateStore } from '../state/state-store.js'

/** How long a deprovisioned mark lives: a year (a bearer token or an API key issued before the deactivation cannot outlive it unnoticed). */
export const DEPROVISIONED_RECORD_TTL_MS = 365 * 24 * 3600 * 1000

/** The part of an identity a mark is kept for (a `UserIdentity` or a bearer principal's identity fits). @experimental */
export interface DeprovisionedIdentity {
  readonly issuer: string
  readonly subject: string
  /** `client` (client credentials): never a deprovisioned person. */
  readonly kind?: string
}

function keyOf (identity: DeprovisionedIdentity): string {
  return deprovisionedKey(createHash('sha256').update(`${identity.issuer}\n${identity.subject}`, 'utf8').digest('base64url'))
}

/** The marks of deprovisioned people in one state store. */
export class DeprovisionedIdentities {
  readonly #store: StateStore
  readonly #ttlMs: number

  constructor (store: StateStore, ttlMs: number = DEPROVISIONED_RECORD_TTL_MS) {
    this.#store = store
    this.#ttlMs = ttlMs
  }

  /** Marks the person deprovisioned on every instance sharing the store. */
  async mark (identity: DeprovisionedIdentity): Promise<void> {
    await this.#store.set(keyOf(identity), '1', this.#ttlMs)
  }

  /** Clears the mark (the SCIM user was reactivated). */
  async clear (identity: DeprovisionedIdentity): Promise<void> {
    await this.#store.delete([keyOf(identity)])
  }

  /**
   * Whether the person is deprovisioned: the function the bearer handler's deny check and the API
   * keys call per request. Rejects when the state store cannot answer (the caller fails closed).
   */
  async isDeprovisioned (identity: DeprovisionedIdentity): Promise<boolean> {
    if (identity.kind === 'client' || identity.issuer === '' || identity.subject === '') return false
    return await this.#store.get(keyOf(identity)) !== undefined
  }
}
