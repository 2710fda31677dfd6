/**
 * The claim and ticket types and the application-owned claim types (auth-contract.md, "Claims"):
 * the shared basics at the bottom of the session folder, imported by principal.ts and
 * user-identity.ts alike. Plain data.
 */
/**
 * Application-owned claim types (auth-contract.md, "Claims"). `Scope` is an extension (issue 40,
 * item 2): the scopes a bearer call's access token grants (`scope` / `scp`), what a client may do
 * on a user's behalf, read by scope policies (authorization/scopes.ts) and never by permission
 * policies. Only a verified access token asserts it; it is not a ClaimMappings target.
 *
 * @public
 */
export const ApplicationClaimTypes = {
  Subject: 'application:subject',
  Name: 'application:name',
  Email: 'application:email',
  Role: 'application:role',
  Group: 'application:group',
  Permission: 'application:permission',
  Scope: 'application:scope'
} as const

/**
 * What kind of caller an identity names (session/user-identity.ts): absent for a user (every
 * session, a bearer token on behalf of a user); `client` for an OAuth client acting as itself (a
 * client-credentials token, issue 40 item 6), whose identity never equals a user's, even when
 * its client id equals a user's subject.
 * @public @experimental
 */
export type IdentityKind = 'client'

/** @public */
export interface Claim {
  readonly type: string
  readonly value: string
  /** The authority that asserted the claim (provider issuer or scheme). */
  readonly issuer: string
}

/** A session as the state store keeps it (sealed). Times are seconds since the epoch. @public */
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
  /**
   * What the provider proved about how and when the user authenticated (step-up authentication,
   * session/authentication-proof.ts); absent when it proved nothing or before it was recorded.
   */
  readonly authentication?: AuthenticationProof
  /**
   * `client` on the ticket of a bearer call by a client acting as itself ({@link IdentityKind});
   * never set on a session.
   */
  readonly kind?: IdentityKind
}

/**
 * How and when the user authenticated at the provider, as its response proved it: the OpenID
 * Connect ID token's `acr`, `amr` and `auth_time`, or the SAML2 assertion's
 * `AuthnContextClassRef` (as `acr`) and `AuthnInstant` (as `authTime`). The scheme that proved it
 * is the ticket's. Read by policies that require step-up authentication.
 *
 * @public @experimental
 */
export interface AuthenticationProof {
  /** The authentication context class: OpenID Connect `acr`, SAML2 `AuthnContextClassRef`. */
  readonly acr?: string
  /** Authentication methods (RFC 8176: `pwd`, `mfa`, `hwk`, `otp`...); OpenID Connect only. */
  readonly amr?: readonly string[]
  /** When the user authenticated, seconds since the epoch: `auth_time`, SAML2 `AuthnInstant`. */
  readonly authTime?: number
}
