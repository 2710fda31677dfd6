/**
 * A real MCP client reaches a tool behind a JwtBearer scheme (issue 40, items 14-17): the MCP
 * TypeScript SDK's own OAuth client (`StreamableHTTPClientTransport` with an
 * `OAuthClientProvider`) against the starter app listening on loopback with an MCP endpoint
 * (`POST /api/mcp`, the SDK's stateless server transport, as docs/guides/protect-an-api.md shows
 * it), configured as the guide says (`Audiences` the public origin, `ScopesSupported`), and an
 * oidc-provider authorization server with dynamic registration issuing JWT access tokens for
 * that resource. The browser step (login, consent) is driven over HTTP. Without workarounds:
 * the 401 names the scope the client asks for, the client's optional event-stream GET gets 405
 * (not a 401 without a challenge, which started a new authorization), its path-suffixed metadata
 * probe a 404 it falls back from (not the sign-in page), and no transport error is raised.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { discoverOAuthProtectedResourceMetadata, UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import { scopePolicy } from '../../src/authorization/scopes.js'
import { HttpSession } from '../../src/testing/http-session.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { closedPort } from '../helpers/ports.js'
import { throughIdpLogin } from '../helpers/providers/oidc-interaction.js'
import { startMcpAuthorizationServer, type McpAuthorizationServer } from '../helpers/providers/mcp-authorization-server.js'

const SCOPE = 'mcp:tools'

/** The MCP endpoint as the guide writes it: the SDK's stateless transport on the raw request. */
function mcpRoutes (app: FastifyInstance): void {
  app.authorization.addPolicy(scopePolicy('mcp.Tools', SCOPE))
  app.post('/api/mcp', { config: { authorize: 'mcp.Tools' } }, async (request, reply) => {
    const server = new McpServer({ name: 'orders', version: '1.0.0' })
    server.registerTool('whoami', { description: 'The caller' }, async () => ({ content: [{ type: 'text', text: request.user?.subject ?? '' }] }))
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined })
    reply.hijack()
    reply.raw.on('close', () => { transport.close().catch(() => {}); server.close().catch(() => {}) })
    await server.connect(transport)
    await transport.handleRequest(request.raw, reply.raw, request.body)
  })
}

