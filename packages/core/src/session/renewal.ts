/**
 * A session's lifetimes: a new session lives ExpireMinutes idle and AbsoluteExpireMinutes at
 * most; with sliding expiration (Authentication:Cookie:SlidingExpiration), once more than half of
 * its idle lifetime has passed it is renewed for another ExpireMinutes, never beyond its absolute
 * expiry. Plain data; plugins/session.ts stores the ticket, and the renewal in the background.
 */
import { randomUUID } from 'node:crypto'
import type { AuthenticationProof, AuthenticationTicket, Claim } from './claims.js'

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

/** What a new session is issued for: the scheme that signed the user in, the claims and the tokens it keeps. */
export interface TicketRequest {
  readonly scheme: string
  readonly claims: readonly Claim[]
  readonly tokens?: Readonly<Record<string, string>>
  /** What the provider proved about the authentication (step-up; session/authentication-proof.ts). */
  readonly authentication?: AuthenticationProof
}

/**
 * What a successful sign-in flow hands to `reply.signIn` (plugins/session.ts): the ticket's
 * request and the session's extra index keys. Lives here, not in the plugin, so the sign-in
 * pipeline (sign-in/pipeline.ts) can name it without seeing Fastify.
 *
 * @public
 */
export interface SignInRequest {
  /** Scheme that authenticated the user (provider scheme or the consumer's flow name). */
  readonly scheme: string
  /** Normalized claims to store in the ticket. */
  readonly claims: readonly Claim[]
  /** Provider tokens; pass only when the provider's SaveTokens is true. */
  readonly tokens?: Readonly<Record<string, string>>
  /** What the provider proved: `acr`, `amr`, `auth_time` (SAML2: AuthnContextClassRef, AuthnInstant). */
  readonly authentication?: AuthenticationProof
  /**
   * More index keys listing this session (session/session-store.ts, e.g. providerSessionIndexKey
   * for back-channel logout), so `app.session.revokeIndexed` can find it.
   */
  readonly indexKeys?: readonly string[]
}

/**
 * A new session's ticket, issued at `at` (seconds): a fresh random id (no fixation), idle and
 * absolute expiry from `lifetimes`, and the device description shown on the user's sessions page.
 */
export function issuedTicket (request: TicketRequest, at: number, lifetimes: { readonly idleSeconds: number, readonly absoluteSeconds: number }, device: string): AuthenticationTicket {
  return {
    sessionId: randomUUID(),
    scheme: request.scheme,
    claims: request.claims.map((claim) => ({ type: claim.type, value: claim.value, issuer: claim.issuer })),
    issuedAt: at,
    expiresAt: at + Math.min(lifetimes.idleSeconds, lifetimes.absoluteSeconds),
    absoluteExpiresAt: at + lifetimes.absoluteSeconds,
    ...(request.tokens === undefined ? {} : { tokens: { ...request.tokens } }),
    startedAt: at,
    device,
    ...(request.authentication === undefined ? {} : { authentication: { ...request.authentication, ...(request.authentication.amr === undefined ? {} : { amr: [...request.authentication.amr] }) } })
  }
}
