/**
 * Claims and the signed-in principal, as plain data (no Fastify types). The application-owned
 * claim types are the contract's ("Claims"). Who the principal is: `scheme`, `issuer` and
 * `subject` together, or `userKey` (user-identity.ts).
 */
import { ApplicationClaimTypes, type AuthenticationTicket, type Claim } from './claims.js'
import { identityOfTicket, userKeyOf, type UserIdentity } from './user-identity.js'

export { ApplicationClaimTypes } from './claims.js'
export type { AuthenticationTicket, Claim } from './claims.js'

/**
 * What a credential sent with the request (a bearer token; API keys next) says about who acts,
 * beside the claims (issue 35, item 3): scope and client policies read it (authorization/scopes.ts).
 *
 * @public @experimental
 */
export interface AccessFacts {
  /** `scope` / `scp`, space-separated or an array. */
  readonly scopes: readonly string[]
  /** The OAuth client the token was issued to (`client_id`, `azp`, `appid`). */
  readonly clientId?: string
  /** A client-credentials token: the caller is the client itself, no user. */
  readonly machine: boolean
}

/** The authenticated user of a request. @public */
export class Principal {
  readonly ticket: AuthenticationTicket
  /**
   * Set when a credential sent with the request authenticated it (bearer/bearer-principal.ts),
   * never for a session: what the credential grants and which client acts. A policy asks the
   * principal, never its class.
   */
  declare readonly access?: AccessFacts

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

  /** The identity, read from the ticket once (a ticket does not change; null: not read yet). */
  #identity: UserIdentity | undefined | null = null

  /** (scheme, issuer, subject): the user's identity, or undefined without a subject claim. */
  get identity (): UserIdentity | undefined {
    if (this.#identity === null) this.#identity = identityOfTicket(this.ticket)
    return this.#identity
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

  /** The scopes the request's credential grants (its `application:scope` claims); none for a session. */
  get scopes (): readonly string[] {
    return this.access === undefined ? [] : this.claims.filter((claim) => claim.type === ApplicationClaimTypes.Scope).map((claim) => claim.value)
  }

  /** Display name: the normalized name, else email, else subject. */
  get name (): string {
    return this.find(ApplicationClaimTypes.Name) ?? this.find(ApplicationClaimTypes.Email) ?? this.subject ?? '(unnamed user)'
  }
}
