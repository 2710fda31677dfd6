/**
 * A real OAuth 2.0 authorization server per vendor slot (oauth2-mock-server on loopback, reached
 * as `http://localhost:<port>`), answering user information with the shape the test chooses and
 * recording what the app sent: the client authentication, the PKCE verifier, the bearer token.
 * Its authorization endpoint redirects straight back with a code (no login page).
 */
import type { IncomingMessage } from 'node:http'
import { OAuth2Server, type MutableRedirectUri, type MutableResponse } from 'oauth2-mock-server'

/** A provider settings object, as buildTestApp takes settings. */
export interface SettingsObject { [key: string]: string | boolean | string[] | SettingsObject[] | SettingsObject }

export interface VendorIdp {
  readonly base: string
  /** The user-information JSON answered with the next requests. */
  userInformation: Record<string, unknown>
  /** Status of the user-information answer (default 200). */
  userInformationStatus: number
  /** When set, the token endpoint answers this status with `{ error: 'invalid_grant' }`. */
  tokenErrorStatus: number | undefined
  /** When set, the token endpoint answers exactly this (GitHub: HTTP 200 with an error body). */
  tokenAnswer: { status: number, body: Record<string, unknown> } | undefined
  readonly authorizationRequests: URLSearchParams[]
  readonly tokenRequests: Array<{ authorization: string | undefined, body: Record<string, string> }>
  readonly userInformationAuthorizations: Array<string | undefined>
  /** Codes and tokens it handed out (planted values for the log scan). */
  readonly planted: string[]
  /** Answers the token endpoint in GitHub's shape (lower-case bearer, no id_token). */
  githubShape: boolean
  /** When set, the token endpoint's `expires_in` for a grant type (undefined: the server's own). */
  tokenExpiresIn: ((grantType: string | undefined) => number | undefined) | undefined
  settings: (clientId: string, clientSecret: string, extra?: SettingsObject) => SettingsObject
  close: () => Promise<void>
}

export async function startVendorIdp (userInformation: Record<string, unknown>): Promise<VendorIdp> {
  const server = new OAuth2Server()
  await server.issuer.keys.generate('RS256')
  await server.start(0, '127.0.0.1')
  const base = `http://localhost:${server.address().port}`
  server.issuer.url = base

  const idp: VendorIdp = {
    base,
    userInformation,
    userInformationStatus: 200,
    tokenErrorStatus: undefined,
    tokenAnswer: undefined,
    authorizationRequests: [],
    tokenRequests: [],
    userInformationAuthorizations: [],
    planted: [],
    githubShape: false,
    tokenExpiresIn: undefined,
    settings: (clientId, clientSecret, extra = {}) => ({
      Enabled: true,
      ClientId: clientId,
      ClientSecret: clientSecret,
      AuthorizationEndpoint: `${base}/authorize`,
      TokenEndpoint: `${base}/token`,
      UserInformationEndpoint: `${base}/userinfo`,
      ...extra
    }),
    close: async () => { await server.stop() }
  }

  server.service.on('beforeAuthorizeRedirect', (redirect: MutableRedirectUri, request: IncomingMessage) => {
    idp.authorizationRequests.push(new URL(request.url ?? '/', base).searchParams)
    const code = redirect.url.searchParams.get('code')
    if (code !== null) idp.planted.push(code)
  })
  server.service.on('beforeResponse', (response: MutableResponse, request: IncomingMessage & { body?: Record<string, string> }) => {
    idp.tokenRequests.push({ authorization: request.headers.authorization, body: { ...request.body } })
    if (idp.tokenAnswer !== undefined) {
      response.statusCode = idp.tokenAnswer.status
      response.body = idp.tokenAnswer.body
      return
    }
    if (idp.tokenErrorStatus !== undefined) {
      response.statusCode = idp.tokenErrorStatus
      response.body = { error: 'invalid_grant' }
      return
    }
    if (idp.githubShape) {
      // GitHub's token response: no id_token, no refresh token unless expiring tokens are on.
      const body = response.body as Record<string, unknown>
      delete body.id_token
      delete body.refresh_token
      body.token_type = 'bearer'
    }
    const expiresIn = idp.tokenExpiresIn?.(request.body?.grant_type)
    if (expiresIn !== undefined) (response.body as Record<string, unknown>).expires_in = expiresIn
    for (const key of ['access_token', 'id_token', 'refresh_token']) {
      const value = (response.body as Record<string, unknown>)[key]
      if (typeof value === 'string') idp.planted.push(value)
    }
  })
  server.service.on('beforeUserinfo', (response: MutableResponse, request: IncomingMessage) => {
    idp.userInformationAuthorizations.push(request.headers.authorization)
    response.statusCode = idp.userInformationStatus
    response.body = idp.userInformationStatus === 200 ? idp.userInformation : { error: 'invalid_token' }
  })
  return idp
}

/**
 * A second real HTTP server beside the authorization server, for what oauth2-mock-server does not
 * serve, in GitHub's paths: `/user` and `/user/emails` (answered only for an access token the
 * authorization server issued), and `/huge`, which streams a chunked body of `hugeBytes` without
 * Content-Length, counting what it managed to write before the client hung up (`/user` streams
 * the same when `hugeUser` is set).
 */
export interface ResourceServer {
  readonly base: string
  user: Record<string, unknown>
  hugeUser: boolean
  emails: unknown
  emailsStatus: number
  readonly emailsAuthorizations: Array<string | undefined>
  /** Bytes the chunked endpoint wrote before the client stopped reading. */
  hugeBytesWritten: number
  hugeFinished: boolean
  close: () => Promise<void>
}

export async function startResourceServer (idp: VendorIdp, hugeBytes = 32 * 1024 * 1024): Promise<ResourceServer> {
  const { createServer } = await import('node:http')
  const resource: ResourceServer = {
    base: '',
    user: {},
    hugeUser: false,
    emails: [],
    emailsStatus: 200,
    emailsAuthorizations: [],
    hugeBytesWritten: 0,
    hugeFinished: false,
    close: async () => {}
  }
  const chunk = Buffer.alloc(64 * 1024, 0x20)
  const streamHuge = (response: import('node:http').ServerResponse): void => {
    // Chunked transfer (no Content-Length), written only as fast as the client reads; bounded.
    resource.hugeBytesWritten = 0
    resource.hugeFinished = false
    response.writeHead(200, { 'content-type': 'application/json' })
    response.write('{"padding":"')
    const pump = (): void => {
      while (resource.hugeBytesWritten < hugeBytes) {
        resource.hugeBytesWritten += chunk.length
        if (!response.write(chunk)) {
          response.once('drain', pump)
          return
        }
      }
      resource.hugeFinished = true
      response.end('"}')
    }
    response.on('close', () => { response.removeAllListeners('drain') })
    pump()
  }
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname
    if (path === '/huge') {
      streamHuge(response)
      return
    }
    if (path !== '/user' && path !== '/user/emails') {
      response.writeHead(404).end()
      return
    }
    const authorization = request.headers.authorization
    if (path === '/user/emails') resource.emailsAuthorizations.push(authorization)
    const token = authorization?.startsWith('Bearer ') === true ? authorization.slice(7) : ''
    if (!idp.planted.includes(token)) {
      response.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="invalid_token"' }).end('{"message":"Bad credentials"}')
      return
    }
    if (path === '/user' && resource.hugeUser) {
      streamHuge(response)
      return
    }
    const status = path === '/user' ? 200 : resource.emailsStatus
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(path === '/user' ? resource.user : resource.emails))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  Object.assign(resource, {
    base: `http://localhost:${port}`,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => { resolve() }))
    }
  })
  return resource
}
