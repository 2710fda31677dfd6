/**
 * Where a downstream call may go: a path relative to the API's BaseUrl, on its origin and below
 * its path, so that the access token attached to the call never reaches another server. Anything
 * else is refused before a connection is made: an absolute or scheme-relative URL (`https://x`,
 * `//x`), a backslash, a control character or space, a path that leaves the base path once dot
 * segments are resolved (`/../admin`; WHATWG URL treats `%2e` as a dot too), and an encoded
 * slash, backslash or dot in the path part (`%2f`, `%5c`, `%2e`), which a server could decode into
 * one of those after this check.
 */

/** The URL of `path` under `baseUrl` (an absolute URL without query or fragment), or undefined when it is refused. */
export function downstreamTarget (baseUrl: URL, path: string): URL | undefined {
  if (typeof path !== 'string' || !path.startsWith('/') || path.startsWith('//')) return undefined
  // Backslashes turn into slashes in special URLs; control characters and spaces are never needed.
  if (/[\\\s]/.test(path) || [...path].some((character) => character.charCodeAt(0) < 0x20 || character.charCodeAt(0) === 0x7f)) return undefined
  const pathPart = path.split(/[?#]/, 1)[0] ?? ''
  if (/%(2f|5c|2e)/i.test(pathPart)) return undefined
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
