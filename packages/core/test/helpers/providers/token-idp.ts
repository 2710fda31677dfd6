/**
 * A small OpenID Provider whose tokens the test controls: discovery, JWKS and userinfo as a real
 * provider serves them, and a token endpoint that answers with whatever ID token the current test
 * mints with `jose` (wrong nonce, unknown key, `alg: none`, wrong audience or issuer, expired...).
 * Listens on 127.0.0.1, addressed as `http://localhost:<port>`.
 */
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { randomBytes } from 'node:crypto'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose'
import { writeHostile, type HostileBody } from '../hostile-bodies.js'

export interface TokenRequestRecord {
  readonly authorization: string | undefined
  readonly body: URLSearchParams
}

export interface TokenAnswer {
  readonly status?: number
  readonly body: Record<string, unknown>
  /** Extra response headers (a `WWW-Authenticate` challenge). */
  readonly headers?: Readonly<Record<string, string>>
}

export interface TokenIdp {
  /** The Authority to configure: the origin, or with `multiTenant` `<origin>/organizations/v2.0`. */
  readonly issuer: string
  /**
   * With `multiTenant`, the discovery document's issuer template (`<origin>/{tenantid}/v2.0`, as
   * Entra ID's organizations endpoint publishes it); otherwise the issuer.
   */
  readonly discoveryIssuer: string
  /** The template with `tenantId` in place of `{tenantid}`: that tenant's own issuer. */
  tenantIssuer: (tenantId: string) => string
  readonly clientId: string
  /** The key published in the JWKS. */
  readonly signingKey: CryptoKey
  /** A key the provider never published. */
  readonly unknownKey: CryptoKey
  /**
   * The JWKS `keys` the provider serves at `jwks_uri`; starts as the signing key's public JWK
   * (kid `known`). Replace or extend it to publish more keys or to rotate them.
   */
  publishedKeys: Array<Record<string, unknown>>
  /** How many times `jwks_uri` has been fetched. */
  readonly jwksRequests: number
  /** Set by each test: the token endpoint's answer. */
  answer: (request: TokenRequestRecord) => Promise<TokenAnswer> | TokenAnswer
  /** Set by each test: the userinfo answer (default: `{ sub: 'user-1' }`). */
  userInfo: Record<string, unknown>
  readonly tokenRequests: TokenRequestRecord[]
  /**
   * Paths answered with a hostile body instead (`/.well-known/openid-configuration`, `/jwks`,
   * `/token`, `/userinfo`, or any other path, such as a SAML metadata URL); default none.
   */
  hostile: Record<string, HostileBody>
  /** Every token this provider handed out (planted values for the log scan). */
  readonly planted: string[]
  /** Mints an ID token; `claims` are merged over valid defaults for `nonce`. */
  mintIdToken: (nonce: string, claims?: JWTPayload, options?: { key?: CryptoKey, kid?: string, alg?: string }) => Promise<string>
  /** A valid token response for `nonce`. */
  validAnswer: (nonce: string, claims?: JWTPayload) => Promise<TokenAnswer>
  close: () => Promise<void>
}

async function readBody (request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

/** An unsecured JWS (`alg: none`, RFC 7519 section 6). */
function unsecuredJwt (payload: JWTPayload): string {
  const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')
  return `${encode({ alg: 'none', typ: 'JWT' })}.${encode(payload)}.`
}

/**
 * `multiTenant`: the provider answers under `/organizations/v2.0` (the Authority; `authorityPath`
 * chooses another) and its discovery
 * issuer is the template `<origin>/{tenantid}/v2.0`, as a multi-tenant Entra ID authority's is, on
 * loopback; ID tokens then carry whatever `iss` and `tid` the test mints.
 */
export async function startTokenIdp (clientId: string, options: { tokenEndpoint?: string, multiTenant?: boolean, authorityPath?: string } = {}): Promise<TokenIdp> {
  const base = options.multiTenant === true ? options.authorityPath ?? '/organizations/v2.0' : ''
  const signing = await generateKeyPair('RS256', { extractable: true })
  const unknown = await generateKeyPair('RS256', { extractable: true })
  const publicJwk = { ...(await exportJWK(signing.publicKey)), kid: 'known', alg: 'RS256', use: 'sig' }
  let issuer = ''
  let origin = ''
  let jwksRequests = 0
  const discoveryIssuer = (): string => options.multiTenant === true ? `${origin}/{tenantid}/v2.0` : issuer

  const idp: TokenIdp = {
    get issuer () { return issuer },
    get discoveryIssuer () { return discoveryIssuer() },
    tenantIssuer: (tenantId) => discoveryIssuer().replace('{tenantid}', tenantId),
    clientId,
    signingKey: signing.privateKey,
    unknownKey: unknown.privateKey,
    publishedKeys: [publicJwk],
    get jwksRequests () { return jwksRequests },
    answer: () => ({ status: 500, body: { error: 'server_error' } }),
    userInfo: { sub: 'user-1' },
    tokenRequests: [],
    hostile: {},
    planted: [],
    async mintIdToken (nonce, claims = {}, mint = {}) {
      const now = Math.floor(Date.now() / 1000)
      const payload: JWTPayload = { iss: issuer, aud: clientId, sub: 'user-1', nonce, iat: now, exp: now + 300, name: 'Ada Lovelace', roles: ['Administrator'], ...claims }
      const token = mint.alg === 'none'
        ? unsecuredJwt(payload)
        : await new SignJWT(payload).setProtectedHeader({ alg: mint.alg ?? 'RS256', kid: mint.kid ?? 'known', typ: 'JWT' }).sign(mint.key ?? signing.privateKey)
      idp.planted.push(token)
      return token
    },
    async validAnswer (nonce, claims) {
      const accessToken = `at-${randomBytes(16).toString('hex')}`
      idp.planted.push(accessToken)
      return { body: { access_token: accessToken, token_type: 'Bearer', expires_in: 300, id_token: await idp.mintIdToken(nonce, claims) } }
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }

  const server = createServer((request, response) => {
    (async () => {
      const full = new URL(request.url ?? '/', origin).pathname
      const path = base !== '' && full.startsWith(base) ? full.slice(base.length) : full
      const json = (status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void => {
        response.writeHead(status, { ...headers, 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body))
      }
      const hostile = idp.hostile[path]
      if (hostile !== undefined) {
        await writeHostile(response, hostile, path.includes('saml') ? 'application/samlmetadata+xml' : 'application/json')
      } else if (path === '/.well-known/openid-configuration') {
        json(200, {
          issuer: discoveryIssuer(),
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: options.tokenEndpoint ?? `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
          userinfo_endpoint: `${issuer}/userinfo`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256', 'none'],
          code_challenge_methods_supported: ['S256'],
          token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post']
        })
      } else if (path === '/jwks') {
        jwksRequests++
        json(200, { keys: idp.publishedKeys })
      } else if (path === '/token' && request.method === 'POST') {
        const record = { authorization: request.headers.authorization, body: new URLSearchParams(await readBody(request)) }
        idp.tokenRequests.push(record)
        const answer = await idp.answer(record)
        json(answer.status ?? 200, answer.body, answer.headers)
      } else if (path === '/userinfo') {
        json(200, idp.userInfo)
      } else {
        json(404, { error: 'not_found' })
      }
    })().catch(() => { response.writeHead(500).end() })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  origin = `http://localhost:${(server.address() as AddressInfo).port}`
  issuer = `${origin}${base}`
  return idp
}
