/**
 * The text of an API key (issue 42, item 2), modelled on GitHub's token format: a visible prefix
 * that secret scanners recognise (`projecttemplate_`), then base62 characters only, so a key
 * survives a double-click selection, a URL, a YAML file and a shell without quoting:
 *
 * ```
 * <prefix><id: 16 base62><secret: 43 base62><checksum: 6 base62>
 * ```
 *
 * - **id**: the key's public identifier (about 95 bits, random): the store's primary key, what the
 *   key list, audit lines and refusals name. Knowing it does not help to forge the key.
 * - **secret**: 43 base62 characters drawn uniformly (rejection sampling from `randomBytes`), at
 *   least 256 bits of entropy. Only a digest of the whole key is stored (api-key-digest.ts).
 * - **checksum**: CRC32 (`node:zlib`) of everything before it, as 6 base62 characters. Not a
 *   security check (anyone can compute it): it lets a typo, a truncated paste or a random string
 *   be refused without a store look-up, and lets a scanner tell a real key from look-alike text
 *   with few false positives, as GitHub's does.
 *
 * {@link parseApiKey} refuses a wrong prefix, length, alphabet or checksum with no I/O. Plain
 * data, no Fastify types.
 */
import { randomBytes } from 'node:crypto'
import { crc32 } from 'node:zlib'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** Characters of the id part. */
export const API_KEY_ID_LENGTH = 16
/** Characters of the secret part: 43 base62 characters carry 256.1 bits. */
export const API_KEY_SECRET_LENGTH = 43
/** Characters of the checksum: a CRC32 (at most 4,294,967,295) in base62. */
export const API_KEY_CHECKSUM_LENGTH = 6
/** Characters after the prefix. */
export const API_KEY_BODY_LENGTH = API_KEY_ID_LENGTH + API_KEY_SECRET_LENGTH + API_KEY_CHECKSUM_LENGTH

/** What a prefix may be: a lower-case letter, then lower-case letters and digits, ending in `_` (3 to 24 characters). */
export const API_KEY_PREFIX_PATTERN = /^[a-z][a-z0-9]{1,22}_$/

const BODY = new RegExp(`^[0-9A-Za-z]{${API_KEY_BODY_LENGTH}}$`)

/** `length` base62 characters drawn uniformly: bytes of 248 and above are discarded (248 = 4 x 62). */
export function randomBase62 (length: number): string {
  let out = ''
  while (out.length < length) {
    for (const byte of randomBytes(length + 8)) {
      if (byte >= 248) continue
      out += BASE62[byte % 62]
      if (out.length === length) break
    }
  }
  return out
}

function base62Of (value: number, width: number): string {
  let out = ''
  let rest = value
  for (let index = 0; index < width; index++) {
    out = (BASE62[rest % 62] as string) + out
    rest = Math.floor(rest / 62)
  }
  return out
}

/** The checksum of a key's text before its checksum. */
export const checksumOf = (text: string): string => base62Of(crc32(text), API_KEY_CHECKSUM_LENGTH)

/** A new key: its text (shown once) and id. */
export interface GeneratedApiKey {
  readonly id: string
  /** The whole key. Secret: shown to its owner once, never logged, never stored. */
  readonly text: string
  /** Its last four characters (part of the checksum): what a key list shows beside the prefix. */
  readonly lastFour: string
}

/** A new key under `prefix` (already checked by the scheme's rule). */
export function generateApiKey (prefix: string): GeneratedApiKey {
  const id = randomBase62(API_KEY_ID_LENGTH)
  const head = `${prefix}${id}${randomBase62(API_KEY_SECRET_LENGTH)}`
  const text = `${head}${checksumOf(head)}`
  return { id, text, lastFour: text.slice(-4) }
}

/** Why a text is not a key of the prefix: no store is asked. @public @experimental */
export type MalformedApiKey = 'prefix' | 'length' | 'alphabet' | 'checksum'

/** A parsed key: its prefix and id, or why it is malformed. @public @experimental */
export type ParsedApiKey =
  | { readonly ok: true, readonly prefix: string, readonly id: string, readonly checksumOk: true }
  | { readonly ok: false, readonly reason: MalformedApiKey }

/**
 * Reads `text` as a key of one of `prefixes` (the enabled ApiKey schemes'; no prefix is another's
 * prefix, settings-rules.ts): the prefix, length, alphabet and checksum are checked, nothing is
 * looked up. The secret part is not returned: the caller digests the whole text.
 *
 * @public @experimental
 */
export function parseApiKey (text: string, prefixes: readonly string[]): ParsedApiKey {
  const prefix = prefixes.find((candidate) => text.startsWith(candidate))
  if (prefix === undefined) return { ok: false, reason: 'prefix' }
  const body = text.slice(prefix.length)
  if (body.length !== API_KEY_BODY_LENGTH) return { ok: false, reason: 'length' }
  if (!BODY.test(body)) return { ok: false, reason: 'alphabet' }
  const checksumAt = text.length - API_KEY_CHECKSUM_LENGTH
  if (checksumOf(text.slice(0, checksumAt)) !== text.slice(checksumAt)) return { ok: false, reason: 'checksum' }
  return { ok: true, prefix, id: body.slice(0, API_KEY_ID_LENGTH), checksumOk: true }
}
