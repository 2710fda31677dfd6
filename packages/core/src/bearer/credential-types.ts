/**
 * The request-credential scheme types (issue 43, item 1): the kinds of credential a caller sends
 * with each request instead of a session cookie. JwtBearer (bearer-schemes.ts) now; API keys and
 * SCIM connection tokens are the next types. The bearer handler (bearer-handler.ts) asks this
 * registry, in one place, which type a token sent as `Authorization: Bearer` belongs to: each
 * registered type recognises its own tokens by their shape alone (a prefix, a checksum: no
 * look-up), in registration order; a token none of them recognises goes to the default type,
 * JwtBearer, which takes JWTs and its issuers' opaque tokens. Every type authenticates a token
 * into the same result, a {@link BearerAuthentication}, whose principal policies read unchanged;
 * the handler then applies the deny checks (session/deny-checks.ts), the refusal limit and the
 * challenge to every type alike. A type may also read a header of its own ({@link
 * CredentialType.ownHeader}: API keys' `X-API-Key`); the handler reads it only when no
 * `Authorization` header came (both at once are refused), and only that type is asked. Plain
 * inputs, no Fastify types.
 */
import type { DenyCheck } from '../session/deny-checks.js'
import type { BearerFailure } from './failures.js'
import type { BearerAuthentication } from './jwt-bearer-scheme.js'
import type { Presentation } from './presentation.js'
import type { TokenValidatedHook } from './token-validated-hook.js'

/** Headers no type may claim as its own. */
const RESERVED_HEADERS: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization', 'cookie', 'dpop', 'host', 'content-type', 'content-length'])

/** What the handler tells a type about the request besides its token. @public @experimental */
export interface CredentialContext {
  /** The client's address as a counter key (state/rate-limit-store.ts `clientKeyOf`: a hash, never the address). */
  readonly client: string
  /** The header the token came in: `authorization`, or the type's {@link CredentialType.ownHeader}. */
  readonly header: string
}

/**
 * One request-credential scheme type. `path` is the request's path before the query, as sent;
 * `names` the route's `config.bearerSchemes` (undefined: not restricted), which a type applies to
 * its own scheme names. @public @experimental
 */
export interface CredentialType {
  /** The type's name, as a scheme's `Type` spells it (JwtBearer, ApiKey). */
  readonly type: string
  /**
   * Whether `token` is this type's, by its shape alone (no look-up, no outbound call). The default
   * type is asked only when no registered type recognises the token.
   */
  recognises: (token: string) => boolean
  /** The caller of `token` from this type's cache, synchronously (most API calls end here); undefined when not cached. */
  cached: (token: string, path: string, names: ReadonlySet<string> | undefined) => BearerAuthentication | undefined
  /**
   * Called once when the handler accepts a caller {@link cached} answered (its deny checks passed):
   * what a type counts per served call (API keys: the per-key limit). `cached` itself only reads,
   * since the handler may ask it twice for one request.
   */
  admitted?: (authentication: BearerAuthentication) => void
  /**
   * Authenticates `token` now (and caches the result as the type sees fit); throws a
   * {@link BearerTokenError} to refuse it, or a {@link CredentialHeldError} to hold the request
   * back (429). `context` says where the token came from and who sent it.
   */
  verify: (token: string, path: string, names: ReadonlySet<string> | undefined, context?: CredentialContext) => Promise<BearerAuthentication>
  /**
   * A request header of this type's own, lower case (`x-api-key`), read on the routes that accept
   * bearer tokens when no `Authorization` header came; its whole value is the token, which goes to
   * this type only (never to JwtBearer). Never a query parameter.
   */
  readonly ownHeader?: string
  /** Why a caller it authenticated may not be used as presented (JwtBearer: a DPoP-bound token sent as `Bearer`), or undefined. */
  refusalOf?: (authentication: BearerAuthentication, presentation: Presentation) => BearerFailure | undefined
}

/** The registered types, and the default type that takes every token none of them recognises. */
export class CredentialTypes {
  readonly #default: CredentialType
  readonly #types: CredentialType[] = []
  /** The registered types' own headers, kept as types register (read on every request). */
  readonly #ownHeaders: string[] = []

  constructor (defaultType: CredentialType) {
    this.#default = defaultType
  }

  /** Adds a type, consulted before the default type and after the types added before it. */
  register (type: CredentialType): void {
    if (type.type === this.#default.type || this.#types.some((known) => known.type === type.type)) throw new TypeError(`The credential type ${type.type} is registered already.`)
    if (type.ownHeader !== undefined && (!/^[a-z0-9-]+$/.test(type.ownHeader) || RESERVED_HEADERS.has(type.ownHeader) || this.typeOfHeader(type.ownHeader) !== undefined)) {
      throw new TypeError(`The credential type ${type.type} cannot read the header ${type.ownHeader}: a lower-case name no other type reads, not a standard header.`)
    }
    this.#types.push(type)
    if (type.ownHeader !== undefined) this.#ownHeaders.push(type.ownHeader)
  }

  /** Whether any type besides the default one is registered. */
  get extended (): boolean {
    return this.#types.length > 0
  }

  /** The headers of their own the registered types read (lower case), in registration order. */
  ownHeaders (): readonly string[] {
    return this.#ownHeaders
  }

  /** The type whose own header is `name` (lower case), or undefined. */
  typeOfHeader (name: string): CredentialType | undefined {
    return this.#types.find((type) => type.ownHeader === name)
  }

  /** The one type `token` (sent as `Authorization: Bearer`) goes to. */
  typeOf (token: string): CredentialType {
    for (const type of this.#types) if (type.recognises(token)) return type
    return this.#default
  }
}

/**
 * `app.requestCredentials` (plugins/bearer.ts): where a feature or an app adds a
 * request-credential type and a deny check, before the app's routes are registered. @public @experimental
 */
export interface RequestCredentialsApi {
  /** Adds a request-credential type (API keys, SCIM connection tokens), asked before JwtBearer; throws when its name is taken. */
  registerType: (type: CredentialType) => void
  /**
   * Adds a deny check (session/deny-checks.ts): asked for every caller a request-credential type
   * authenticates, cached or verified now; true refuses the request (`bearer.refused`, failure
   * `denied`: 401 `invalid_token`).
   */
  addDenyCheck: (check: DenyCheck) => void
  /**
   * Adds a hook (token-validated-hook.ts; ASP.NET's `OnTokenValidated`) called once per JwtBearer
   * token verified now, never on a cache hit: it may add claims or refuse the token (failure
   * `hook`: 401 `invalid_token`); the verified-token cache keeps its answer.
   */
  onTokenValidated: (hook: TokenValidatedHook) => void
}
