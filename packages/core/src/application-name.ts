/**
 * The project's name and what is derived from it: the configuration root key (config/schema.ts
 * ROOT_KEY), the page title, the cookie names (auth-contract.md, "Session cookie") and the
 * purpose strings that separate the keys derived from one key ring. The generator renames the
 * project by rewriting this one value (and the documentation); error codes do not carry it.
 */
export const APPLICATION_NAME = 'ProjectTemplate'

/** Cookie names before their prefix (see {@link cookieName}). */
export const COOKIE_NAMES = Object.freeze({
  session: `${APPLICATION_NAME}.Web.Authentication`,
  antiforgery: `${APPLICATION_NAME}.Antiforgery`,
  /** Followed by the flow id: one correlation cookie per sign-in in progress. */
  correlation: `${APPLICATION_NAME}.Correlation.`
})

/**
 * `__Host-<name>` (Secure, Path=/, no Domain: bound to this origin), or `.<name>` for a cookie
 * that may not carry the prefix: the Development-only AllowInsecureHttp override.
 */
export function cookieName (name: string, hostPrefix: boolean): string {
  return hostPrefix ? `__Host-${name}` : `.${name}`
}

/**
 * Purpose strings: each use of the key ring derives or seals under its own, versioned purpose, so
 * a value made for one use never opens as another. Changing one invalidates what it sealed.
 */
export const PURPOSES = Object.freeze({
  /** Key derivation of the ring's sealing keys (auth/key-ring.ts). */
  keyRing: `${APPLICATION_NAME}.Web.Authentication.SessionTicket.v2`,
  /** The sealed server-side session record (auth/ticket.ts). */
  sessionRecord: `${APPLICATION_NAME}.Web.SessionRecord.v1`,
  /** The session cookie's sealed reference to its record (auth/ticket.ts). */
  sessionReference: `${APPLICATION_NAME}.Web.Authentication.v2`,
  /** A pending external sign-in's stored state (plugins/external-sign-in.ts). */
  correlation: `${APPLICATION_NAME}.Web.Correlation.v3`,
  /** The anti-forgery HMAC key (plugins/csrf.ts). */
  antiforgery: `${APPLICATION_NAME}.Antiforgery.v1`
})
