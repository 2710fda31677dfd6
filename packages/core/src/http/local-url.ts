/**
 * The local-URL rule for every return URL (docs/security.md, "Local URLs"). A value is local when
 * it is at most 2048 characters, starts with exactly one `/` that is not followed by `/` or `\`,
 * and consists only of printable ASCII (U+0021 to U+007E) with no `\` anywhere. The leading `/`
 * may not be followed by an encoded slash, backslash or percent sign (`%2F`, `%5C`, `%25`), so a
 * downstream component that decodes once or twice more still sees a path. Everything else
 * (schemes, protocol-relative or backslash forms, whitespace, control or non-ASCII characters) is
 * rejected rather than repaired. Such values are also always safe in a `Location` header.
 */
export const MAX_LOCAL_URL_LENGTH = 2048

const ENCODED_SEPARATOR = /^%(2f|5c|25)$/i

export function isLocalUrl (value: unknown): value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_LOCAL_URL_LENGTH) return false
  if (value.charCodeAt(0) !== 0x2f) return false
  if (value.length > 1) {
    const second = value.charCodeAt(1)
    if (second === 0x2f || second === 0x5c) return false
    if (second === 0x25 && ENCODED_SEPARATOR.test(value.slice(1, 4))) return false
  }
  for (let index = 1; index < value.length; index++) {
    const code = value.charCodeAt(index)
    if (code < 0x21 || code > 0x7e || code === 0x5c) return false
  }
  return true
}
