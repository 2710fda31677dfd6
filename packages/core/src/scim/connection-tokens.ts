/**
 * Connection tokens (issue 41, item 2): the secret a customer's directory sends as
 * `Authorization: Bearer <token>` to its own connection's endpoints. 256 random bits behind a
 * recognisable prefix (secret scanners find a leaked one), shown once when issued, stored only as
 * its SHA-256 digest (the secret has 256 bits of entropy, so a fast hash is enough: nothing to
 * guess), compared in constant time with the connection's active tokens read from the directory
 * store on every request, so a revocation or an expiry holds from the next request on every
 * instance that shares the store. Plain inputs; no Fastify types.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'
import type { ConnectionToken, DirectoryStore } from '../directory/directory-store.js'
import { sha256Base64url } from '../sha256.js'

/** The prefix of every connection token. @public @experimental */
export const CONNECTION_TOKEN_PREFIX = 'scimtoken_'

/** Random bytes of a token's secret part (256 bits). */
const SECRET_BYTES = 32

/** A token: the prefix and 43 base64url characters; anything else is refused before hashing. */
const TOKEN_FORMAT = /^scimtoken_[A-Za-z0-9_-]{43}$/

/** What {@link issueConnectionToken} returns: the secret, shown this once. @public @experimental */
export interface IssuedConnectionToken {
  /** The token's id (for `revokeToken` and audit lines; not secret). */
  readonly id: string
  /** The secret to give the customer's directory. Never stored, never logged. */
  readonly token: string
  readonly created: string
  readonly expires?: string
}

/** The stored digest of a token: `sha256:<base64url>`. */
export function tokenDigestOf (token: string): string {
  return `sha256:${sha256Base64url(token)}`
}

/** Issues a token for `connection` and stores its digest (a third active token is a `DirectoryConflictError`). */
export async function issueConnectionToken (store: DirectoryStore, connection: string, expires?: Date): Promise<IssuedConnectionToken> {
  if (expires !== undefined && (!(expires instanceof Date) || Number.isNaN(expires.getTime()))) throw new TypeError('createToken: expiresAt must be a valid Date.')
  const token = `${CONNECTION_TOKEN_PREFIX}${randomBytes(SECRET_BYTES).toString('base64url')}`
  const stored = await store.addToken(connection, { id: randomUUID(), digest: tokenDigestOf(token), ...(expires === undefined ? {} : { expires: expires.toISOString() }) })
  return { id: stored.id, token, created: stored.created, ...(stored.expires === undefined ? {} : { expires: stored.expires }) }
}

/** The bearer token of an `Authorization` header value, or undefined (another scheme, malformed). */
export function bearerTokenOf (header: string | undefined): string | undefined {
  if (typeof header !== 'string') return undefined
  const match = /^Bearer +([^\s]+) *$/i.exec(header)
  return match?.[1]
}

/** Whether `presented` equals one of `tokens`' digests, compared in constant time against each. */
export function matchesActiveToken (presented: string, tokens: readonly ConnectionToken[]): ConnectionToken | undefined {
  const digest = Buffer.from(tokenDigestOf(presented))
  let found: ConnectionToken | undefined
  for (const token of tokens) {
    const stored = Buffer.from(token.digest)
    // Every digest is compared (no early exit), each in constant time.
    if (stored.length === digest.length && timingSafeEqual(stored, digest) && found === undefined) found = token
  }
  return found
}

/**
 * The active token of `connection` that the `Authorization` header carries, or undefined: no
 * header, not `Bearer`, not a connection token's shape (no store round trip), or no active token
 * of this connection matches (another connection's token, a revoked or expired one).
 */
export async function authenticateConnection (store: DirectoryStore, connection: string, authorization: string | undefined): Promise<ConnectionToken | undefined> {
  const presented = bearerTokenOf(authorization)
  if (presented === undefined || !TOKEN_FORMAT.test(presented)) return undefined
  return matchesActiveToken(presented, await store.activeTokens(connection))
}
