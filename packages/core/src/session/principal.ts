/**
 * Claims and the signed-in principal, as plain data (no Fastify types). The application-owned
 * claim types are the contract's ("Claims"). Who the principal is: `scheme`, `issuer` and
 * `subject` together, or `userKey` (user-identity.ts).
 */
import { ApplicationClaimTypes, type AuthenticationTicket, type Claim } from './claims.js'
import { identityOfTicket, userKeyOf, type UserIdentity } from './user-identity.js'

export { ApplicationClaimTypes } from './claims.js'
export type { AuthenticationTicket, Claim } from './claims.js'

/** The authenticated user of a request. */
export class Principal {
  readonly ticket: AuthenticationTicket

  constructor (ticket: AuthenticationTicket) {
    this.ticket = ticket
  }

  get claims (): readonly Claim[] {
    return this.ticket.claims
  }

  /** First value of a claim type, or undefined. */
  find (type: string): string | undefined {
    return this.ticket.claims.find((claim) => claim.type === type)?.value
  }

  /** True when a claim of `type` has one of `values`. */
  hasAnyValue (type: string, values: ReadonlySet<string>): boolean {
    return this.ticket.claims.some((claim) => claim.type === type && values.has(claim.value))
  }

  /**
   * The `application:subject` value: unique only at its issuer, so never a user key on its own
   * (two providers may send the same value for different people). Use {@link userKey}.
   */
  get subject (): string | undefined {
    return this.find(ApplicationClaimTypes.Subject)
  }

  /** The scheme that signed the user in (OpenIdConnect, Saml2, VendorA... or a consumer flow's). */
  get scheme (): string {
    return this.ticket.scheme
  }

  /**
   * The issuer of the subject: the OpenID Connect `iss`, the SAML2 IdP entity id, the vendor
   * slot's name (VendorA/B/C); undefined without a subject claim.
   */
  get issuer (): string | undefined {
    return this.identity?.issuer
  }

  /** (scheme, issuer, subject): the user's identity, or undefined without a subject claim. */
  get identity (): UserIdentity | undefined {
    return identityOfTicket(this.ticket)
  }

  /**
   * The stable key of this user, derived from scheme, issuer and subject (43 characters,
   * base64url): what an application keys its own data on. Never the subject alone, never the
   * e-mail address. Undefined without a subject claim.
   */
  get userKey (): string | undefined {
    const identity = this.identity
    return identity === undefined ? undefined : userKeyOf(identity)
  }

  /** Display name: the normalized name, else email, else subject. */
  get name (): string {
    return this.find(ApplicationClaimTypes.Name) ?? this.find(ApplicationClaimTypes.Email) ?? this.subject ?? '(unnamed user)'
  }
}
