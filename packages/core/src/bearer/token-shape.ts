/**
 * The checks a bearer token passes before any cryptography (issue 35, "Bad input"): its size,
 * its compact JWS shape (three base64url segments), a JSON-object header whose `alg` is one the
 * scheme accepts and whose `typ`, when present, says access token (`at+jwt`, RFC 9068 section
 * 2.1) or plain `JWT` (what Entra ID, Okta, Keycloak and Auth0 send), no `crit` and no `b64`
 * other than true (jose honours `b64: false` when `crit` names it, RFC 7797: the payload segment
 * would then be signed as raw bytes while this file reads it as base64url; the core uses no JWS
 * extension, so any `crit` is refused here rather than left to jose), and a JSON-object payload.
 * The payload read here is not trusted until the signature has verified (access-token.ts).
 * Plain inputs, no Fastify types.
 */
import { BearerTokenError } from './failures.js'

/**
 * Largest accepted token, in characters (8 KB). Access tokens of Entra ID, Okta, Keycloak and
 * Auth0 are 1 to 4 KB; one with hundreds of roles stays under 8 KB. Anything longer is refused
 * before it is decoded.
 */
export const MAX_BEARER_TOKEN_BYTES = 8 * 1024

/** Compact JWS: header and payload non-empty, the signature may be empty only to be refused as `alg: none`. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/

/** Whether `token` is shaped as a compact JWS (a JWT): otherwise, with introspection configured, it is an opaque token (introspection.ts). */
export function isCompactJws (token: string): boolean {
  return COMPACT_JWS.test(token)
}

/** `typ` values of an access token, compared case-insensitively with an optional `application/` (RFC 7515 section 4.1.9). */
const ACCESS_TOKEN_TYPES = new Set(['at+jwt', 'jwt'])

export interface TokenHeader {
  readonly alg: string
  readonly kid?: string
  readonly typ?: string
}

/** A token whose shape passed: its header, and its payload (unverified until the signature is). */
export interface ShapedToken {
  readonly header: TokenHeader
  readonly payload: Readonly<Record<string, unknown>>
}

function jsonObjectOf (segment: string): Record<string, unknown> {
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'))
  } catch (error) {
    throw new BearerTokenError('malformed', { cause: error })
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new BearerTokenError('malformed')
  return value as Record<string, unknown>
}

/** `typ` as a media type without its optional `application/`, lower-cased (RFC 7515 section 4.1.9: media types compare case-insensitively). */
const mediaTypeOf = (typ: string): string => {
  const lower = typ.toLowerCase()
  return lower.startsWith('application/') ? lower.slice('application/'.length) : lower
}

/** Whether `typ` names an access token: `at+jwt`, `JWT`, or either with `application/`. */
export function isAccessTokenType (typ: string): boolean {
  return ACCESS_TOKEN_TYPES.has(mediaTypeOf(typ))
}

/** Whether `typ` is RFC 9068's (section 2.1): `at+jwt` or `application/at+jwt`, in any case. */
export function isJwtAccessTokenType (typ: string | undefined): boolean {
  return typ !== undefined && mediaTypeOf(typ) === 'at+jwt'
}

/**
 * The header and payload of `token`, or {@link BearerTokenError}: `oversized`, `malformed`,
 * `type`, `unsupported_header` or `algorithm` (not in `algorithms`, which never holds `none` or an
 * HMAC algorithm: settings-rules.ts refuses them at startup).
 */
export function shapeOf (token: string, algorithms: ReadonlySet<string>): ShapedToken {
  if (token.length > MAX_BEARER_TOKEN_BYTES) throw new BearerTokenError('oversized')
  if (!COMPACT_JWS.test(token)) throw new BearerTokenError('malformed')
  const [headerSegment = '', payloadSegment = ''] = token.split('.')
  const header = jsonObjectOf(headerSegment)
  const { alg, kid, typ } = header
  if (typeof alg !== 'string' || (kid !== undefined && typeof kid !== 'string') || (typ !== undefined && typeof typ !== 'string')) {
    throw new BearerTokenError('malformed')
  }
  if (typ !== undefined && !isAccessTokenType(typ)) throw new BearerTokenError('type')
  if (header.crit !== undefined || (header.b64 !== undefined && header.b64 !== true)) throw new BearerTokenError('unsupported_header')
  if (!algorithms.has(alg)) throw new BearerTokenError('algorithm')
  const payload = jsonObjectOf(payloadSegment)
  return {
    header: { alg, ...(kid === undefined ? {} : { kid }), ...(typ === undefined ? {} : { typ }) },
    payload
  }
}
