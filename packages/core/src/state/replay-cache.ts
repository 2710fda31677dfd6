/**
 * One-time values already redeemed, remembered in the state store (`replay:<scope>:<id>`) until
 * they could no longer be accepted anyway, so a replay is refused on every instance that shares
 * the store: SAML2 assertion ids until their latest NotOnOrAfter plus clock skew
 * (@node-saml/node-saml keeps no such record), and OpenID Connect back-channel logout token ids
 * (`jti`, scope `oidc-logout`) until the token's age limit.
 *
 * Never forgets an unexpired record to make room: when the embedded store holds its maximum, the
 * write is refused (StateStoreFullError) and the sign-in answers "try again" instead of risking a
 * replay. OAuth and OpenID Connect flows need no record here: a taken flow is marked used in the
 * store itself (plugins/external-sign-in.ts).
 */
import { createHash } from 'node:crypto'
import type { StateStore } from './state-store.js'
import { replayKey } from './keys.js'

export class ReplayCache {
  readonly #store: StateStore
  readonly #scope: string

  constructor (store: StateStore, scope: string) {
    this.#store = store
    this.#scope = scope
  }

  /**
   * Records `id` until `expiresAtMs`. Resolves false when the id is already recorded and not yet
   * expired (a replay), true when it is new. Ids are hashed: the store never holds them verbatim.
   */
  async remember (id: string, expiresAtMs: number, nowMs = Date.now()): Promise<boolean> {
    const key = replayKey(this.#scope, createHash('sha256').update(id, 'utf8').digest('base64url'))
    return await this.#store.add(key, '1', Math.max(1, expiresAtMs - nowMs))
  }
}
