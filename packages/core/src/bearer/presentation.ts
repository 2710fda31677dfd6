/**
 * How a request presents its credential (RFC 6750 section 2.1, RFC 9449 section 7.1):
 * `Authorization: Bearer <token>` or `Authorization: DPoP <token>` with a `DPoP` proof header. The
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

/** The scheme of an `Authorization` value, or undefined when it is neither Bearer nor DPoP (the handler then leaves the request alone). */
export function presentationOf (header: string | undefined): Presentation | undefined {
  if (header === undefined || header.length < 6) return undefined
  if (header.slice(0, 7).toLowerCase() === 'bearer ') return 'Bearer'
  return header.slice(0, 5).toLowerCase() === 'dpop ' ? 'DPoP' : undefined
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
