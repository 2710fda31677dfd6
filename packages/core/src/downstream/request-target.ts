/**
 * Where a downstream call may go: a path relative to the API's BaseUrl, on its origin and below
 * its path, so that the access token attached to the call never reaches another server. Anything
 * else is refused before a connection is made: an absolute or scheme-relative URL (`https://x`,
 * `//x`), a backslash, a control character or space, a path that leaves the base path once dot
 * segments are resolved (`/../admin`; WHATWG URL treats `%2e` as a dot too), and an encoded
 * slash, backslash or dot in the path part (`%2f`, `%5c`, `%2e`), which a server could decode into
 * one of those after this check. Also refused in the path part (issue 40, item 6): `;` and its
 * encoding (path parameters: `/..;/admin` leaves the base path on Tomcat and Spring), `%25` (an
 * encoded percent sign: decoded twice it becomes any of the above), and a character that a
 * server's Unicode normalization turns into a dot, slash, backslash or delimiter (NFKC: U+2024
 * ONE DOT LEADER, U+FF0E FULLWIDTH FULL STOP, U+FF0F FULLWIDTH SOLIDUS, ...; and the ideographic
 * full stops U+3002 and U+FF61, which IDNA treats as dots), raw or percent-encoded.
 */

/** After NFKC: characters a disguised character must not become. */
const DELIMITERS = /[./\\;%?#\u3002]/

/** Whether the path part (before `?` or `#`) holds `;`, `%`, or a character that normalizes into a dot or a delimiter, raw or encoded. */
function hasDisguisedDelimiter (pathPart: string): boolean {
  let decoded: string
  try {
    decoded = decodeURIComponent(pathPart)
  } catch {
    // Not UTF-8 once decoded: what a server makes of it cannot be known here.
    return true
  }
  if (decoded.includes(';') || decoded.includes('%')) return true
  for (const character of decoded) {
    if (character.charCodeAt(0) >= 0x80 && DELIMITERS.test(character.normalize('NFKC'))) return true
  }
  return false
}

/** The URL of `path` under `baseUrl` (an absolute URL without query or fragment), or undefined when it is refused. */
export function downstreamTarget (baseUrl: URL, path: string): URL | undefined {
  if (typeof path !== 'string' || !path.startsWith('/') || path.startsWith('//')) return undefined
  // Backslashes turn into slashes in special URLs; control characters and spaces are never needed.
  if (/[\\\s]/.test(path) || [...path].some((character) => character.charCodeAt(0) < 0x20 || character.charCodeAt(0) === 0x7f)) return undefined
  const pathPart = path.split(/[?#]/, 1)[0] ?? ''
  if (/%(2f|5c|2e)/i.test(pathPart) || hasDisguisedDelimiter(pathPart)) return undefined
  if (path.includes('#')) return undefined
  const basePath = baseUrl.pathname.replace(/\/+$/, '')
  let target: URL
  try {
    target = new URL(`${basePath}${path}`, baseUrl.origin)
  } catch {
    return undefined
  }
  if (target.origin !== baseUrl.origin) return undefined
  if (basePath !== '' && target.pathname !== basePath && !target.pathname.startsWith(`${basePath}/`)) return undefined
  return target
}
