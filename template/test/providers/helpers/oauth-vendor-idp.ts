/**
 * A real OAuth 2.0 authorization server per vendor slot (oauth2-mock-server on loopback, reached
 * as `http://localhost:<port>`), answering user information with the shape the test chooses and
 * recording what the app sent: the client authentication, the PKCE verifier, the bearer token.
 * Its authorization endpoint redirects straight back with a code (no login page).
 */
import type { IncomingMessage } from 'node:http'
import { OAuth2Server, type MutableRedirectUri, type MutableResponse } from 'oauth2-mock-server'

/** A provider settings object, as buildTestApp takes settings. */
export interface SettingsObject { [key: string]: string | boolean | string[] | SettingsObject }

export interface VendorIdp {
  readonly base: string
  /** The user-information JSON answered with the next requests. */
  userInformation: Record<string, unknown>
  /** Status of the user-information answer (default 200). */
  userInformationStatus: number
  /** When set, the token endpoint answers this status with `{ error: 'invalid_grant' }`. */
  tokenErrorStatus: number | undefined
  readonly authorizationRequests: URLSearchParams[]
  readonly tokenRequests: Array<{ authorization: string | undefined, body: Record<string, string> }>
  readonly userInformationAuthorizations: Array<string | undefined>
  /** Codes and tokens it handed out (planted values for the log scan). */
  readonly planted: string[]
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
    authorizationRequests: [],
    tokenRequests: [],
    userInformationAuthorizations: [],
    planted: [],
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
    if (idp.tokenErrorStatus !== undefined) {
      response.statusCode = idp.tokenErrorStatus
      response.body = { error: 'invalid_grant' }
      return
    }
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