/** An MCP client's OAuth state, in memory; the authorization URL is kept for the test to visit. */
class AgentOAuth implements OAuthClientProvider {
  authorizationUrl: URL | undefined
  #client: OAuthClientInformationMixed | undefined
  #tokens: OAuthTokens | undefined
  #verifier = ''
  readonly #redirect: string
  constructor (redirect: string) { this.#redirect = redirect }
  get redirectUrl (): string { return this.#redirect }
  get clientMetadata (): OAuthClientMetadata {
    return { client_name: 'test agent', redirect_uris: [this.#redirect], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' }
  }

  clientInformation (): OAuthClientInformationMixed | undefined { return this.#client }
  saveClientInformation (information: OAuthClientInformationMixed): void { this.#client = information }
  tokens (): OAuthTokens | undefined { return this.#tokens }
  saveTokens (tokens: OAuthTokens): void { this.#tokens = tokens }
  redirectToAuthorization (url: URL): void { this.authorizationUrl = url }
  saveCodeVerifier (verifier: string): void { this.#verifier = verifier }
  codeVerifier (): string { return this.#verifier }
}

interface Exchange { readonly method: string, readonly path: string, readonly status: number, readonly challenge: string | null }

describe('the MCP TypeScript SDK\'s OAuth client reaches a tool behind a JwtBearer scheme', () => {
  let as: McpAuthorizationServer
  let t: TestApp
  let origin: string
  /** Every request the client made to the app, with the answer's status and challenge. */
  const exchanges: Exchange[] = []
  const recordingFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const response = await fetch(input, init)
    const url = new URL(input instanceof Request ? input.url : input)
    if (url.origin === origin) exchanges.push({ method: init?.method ?? 'GET', path: url.pathname, status: response.status, challenge: response.headers.get('www-authenticate') })
    return response
  }

  before(async () => {
    const port = await closedPort()
    origin = `http://127.0.0.1:${port}`
    as = await startMcpAuthorizationServer({ resource: origin, scopes: [SCOPE], accounts: ['ada'] })
    t = await buildTestApp({
      nodeEnv: 'Development',
      settings: {
        Hosting: { PublicOrigin: origin },
        Authentication: {
          Cookie: { AllowInsecureHttp: true },
          Schemes: { Mcp: { Type: 'JwtBearer', Authority: as.issuer, Audiences: [origin] } },
          Bearer: { ScopesSupported: [SCOPE] }
        }
      },
      configure: mcpRoutes
    })
    await t.app.listen({ host: '127.0.0.1', port })
  })
  after(async () => {
    await t?.app.close()
    await as?.close()
  })

  test('from the anonymous 401 through registration, login and consent to a tool call as the user, with no transport error', async () => {
    const agent = new AgentOAuth(`http://127.0.0.1:${await closedPort()}/callback`)
    const serverUrl = new URL('/api/mcp', origin)
    const errors: Error[] = []

    const first = new StreamableHTTPClientTransport(serverUrl, { authProvider: agent, fetch: recordingFetch })
    await assert.rejects(new Client({ name: 'agent', version: '1.0.0' }).connect(first), UnauthorizedError)
    const anonymous = exchanges.find((exchange) => exchange.method === 'POST' && exchange.path === '/api/mcp')
    assert.equal(anonymous?.status, 401)
    assert.equal(anonymous?.challenge, `Bearer scope="${SCOPE}", resource_metadata="${origin}/.well-known/oauth-protected-resource"`)
    assert.ok(agent.authorizationUrl !== undefined, 'the client registered and started an authorization')
    assert.equal(agent.authorizationUrl.searchParams.get('scope'), SCOPE)
    assert.equal(agent.authorizationUrl.searchParams.get('resource'), origin)

    const callback = await throughIdpLogin(new HttpSession(), agent.authorizationUrl, new URL(agent.redirectUrl).origin, 'ada')
    await first.finishAuth(callback.searchParams.get('code') ?? '')
    assert.deepEqual(as.tokenRequests.map(({ resource, scope }) => [resource, scope]), [[origin, null]], 'one code exchange, for the app\'s resource')

    // A client that starts again with its token, as an agent does after the browser step.
    const transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: agent, fetch: recordingFetch })
    const client = new Client({ name: 'agent', version: '1.0.0' })
    client.onerror = (error) => { errors.push(error) }
    await client.connect(transport)
    const result = await client.callTool({ name: 'whoami', arguments: {} })
    assert.deepEqual(result.content, [{ type: 'text', text: 'ada' }])
    // The optional event-stream GET runs beside the tool call: wait (bounded) for its answer.
    for (let attempt = 0; attempt < 50 && !exchanges.some((exchange) => exchange.method === 'GET' && exchange.path === '/api/mcp'); attempt++) await new Promise((resolve) => setTimeout(resolve, 20))
    await client.close()

    const stream = exchanges.find((exchange) => exchange.method === 'GET' && exchange.path === '/api/mcp')
    assert.equal(stream?.status, 405, 'the GET this endpoint does not serve: 405 for the valid token, not a 401 without a challenge')
    assert.deepEqual(errors.map((error) => error.message), [])
    assert.equal(exchanges.filter((exchange) => exchange.status === 401).length, 1, 'one 401: the anonymous first call')
    for (const token of as.issuedAccessTokens) assert.equal(t.logs.text().includes(token), false, 'no token in the log')
  })

  test('path-aware discovery (RFC 9728 section 3.1, what the SDK does without a challenge) falls back from a 404 to the origin\'s metadata', async () => {
    const metadata = await discoverOAuthProtectedResourceMetadata(new URL('/api/mcp', origin), undefined, recordingFetch)
    assert.deepEqual(metadata, { resource: origin, authorization_servers: [as.issuer], scopes_supported: [SCOPE], bearer_methods_supported: ['header'] })
    const probe = exchanges.find((exchange) => exchange.path === '/.well-known/oauth-protected-resource/api/mcp')
    assert.equal(probe?.status, 404)
  })
})
