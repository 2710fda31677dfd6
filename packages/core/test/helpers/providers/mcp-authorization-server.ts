/**
 * The authorization server an MCP client meets (issue 40, items 14-17): oidc-provider on loopback
 * (`http://localhost:<port>`) with open dynamic client registration (RFC 7591), the authorization
 * code grant with PKCE for public clients, its dev interactions for login and consent (driven by
 * `throughIdpLogin`), and Resource Indicators (RFC 8707) issuing RFC 9068 JWT access tokens for
 * one resource with its scopes; a request for another resource is refused (`invalid_target`).
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair } from 'jose'

export interface McpAuthorizationServer {
  readonly issuer: string
  /** The access tokens issued, for the log scan. */
  readonly issuedAccessTokens: string[]
  /** The `resource` and `scope` of every token request. */
  readonly tokenRequests: Array<{ readonly resource: string | null, readonly scope: string | null }>
  close: () => Promise<void>
}

interface OidcProviderInstance {
  callback: () => (request: import('node:http').IncomingMessage, response: import('node:http').ServerResponse) => void
  on: (event: string, listener: (...args: any[]) => void) => unknown
}
type OidcProviderConstructor = (new (issuer: string, configuration: Record<string, unknown>) => OidcProviderInstance) & { errors: { InvalidTarget: new (message?: string) => Error } }

export async function startMcpAuthorizationServer (options: { readonly resource: string, readonly scopes: readonly string[], readonly accounts: readonly string[] }): Promise<McpAuthorizationServer> {
  const specifier = 'oidc-provider'
  const Provider = ((await import(specifier)) as { default: OidcProviderConstructor }).default
  const serving: { handler?: ReturnType<OidcProviderInstance['callback']> } = {}
  const tokenRequests: Array<{ resource: string | null, scope: string | null }> = []
  const server = createServer((request, response) => { serving.handler?.(request, response) })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const issuer = `http://localhost:${(server.address() as AddressInfo).port}`
  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  const issuedAccessTokens: string[] = []
  const provider = new Provider(issuer, {
    clients: [],
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'mcp-as', alg: 'RS256', use: 'sig' }] },
    scopes: ['openid', 'offline_access', ...options.scopes],
    cookies: { keys: ['mcp-authorization-server-test-key'] },
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => options.resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => {
          if (resource !== options.resource) throw new Provider.errors.InvalidTarget()
          return { scope: options.scopes.join(' '), audience: resource, accessTokenFormat: 'jwt', accessTokenTTL: 300, jwt: { sign: { alg: 'RS256' } } }
        }
      }
    },
    async findAccount (_ctx: unknown, id: string) {
      if (!options.accounts.includes(id)) return undefined
      return { accountId: id, claims: async () => ({ sub: id }) }
    }
  })
  provider.on('grant.success', (ctx: { oidc?: { params?: Record<string, unknown> }, body?: Record<string, unknown> }) => {
    const params = ctx.oidc?.params ?? {}
    tokenRequests.push({ resource: typeof params.resource === 'string' ? params.resource : null, scope: typeof params.scope === 'string' ? params.scope : null })
    if (typeof ctx.body?.access_token === 'string') issuedAccessTokens.push(ctx.body.access_token)
  })
  serving.handler = provider.callback()
  return {
    issuer,
    issuedAccessTokens,
    tokenRequests,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
