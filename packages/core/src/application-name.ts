/**
 * The application's name and what is derived from it: the configuration root key (and so the
 * `<Name>__` environment prefix), the cookie names (auth-contract.md, "Session cookie") and the
 * purpose strings that separate the keys derived from one key ring. An app passes its name as
 * `applicationName` (`createApp`, `runServer`, `runCheckConfig`, `loadConfiguration`); the default
 * is `ProjectTemplate`. Error codes never carry it.
 */

/** The default application name (and configuration root key). @public */
export const APPLICATION_NAME = 'ProjectTemplate'

/**
 * The root key of a public function's or option's caller that names none: the default
 * application's ({@link APPLICATION_NAME}, `ProjectTemplate`). The one place that default is
 * decided for callers of the public API (and `createApp`'s `applicationName`); inside the core
 * every function is handed the root of the app's configuration and has no default of its own.
 */
export function rootKeyOf (applicationName: string | undefined): string {
  return applicationName === undefined ? APPLICATION_NAME : applicationName
}

/**
 * PascalCase: an upper-case ASCII letter, then ASCII letters and digits, at most 50 characters.
 * The name becomes a configuration key, an environment-variable prefix and part of cookie names.
 */
const NAME_PATTERN = /^[A-Z][A-Za-z0-9]{0,49}$/

/** Cookie names before their prefix (see {@link cookieName}). @public */
export interface CookieNames {
  readonly session: string
  readonly antiforgery: string
  /** Followed by the flow id: one correlation cookie per sign-in in progress. */
  readonly correlation: string
}

/**
 * Purpose strings: each use of the key ring derives or seals under its own, versioned purpose, so
 * a value made for one use never opens as another, and a value made by one application never
 * opens in another. Changing one invalidates what it sealed.
 *
 * @public
 */
export interface Purposes {
  /** Key derivation of the ring's sealing keys (data-protection/key-ring.ts). */
  readonly keyRing: string
  /** The sealed server-side session record (session/ticket.ts). */
  readonly sessionRecord: string
  /** The session cookie's sealed reference to its record (session/ticket.ts). */
  readonly sessionReference: string
  /** A pending external sign-in's correlation cookie (sign-in/pending-flows.ts). */
  readonly correlation: string
  /** The anti-forgery HMAC key (plugins/csrf.ts). */
  readonly antiforgery: string
  /** A secret the app keeps at rest: `protectSecret` / `app.dataProtection` (data-protection/secrets.ts). */
  readonly protectedSecret: string
}

/** Everything named after the application. @public */
export interface ApplicationNaming {
  /** The application name, also the configuration root key (`<Name>:Authentication:Enabled`). */
  readonly rootKey: string
  /** kebab-case (`ProjectTemplate` -> `project-template`): the user-secrets directory (config/sources.ts). */
  readonly kebabName: string
  readonly cookieNames: CookieNames
  readonly purposes: Purposes
}

const namings = new Map<string, ApplicationNaming>()

/**
 * The names derived from `applicationName` (none: {@link rootKeyOf}, `ProjectTemplate`). Throws a TypeError for a
 * name that is not PascalCase letters and digits (a programming error of the app, not
 * configuration).
 *
 * @public
 */
export function applicationNaming (applicationName?: string): ApplicationNaming {
  const name = rootKeyOf(applicationName)
  const known = namings.get(name)
  if (known !== undefined) return known
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
    throw new TypeError('applicationName must be PascalCase: an upper-case ASCII letter, then ASCII letters and digits, at most 50 characters.')
  }
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2').split(' ')
  const naming: ApplicationNaming = Object.freeze({
    rootKey: name,
    kebabName: words.map((word) => word.toLowerCase()).join('-'),
    cookieNames: Object.freeze({
      session: `${name}.Web.Authentication`,
      antiforgery: `${name}.Antiforgery`,
      correlation: `${name}.Correlation.`
    }),
    purposes: Object.freeze({
      keyRing: `${name}.Web.Authentication.SessionTicket.v2`,
      sessionRecord: `${name}.Web.SessionRecord.v1`,
      sessionReference: `${name}.Web.Authentication.v2`,
      correlation: `${name}.Web.Correlation.v3`,
      antiforgery: `${name}.Antiforgery.v1`,
      protectedSecret: `${name}.Web.ProtectedSecret.v1`
    })
  })
  namings.set(name, naming)
  return naming
}

/** The names of the default application (`ProjectTemplate`). */
export const DEFAULT_NAMING = applicationNaming(APPLICATION_NAME)

/** Cookie names of the default application (see {@link applicationNaming} for another name). @public */
export const COOKIE_NAMES: CookieNames = DEFAULT_NAMING.cookieNames

/** Purpose strings of the default application. */
export const PURPOSES: Purposes = DEFAULT_NAMING.purposes

/**
 * `__Host-<name>` (Secure, Path=/, no Domain: bound to this origin), or `.<name>` for a cookie
 * that may not carry the prefix: the Development-only AllowInsecureHttp override.
 */
export function cookieName (name: string, hostPrefix: boolean): string {
  return hostPrefix ? `__Host-${name}` : `.${name}`
}
