/**
 * One-time values already redeemed, remembered in the state store (`replay:<scope>:<id>`) until
 * they could no longer be accepted anyway, so a replay is refused on every instance that shares
 * the store: SAML2 assertion ids until their latest NotOnOrAfter plus clock skew
 * (@node-saml/node-saml keeps no such record), and OpenID Connect back-channel logout token ids
 * (`jti`, scope `oidc-logout`) until the token's age limit.
 *
 * Never forgets an unexpired record to make room: when the embedded store holds its maximum, the
 * write is refused (StateStoreFullError) and the sign-in answers "try again" instead of risking a
 * replay. A completed sign-in flow is recorded too (scope `sign-in-flow`, until the flow's own
 * expiry), written only after the provider's response has been verified, so a replayed callback is
 * refused as `replay` everywhere while starting a flow writes nothing (sign-in/pending-flows.ts).
 */
import type { StateStore } from './state-store.js'
import { replayKey } from './keys.js'
import { sha256Base64url } from '../sha256.js'

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
    return await this.#store.add(this.#key(id), '1', Math.max(1, expiresAtMs - nowMs))
  }

  /** Whether `id` is recorded (a read only: nothing is written). */
  async seen (id: string): Promise<boolean> {
    return await this.#store.get(this.#key(id)) !== undefined
  }

  #key (id: string): string {
    return replayKey(this.#scope, sha256Base64url(id))
  }
}
