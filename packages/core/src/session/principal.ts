/**
 * Claims and the signed-in principal, as plain data (no Fastify types). The application-owned
 * claim types are the contract's ("Claims").
 */

/** Application-owned claim types (auth-contract.md, "Claims"). */
export const ApplicationClaimTypes = {
  Subject: 'application:subject',
  Name: 'application:name',
  Email: 'application:email',
  Role: 'application:role',
  Group: 'application:group',
  Permission: 'application:permission'
} as const

export interface Claim {
  readonly type: string
  readonly value: string
  /** The authority that asserted the claim (provider issuer or scheme). */
  readonly issuer: string
}

/** A session as the state store keeps it (sealed). Times are seconds since the epoch. */
export interface AuthenticationTicket {
  /** Random per sign-in; anti-forgery tokens are bound to it. */
  readonly sessionId: string
  /** Scheme that authenticated the user (OpenIdConnect, Saml2, VendorA, ... or a consumer's). */
  readonly scheme: string
  readonly claims: readonly Claim[]
  /** When the ticket was issued or last renewed (sliding expiration). */
  readonly issuedAt: number
  /** Sliding expiry: renewal moves it, never past {@link absoluteExpiresAt}. */
  readonly expiresAt: number
  /** Absolute expiry, fixed at sign-in: the session ends then whatever renewals happened. */
  readonly absoluteExpiresAt: number
  /** Provider tokens, present only when that provider's SaveTokens is true. */
  readonly tokens?: Readonly<Record<string, string>>
}

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

  get subject (): string | undefined {
    return this.find(ApplicationClaimTypes.Subject)
  }

  /** Display name: the normalized name, else email, else subject. */
  get name (): string {
    return this.find(ApplicationClaimTypes.Name) ?? this.find(ApplicationClaimTypes.Email) ?? this.subject ?? '(unnamed user)'
  }
}
