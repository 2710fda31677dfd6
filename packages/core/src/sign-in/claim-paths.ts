/**
 * ClaimMappings sources that reach into nested JSON claims (docs/providers/oauth.md, "Claims"): a dotted
 * path (`realm_access.roles`, `data.id`) or a JSON pointer (RFC 6901, `/resource_access/my.app/roles`,
 * `~1` for `/`, `~0` for `~`). Shared by the OpenID Connect handler (ID token and userinfo) and the
 * vendor slots (user information). A top-level claim literally named like the path wins over the
 * nested lookup, so claim names that are URIs (`https://example.com/roles`) keep working.
 */
import type { Claim } from '../session/principal.js'

/** Deepest path followed; a longer one addresses nothing. */
const MAX_SEGMENTS = 32

function isObject (value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/** True for a ClaimMappings source that addresses a nested field: `/data/id` or `data.id`. */
export function isFieldPath (source: string): boolean {
  return source.startsWith('/') || source.includes('.')
}

/**
 * The value at `path` in `document`: a JSON pointer (RFC 6901, `/data/id`, `~1` and `~0`
 * escapes) or a dotted path (`data.id`); numeric segments index arrays. Undefined when absent.
 */
export function valueAtPath (document: unknown, path: string): unknown {
  const segments = path.startsWith('/')
    ? path.slice(1).split('/').map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'))
    : path.split('.')
  if (segments.length > MAX_SEGMENTS) return undefined
  let current: unknown = document
  for (const segment of segments) {
    if (Array.isArray(current) && /^\d{1,6}$/.test(segment)) current = current[Number(segment)]
    else if (isObject(current) && Object.hasOwn(current, segment)) current = current[segment]
    else return undefined
  }
  return current
}

const scalarText = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined

/** One claim of `type` per scalar value (an array gives one per scalar element); objects and nulls are left out. */
export function pushScalarClaims (claims: Claim[], type: string, value: unknown, issuer: string): void {
  for (const item of Array.isArray(value) ? value : [value]) {
    const text = scalarText(item)
    if (text !== undefined && text !== '') claims.push({ type, value: text, issuer })
  }
}

/**
 * Claims for the ClaimMappings sources that are field paths: each path found in the first of
 * `documents` that holds it becomes claims typed with the path as written (one per array
 * element). Paths naming a top-level member of any document are left to the top-level claims.
 */
export function pathClaims (documents: ReadonlyArray<Readonly<Record<string, unknown>>>, fieldPaths: readonly string[], issuer: string): Claim[] {
  const claims: Claim[] = []
  for (const path of fieldPaths) {
    if (!isFieldPath(path) || documents.some((document) => Object.hasOwn(document, path))) continue
    for (const document of documents) {
      const value = valueAtPath(document, path)
      if (value === undefined) continue
      pushScalarClaims(claims, path, value, issuer)
      break
    }
  }
  return claims
}
