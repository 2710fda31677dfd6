/**
 * Sliding expiration (Authentication:Cookie:SlidingExpiration): once more than half of a
 * session's idle lifetime has passed, it is renewed for another ExpireMinutes, never beyond its
 * absolute expiry. Plain data; plugins/session.ts stores the renewal in the background.
 */
import type { AuthenticationTicket } from './claims.js'

export interface RenewalSettings {
  readonly slidingExpiration: boolean
  /** Authentication:Cookie:ExpireMinutes in seconds. */
  readonly idleSeconds: number
}

/** The renewed ticket when `ticket` is due for renewal at `at` (seconds), else undefined. */
export function renewedTicket (ticket: AuthenticationTicket, at: number, settings: RenewalSettings): AuthenticationTicket | undefined {
  if (!settings.slidingExpiration || at - ticket.issuedAt <= (ticket.expiresAt - ticket.issuedAt) / 2) return undefined
  const expiresAt = Math.min(at + settings.idleSeconds, ticket.absoluteExpiresAt)
  return expiresAt > ticket.expiresAt ? { ...ticket, issuedAt: at, expiresAt } : undefined
}
