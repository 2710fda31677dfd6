/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728; issue 35, item 6): the document at
 * `/.well-known/oauth-protected-resource` that tells an OAuth client (or an AI agent: the MCP
 * authorization specification requires it) which authorization servers issue tokens for this
 * API, which scopes exist and how to send a token; and the `resource_metadata` URL every 401
 * challenge of an API route carries (RFC 9728 section 5.1). Only the configured JwtBearer schemes'
 * issuers are published: schemes from the provider source are customers' and are never listed.
 * A resource under a path (issue 40, item 14: MCP clients ask
 * `/.well-known/oauth-protected-resource/<path>` first, RFC 9728 section 3.1) is one a configured
 * scheme's Audiences name as a URL on the app's origin with a path (`https://app.example.com/mcp`):
 * its own document names that URL as `resource` and only the issuers of the schemes that accept it.
 * Plain data, no Fastify types.
 */

/** The path of the metadata of a resource at the origin's root (RFC 9728 section 3.1). */
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource'

/** The metadata path of the resource at `path` below the origin (RFC 9728 section 3.1: the well-known prefix, then the path). */
export function resourceMetadataPathOf (path: string): string {
  return `${RESOURCE_METADATA_PATH}${path === '/' ? '' : path}`
}

/** A resource under a path: an audience of configured schemes that names a URL on the app's origin. */
export interface PathResource {
  /** The resource identifier: the audience as configured, the origin followed by `path`. */
  readonly resource: string
  /** Its origin (`https://host[:port]`). */
  readonly origin: string
  /** Its path (`/mcp`), where the app serves it and below the well-known prefix. */
  readonly path: string
  /** The configured schemes whose Audiences name it: their issuers are its authorization servers. */
  readonly schemes: readonly string[]
}

/** A path of unreserved characters only (RFC 3986 section 2.3): the path of a route and of its metadata URL alike. */
const RESOURCE_PATH = /^(?:\/[A-Za-z0-9._~-]+)+\/?$/

/** `audience` as a resource under a path (an absolute http(s) URL, written canonically, with a path and nothing after it), or undefined. */
function pathResourceOf (audience: string): { origin: string, path: string } | undefined {
  let url: URL
  try {
    url = new URL(audience)
  } catch {
    return undefined
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username !== '' || url.password !== '') return undefined
  if (!RESOURCE_PATH.test(url.pathname) || `${url.origin}${url.pathname}` !== audience) return undefined
  return { origin: url.origin, path: url.pathname }
}

/**
 * The resources under a path that `schemes` (the configured JwtBearer schemes' names and Audiences)
 * accept, on `publicOrigin` when one is configured (on any origin otherwise: a request's own
 * origin must then equal the resource's), by path.
 */
export function pathResourcesOf (schemes: ReadonlyArray<{ readonly scheme: string, readonly audiences: readonly string[] }>, publicOrigin: string): Map<string, PathResource[]> {
  const origin = publicOrigin.trim() === '' ? undefined : new URL(publicOrigin.trim()).origin
  const byResource = new Map<string, { origin: string, path: string, schemes: string[] }>()
  for (const { scheme, audiences } of schemes) {
    for (const audience of audiences) {
      const parsed = pathResourceOf(audience)
      if (parsed === undefined || (origin !== undefined && parsed.origin !== origin)) continue
      const entry = byResource.get(audience) ?? { ...parsed, schemes: [] }
      if (!entry.schemes.includes(scheme)) entry.schemes.push(scheme)
      byResource.set(audience, entry)
    }
  }
  const byPath = new Map<string, PathResource[]>()
  for (const [resource, entry] of byResource) byPath.set(entry.path, [...(byPath.get(entry.path) ?? []), { resource, ...entry }])
  return byPath
}

export interface ProtectedResourceMetadata {
  readonly resource: string
  readonly authorization_servers: readonly string[]
  readonly scopes_supported?: readonly string[]
  readonly bearer_methods_supported: readonly string[]
}

/** The origin (`https://host[:port]`) the resource is named by: PublicOrigin when configured, else the request's own. */
export function resourceOf (publicOrigin: string, requestOrigin: string): string {
  const configured = publicOrigin.trim()
  return (configured === '' ? requestOrigin : configured).replace(/\/+$/, '')
}

/** The metadata document; `bearer_methods_supported` is the header only (no form body or query token, RFC 6750 section 2). */
export function protectedResourceMetadata (resource: string, authorizationServers: readonly string[], scopes: readonly string[]): ProtectedResourceMetadata {
  return {
    resource,
    authorization_servers: [...new Set(authorizationServers)],
    ...(scopes.length === 0 ? {} : { scopes_supported: [...scopes] }),
    bearer_methods_supported: ['header']
  }
}
