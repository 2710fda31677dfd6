/**
 * The deny checks (issue 43, item 1; issues 41 and 42): questions an app or a feature registers
 * that refuse an authenticated caller on every request, whatever the credential's own validity,
 * for example "has this person been deprovisioned?" or "has this key's owner been revoked?". The
 * bearer handler (bearer/bearer-handler.ts) asks them for every caller a request-credential type
 * authenticated, served from a cache or verified now, so a registered check refuses a cached token
 * on the next request. A check answers synchronously (a local set kept current by the state
 * store's invalidation channel, so it holds on every instance) or with a promise (a store
 * look-up); one that throws fails the request (it is never read as "allowed"). Sessions are ended
 * by revocation instead (app.session.revokeUser). Plain data.
 */
import type { Principal } from './principal.js'

/** True when `principal` must be refused now. @public @experimental */
export type DenyCheck = (principal: Principal) => boolean | Promise<boolean>

export class DenyChecks {
  readonly #checks: DenyCheck[] = []

  add (check: DenyCheck): void {
    this.#checks.push(check)
  }

  get size (): number {
    return this.#checks.length
  }

  /**
   * Whether any check denies `principal`: synchronous while every check answers synchronously (no
   * check: false, nothing allocated), else a promise. A check that throws rejects.
   */
  denies (principal: Principal): boolean | Promise<boolean> {
    const checks = this.#checks
    for (let index = 0; index < checks.length; index++) {
      const answer = (checks[index] as DenyCheck)(principal)
      if (answer === true) return true
      if (answer !== false) return this.#remaining(answer, principal, index + 1)
    }
    return false
  }

  async #remaining (pending: Promise<boolean>, principal: Principal, next: number): Promise<boolean> {
    if (await pending) return true
    for (let index = next; index < this.#checks.length; index++) if (await (this.#checks[index] as DenyCheck)(principal)) return true
    return false
  }
}
