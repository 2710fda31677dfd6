/**
 * What the store keeps of a key: a versioned digest, `v1:<base64url>`, never the key (issue 42,
 * item 2; better-auth PR #1380 stored keys in plain text).
 *
 * **Why SHA-256 and not a password hash or an HMAC.** A key carries 256 random bits
 * (api-key-format.ts): no dictionary, no brute force, so a slow hash (scrypt, Argon2) buys nothing
 * and would cost every API call tens of milliseconds. An HMAC under a key of the key ring would add
 * a second secret but tie every stored digest to that key: rotating the ring would break every API
 * key (better-auth #5397's failure). `v1` is SHA-256 over a fixed label, NUL and the whole key
 * text (prefix, id, secret, checksum), so a digest made for another use never matches.
 *
 * **Why a version.** A digest names its algorithm. A release that adds `v2` digests new keys and
 * rewrites an old key's digest the first time it is used (api-key-service.ts), and keeps every
 * `v1` key working meanwhile; a digest of a version this release does not know (written by a newer
 * release during a rolling upgrade) is refused as an unknown key, never misread.
 *
 * Digests are compared in constant time ({@link digestMatches}). Plain data.
 */
import { timingSafeEqual } from 'node:crypto'
import { sha256Base64url } from '../sha256.js'

/** One digest algorithm: the key text in, the digest's text after `<version>:` out. */
export type DigestAlgorithm = (keyText: string) => string

/** Digest algorithms by version, and the one new digests are made with. */
export interface DigestScheme {
  readonly current: string
  readonly algorithms: Readonly<Record<string, DigestAlgorithm>>
}

/** v1: SHA-256 over `api-key.v1`, NUL and the key text, base64url (43 characters). */
export const digestV1: DigestAlgorithm = (keyText) => sha256Base64url(`api-key.v1\u0000${keyText}`)

/** The digests of this release. */
export const API_KEY_DIGESTS: DigestScheme = Object.freeze({ current: 'v1', algorithms: Object.freeze({ v1: digestV1 }) })

/** The version of a stored digest (`v1` of `v1:...`), or undefined when it has none. */
export function digestVersionOf (digest: string): string | undefined {
  const at = digest.indexOf(':')
  return at <= 0 ? undefined : digest.slice(0, at)
}

/** `keyText`'s digest in `version` (default: the current one); undefined for a version `scheme` lacks. */
export function digestOf (keyText: string, scheme: DigestScheme = API_KEY_DIGESTS, version: string = scheme.current): string | undefined {
  const algorithm = Object.hasOwn(scheme.algorithms, version) ? scheme.algorithms[version] : undefined
  return algorithm === undefined ? undefined : `${version}:${algorithm(keyText)}`
}

/** Whether `keyText` is the key `stored` is the digest of, in `stored`'s own version; compared in constant time. */
export function digestMatches (keyText: string, stored: string, scheme: DigestScheme = API_KEY_DIGESTS): boolean {
  const version = digestVersionOf(stored)
  const computed = version === undefined ? undefined : digestOf(keyText, scheme, version)
  if (computed === undefined) return false
  const a = Buffer.from(computed, 'utf8')
  const b = Buffer.from(stored, 'utf8')
  return a.length === b.length && timingSafeEqual(a, b)
}
