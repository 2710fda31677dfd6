/**
 * The claim and ticket types and the application-owned claim types (auth-contract.md, "Claims"):
 * the shared basics at the bottom of the session folder, imported by principal.ts and
 * user-identity.ts alike. Plain data.
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
  /** When the user signed in (renewals keep it); absent on sessions stored before it existed. */
  readonly startedAt?: number
  /** Browser family and operating system at sign-in (session/device.ts), for the sessions page. */
  readonly device?: string
}
