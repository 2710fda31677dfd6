/**
 * A real authorization server for bearer-token tests (issue 35): oidc-provider on loopback
 * (`http://localhost:<port>`) with Resource Indicators (RFC 8707) issuing JWT access tokens
 * (RFC 9068, `typ: at+jwt`, RS256) for one resource, and the client-credentials grant for
 * machine clients. `clientCredentialsToken` asks its token endpoint over HTTP, as an API client
 * would. With `opaqueResource`, a second resource whose access tokens are opaque, checked at the
 * introspection endpoint (RFC 7662) by the `introspectionClients` and revoked at the revocation
 * endpoint (RFC 7009). DPoP (RFC 9449) is on: `dpopClientCredentialsToken` sends a proof made
 * with jose to the token endpoint and gets a token bound to its key (`cnf.jkt`).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { randomUUID } from 'node:crypto'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose'

/** A client's DPoP key pair (the public half as the JWK its proofs embed). */
export interface DPoPKey {
  readonly privateKey: CryptoKey
  readonly publicJwk: JWK
}

/** A fresh ES256 DPoP key. */
export async function dpopKey (): Promise<DPoPKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true })
  return { privateKey, publicJwk: await exportJWK(publicKey) }
}

/** A DPoP proof (RFC 9449 section 4.2) for `method` `url`; `claims` and `header` override the valid defaults. */
export async function dpopProof (key: DPoPKey, method: string, url: string, claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}): Promise<string> {
  return await new SignJWT({ htm: method, htu: url, iat: Math.floor(Date.now() / 1000), jti: randomUUID(), ...claims })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.publicJwk, ...header })
    .sign(key.privateKey)
}

export interface ResourceIdp {
  readonly issuer: string
  /** The resource (audience) tokens are issued for. */
  readonly resource: string
  /** How many times the key set has been fetched. */
  readonly jwksRequests: number
  /** How many requests reached the token endpoint. */
  readonly tokenRequests: number
  /** How many introspection requests have arrived. */
  readonly introspectionRequests: number
  /** A client-credentials access token bound to `key` (DPoP), for `resource`. */
  dpopClientCredentialsToken: (clientId: string, scope: string, key: DPoPKey, resource?: string) => Promise<string>
  /** Revokes `token` (RFC 7009), as the client it was issued to. */
  revoke: (clientId: string, token: string) => Promise<void>
  /** A client-credentials access token for `resource` with `scope`, from client `clientId`. */
  clientCredentialsToken: (clientId: string, scope: string, resource?: string) => Promise<string>
  close: () => Promise<void>
}

export interface ResourceIdpOptions {
  readonly resource: string
  /** The scopes the resource server offers. */
  readonly scopes: readonly string[]
  /** client id -> secret of the machine clients. */
  readonly clients: Readonly<Record<string, string>>
  /** client id -> public keys of machine clients that authenticate with private_key_jwt (RFC 7523); the provider verifies their assertions. */
  readonly assertionClients?: Readonly<Record<string, { readonly keys: ReadonlyArray<Record<string, unknown>> }>>
  /** Lifetime of the access tokens issued (default 300 s). */
  readonly accessTokenTtlSeconds?: number
  /** A resource whose access tokens are opaque (introspection and revocation on). */
  readonly opaqueResource?: string
  /** More clients, as oidc-provider client metadata (the API's introspection client). */
  readonly introspectionClients?: ReadonlyArray<Record<string, unknown>>
}

interface OidcProviderInstance { callback: () => (request: IncomingMessage, response: ServerResponse) => void }
type OidcProviderConstructor = new (issuer: string, configuration: Record<string, unknown>) => OidcProviderInstance

export async function startResourceIdp (options: ResourceIdpOptions): Promise<ResourceIdp> {
  const specifier = 'oidc-provider'
  const Provider = ((await import(specifier)) as { default: OidcProviderConstructor }).default
  let jwksRequests = 0
  let tokenRequests = 0
  let introspectionRequests = 0
  // The server listens before the provider exists: the provider needs the issuer, which needs the port.
  const serving: { handler?: (request: IncomingMessage, response: ServerResponse) => void } = {}
  const server = createServer((request, response) => {
    if (request.url?.startsWith('/jwks') === true) jwksRequests++
    if (request.url === '/token' || request.url?.startsWith('/token?') === true) tokenRequests++
    if (request.url?.startsWith('/token/introspection') === true) introspectionRequests++
    serving.handler?.(request, response)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const issuer = `http://localhost:${(server.address() as AddressInfo).port}`
  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  const provider = new Provider(issuer, {
    clients: Object.entries(options.clients).map(([clientId, secret]) => ({
      client_id: clientId,
      client_secret: secret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic'
    })).concat(Object.entries(options.assertionClients ?? {}).map(([clientId, jwks]) => ({
      client_id: clientId,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks
    }) as never)).concat((options.introspectionClients ?? []) as never[]),
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'resource-rs256', alg: 'RS256', use: 'sig' }] },
    scopes: ['openid', ...options.scopes],
    features: {
      clientCredentials: { enabled: true },
      introspection: { enabled: options.opaqueResource !== undefined },
      revocation: { enabled: options.opaqueResource !== undefined },
      dPoP: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => options.resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => {
          if (resource === options.opaqueResource) return { scope: options.scopes.join(' '), audience: resource, accessTokenFormat: 'opaque', accessTokenTTL: 300 }
          if (resource !== options.resource) throw new Error('unknown resource')
          return { scope: options.scopes.join(' '), audience: options.resource, accessTokenFormat: 'jwt', accessTokenTTL: options.accessTokenTtlSeconds ?? 300, jwt: { sign: { alg: 'RS256' } } }
        }
      }
    }
  })
  serving.handler = provider.callback()
  return {
    issuer,
    resource: options.resource,
    get jwksRequests () { return jwksRequests },
    get tokenRequests () { return tokenRequests },
    get introspectionRequests () { return introspectionRequests },
    async revoke (clientId, token) {
      const response = await fetch(`${issuer}/token/revocation`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${clientId}:${options.clients[clientId] ?? ''}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' })
      })
      if (response.status !== 200) throw new Error(`revocation endpoint answered ${response.status}`)
    },
    async dpopClientCredentialsToken (clientId, scope, key, resource = options.resource) {
      const secret = options.clients[clientId] ?? ''
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded', dpop: await dpopProof(key, 'POST', `${issuer}/token`) },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope, resource })
      })
      const body = await response.json() as { access_token?: string, token_type?: string, error?: string, error_description?: string }
      if (body.access_token === undefined || body.token_type !== 'DPoP') throw new Error(`token endpoint answered ${response.status} ${body.error ?? ''} ${body.error_description ?? ''}`)
      return body.access_token
    },
    async clientCredentialsToken (clientId, scope, resource = options.resource) {
      const secret = options.clients[clientId] ?? ''
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope, resource })
      })
      const body = await response.json() as { access_token?: string, error?: string }
      if (body.access_token === undefined) throw new Error(`token endpoint answered ${response.status} ${body.error ?? ''}`)
      return body.access_token
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
