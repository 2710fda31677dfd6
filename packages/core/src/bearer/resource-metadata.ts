/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728; issue 35, item 6): the document at
 * `/.well-known/oauth-protected-resource` that tells an OAuth client (or an AI agent: the MCP
 * authorization specification requires it) which authorization servers issue tokens for this
 * API, which scopes exist and how to send a token; and the `resource_metadata` URL every 401
 * challenge of an API route carries (RFC 9728 section 5.1). Only the configured JwtBearer schemes'
 * issuers are published: schemes from the provider source are customers' and are never listed.
 * Plain data, no Fastify types.
 */

/** The path of the metadata of a resource at the origin's root (RFC 9728 section 3.1). */
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource'

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
