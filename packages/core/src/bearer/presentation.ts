/**
 * How a request presents its credential (RFC 6750 section 2.1, RFC 9449 section 7.1):
 * `Authorization: Bearer <token>` or `Authorization: DPoP <token>` with a `DPoP` proof header, or
 * a credential type's own header (`X-API-Key: <key>`, credential-types.ts), answered as `Bearer`.
 * A credential in both `Authorization` and an own header is ambiguous, and refused. The
 * header's scheme decides which challenge a refusal answers with; the token must be a `b64token`;
 * a header over {@link MAX_AUTHORIZATION_BYTES} is refused as oversized before any parsing. Plain
 * strings, no Fastify types.
 */

/** How the request carried its token: decides the challenge of a refusal. @public @experimental */
export type Presentation = 'Bearer' | 'DPoP'

/** The longest `Authorization` value parsed: longer is refused as `oversized`. */
export const MAX_AUTHORIZATION_BYTES = 9000

/** RFC 6750 section 2.1 `b64token`, after `Bearer` and one or more spaces. */
const BEARER_HEADER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i
/** The same after `DPoP` (RFC 9449 section 7.1). */
const DPOP_HEADER = /^DPoP +([A-Za-z0-9\-._~+/]+=*) *$/i
/** A `b64token` alone: a type's own header's value. */
const OWN_HEADER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/

/** The scheme of an `Authorization` value, or undefined when it is neither Bearer nor DPoP (the handler then leaves the request alone). */
export function presentationOf (header: string | undefined): Presentation | undefined {
  if (header === undefined || header.length < 6) return undefined
  if (header.slice(0, 7).toLowerCase() === 'bearer ') return 'Bearer'
  return header.slice(0, 5).toLowerCase() === 'dpop ' ? 'DPoP' : undefined
}

/** A request's headers as Node gives them (names in lower case). */
export interface RequestHeaders {
  readonly authorization?: string
  readonly [name: string]: string | string[] | undefined
}

/** The credential a request sent: the header it came in (`authorization` or a type's own), its value, how it is answered. */
export interface SentCredential {
  readonly header: string
  readonly value: string
  readonly presentation: Presentation
}

/**
 * The credential of a request's headers (Node's, names in lower case): a type's own header
 * (`ownHeaders`, credential-types.ts) when one is set and no `Authorization` came; `ambiguous`
 * when both came (neither is used); else `Authorization` when it is Bearer or DPoP; else none.
 */
export function sentCredentialOf (headers: RequestHeaders, ownHeaders: readonly string[]): SentCredential | 'ambiguous' | undefined {
  const authorization = headers.authorization
  for (const name of ownHeaders) {
    const value = headers[name]
    if (value === undefined) continue
    if (authorization !== undefined) return 'ambiguous'
    // Node joins a repeated header with ", ", which no token has: a repeated header is malformed.
    return { header: name, value: typeof value === 'string' ? value : value.join(', '), presentation: 'Bearer' }
  }
  const presentation = presentationOf(authorization)
  return authorization === undefined || presentation === undefined ? undefined : { header: 'authorization', value: authorization, presentation }
}

/** The token of a type's own header: the whole value, a `b64token` (no scheme word, no spaces), or undefined. */
export function ownHeaderTokenOf (value: string): string | undefined {
  return value.length <= MAX_AUTHORIZATION_BYTES && OWN_HEADER_TOKEN.test(value) ? value : undefined
}

/** The token of a `Bearer` value as sent, for the cache look-up (a token the cache holds was well formed when verified). */
export function sentBearerToken (header: string): string {
  return header.slice(7).trim()
}

/** The token of a well-formed value, or undefined (malformed, or over {@link MAX_AUTHORIZATION_BYTES}). */
export function tokenOf (header: string, presentation: Presentation): string | undefined {
  if (header.length > MAX_AUTHORIZATION_BYTES) return undefined
  return (presentation === 'Bearer' ? BEARER_HEADER : DPOP_HEADER).exec(header)?.[1]
}

/** The values of every `DPoP` header in a raw header list (name, value, ...); at most three are read. Node joins repeated unknown headers; the raw list does not. */
export function dpopProofsOf (rawHeaders: readonly string[]): string[] {
  const proofs: string[] = []
  for (let index = 0; index + 1 < rawHeaders.length && proofs.length < 3; index += 2) {
    if ((rawHeaders[index] as string).toLowerCase() === 'dpop') proofs.push(rawHeaders[index + 1] as string)
  }
  return proofs
}

/** The request's path, without query. */
export function pathOf (url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}
