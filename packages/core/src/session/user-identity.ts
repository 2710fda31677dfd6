/**
 * Who a principal is: (scheme, issuer, subject), never the subject alone (issue 23, item 1). Two
 * providers may hand out the same subject value for different people (an e-mail NameID, a numeric
 * vendor id, a UUID reused across realms), so every per-user operation (the session index behind
 * "sign out everywhere", `app.session.revokeUser`, audit log lines) keys on all three:
 * - `scheme`: the provider scheme that signed the user in (`OpenIdConnect`, `Saml2`, `VendorA`...,
 *   or a consumer flow's name given to `reply.signIn`);
 * - `issuer`: the issuer of the `application:subject` claim: the OpenID Connect `iss`, the SAML2
 *   IdP entity id, the vendor slot's scheme name (VendorA/B/C), or what a consumer flow sets;
 * - `subject`: the `application:subject` value.
 * {@link userKeyOf} turns the three into one opaque, stable string: what an application keys its
 * own data on. A fourth part, `kind`, marks an OAuth client acting as itself (a bearer call with
 * a client-credentials token, issue 40 item 6): its identity and key never equal a user's, even
 * when its client id equals a user's subject at the same scheme and issuer. E-mail is never a user key (it changes, is reassigned, and is not unique across
 * providers). Plain data, no Fastify types.
 */
import { ApplicationClaimTypes, type AuthenticationTicket, type IdentityKind } from './claims.js'
import { sha256Base64url } from '../sha256.js'

/** The identity of a signed-in user: provider scheme, issuer and subject together. @public */
export interface UserIdentity {
  /** The scheme that signed the user in (OpenIdConnect, Saml2, VendorA... or a consumer flow's). */
  readonly scheme: string
  /** The OIDC `iss`, the SAML2 IdP entity id, or the vendor slot's name. */
  readonly issuer: string
  /** The `application:subject` claim's value, unique only at its issuer. */
  readonly subject: string
  /**
   * Absent for a user; `client` for an OAuth client acting as itself (a client-credentials
   * token: no user). Part of every comparison and of the key.
   */
  readonly kind?: IdentityKind
}

const sha256 = sha256Base64url

/**
 * The stable key of a user: base64url of SHA-256 over the JSON array `[scheme, issuer, subject]`
 * (43 characters). JSON keeps the three apart whatever characters they hold, and the hash keeps
 * identifiers out of database keys, state-store keys and URLs. It changes only when one of the
 * three does (another provider, another IdP, or the IdP reissuing the subject). A client acting
 * as itself (`kind: 'client'`) hashes `[scheme, issuer, subject, "client"]`: a longer array, so
 * never a user's key.
 *
 * @public
 */
export function userKeyOf (identity: UserIdentity): string {
  const parts = [identity.scheme, identity.issuer, identity.subject]
  return sha256(JSON.stringify(identity.kind === 'client' ? [...parts, 'client'] : parts))
}

/**
 * The identity of a ticket: its scheme, and the issuer and value of its first `application:subject`
 * claim; undefined when it has none (claims normalization off, or a consumer flow without one).
 * Tickets stored before identities existed carry the claim issuer too, so they answer the same.
 */
export function identityOfTicket (ticket: Pick<AuthenticationTicket, 'scheme' | 'claims' | 'kind'>): UserIdentity | undefined {
  const claim = ticket.claims.find((candidate) => candidate.type === ApplicationClaimTypes.Subject)
  if (claim === undefined || claim.value === '') return undefined
  return { scheme: ticket.scheme, issuer: claim.issuer, subject: claim.value, ...(ticket.kind === 'client' ? { kind: ticket.kind } : {}) }
}

/** Whether two identities are the same user (all three parts equal, and both users or both clients). */
export function sameIdentity (a: UserIdentity, b: UserIdentity): boolean {
  return a.scheme === b.scheme && a.issuer === b.issuer && a.subject === b.subject && (a.kind === 'client') === (b.kind === 'client')
}

/**
 * The session's identifier in audit log lines: base64url of SHA-256 over a fixed label and the
 * session id, first 22 characters (132 bits). Not the cookie value and not the session id itself:
 * the session id is what anti-forgery tokens are bound to and what `revokeSession` takes, so the
 * log does not hand it out; an operator holding a session id computes this to find its lines.
 */
export function sessionAuditIdOf (sessionId: string): string {
  return sha256(`session-audit\u0000${sessionId}`).slice(0, 22)
}

/**
 * The fields an audit line carries about a session's user: `provider` (the scheme), `issuer`,
 * `subject`, `userKey` and `sessionAuditId`; the identity fields only when the ticket has one.
 * Never a token, never an e-mail claim, never the session id or cookie (docs/audit-events.md).
 */
export function auditFieldsOf (ticket: Pick<AuthenticationTicket, 'sessionId' | 'scheme' | 'claims' | 'kind'>): Record<string, string> {
  const identity = identityOfTicket(ticket)
  return {
    provider: ticket.scheme,
    ...(identity === undefined ? {} : { issuer: identity.issuer, subject: identity.subject, userKey: userKeyOf(identity) }),
    sessionAuditId: sessionAuditIdOf(ticket.sessionId)
  }
}

/** The same fields for an identity without a session (a refused sign-in whose response was verified). */
export function identityAuditFields (identity: UserIdentity): Record<string, string> {
  return { provider: identity.scheme, issuer: identity.issuer, subject: identity.subject, userKey: userKeyOf(identity) }
}

/**
 * `identity` as a {@link UserIdentity}, for the API that takes one from application code
 * (`app.session.revokeUser`): a missing or empty part is a TypeError naming `method`.
 */
export function checkedUserIdentity (identity: unknown, method: string): UserIdentity {
  for (const part of ['scheme', 'issuer', 'subject'] as const) {
    const value = (identity as Partial<Record<string, unknown>> | undefined)?.[part]
    if (typeof value !== 'string' || value === '') throw new TypeError(`${method}: identity.${part} must be a non-empty string.`)
  }
  const kind = (identity as { kind?: unknown }).kind
  if (kind !== undefined && kind !== 'client') throw new TypeError(`${method}: identity.kind must be absent (a user) or 'client'.`)
  return identity as UserIdentity
}
