/**
 * A real OpenID Provider for tests: oidc-provider (OpenID Certified) on loopback, reached as
 * `http://localhost:<port>` (another site than the app on 127.0.0.1), with one confidential
 * client and accounts whose claims the test chooses. Its dev interactions (login form, consent)
 * stand in for the IdP's pages.
 *
 * The server listens before the provider exists so the app can be configured with the issuer
 * and the provider can be given the app's redirect URI; requests wait until {@link OidcIdp.configure}.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair } from 'jose'
import Provider from 'oidc-provider'

export interface OidcIdpOptions {
  readonly clientId: string
  readonly clientSecret: string
  /** Account id (the login typed in the dev interaction) -> claims. */
  readonly accounts: Readonly<Record<string, Record<string, unknown>>>
}

export interface OidcIdp {
  readonly issuer: string
  /** Creates the provider with the app's redirect URI (and post-logout redirect URIs); call once the app listens. */
  configure: (redirectUri: string, postLogoutRedirectUris?: string[]) => Promise<void>
  /** Completed RP-initiated logouts (end_session confirmed). */
  readonly endedSessions: number
  /** Authorization codes the provider issued (planted values for the log scan). */
  readonly issuedCodes: string[]
  readonly issuedTokens: string[]
  /** Every token string of every token-endpoint answer (ID, access and refresh tokens as sent). */
  readonly issuedTokenResponseValues: string[]
  close: () => Promise<void>
}

export async function startOidcIdp (options: OidcIdpOptions): Promise<OidcIdp> {
  let handler: ((request: IncomingMessage, response: ServerResponse) => void) | undefined
  let release!: () => void
  const configured = new Promise<void>((resolve) => { release = resolve })
  const server = createServer((request, response) => {
    configured.then(() => handler?.(request, response)).catch(() => {})
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const issuer = `http://localhost:${(server.address() as AddressInfo).port}`
  const issuedCodes: string[] = []
  const issuedTokens: string[] = []
  const issuedTokenResponseValues: string[] = []

  let endedSessions = 0
  async function configure (redirectUri: string, postLogoutRedirectUris: string[] = []): Promise<void> {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true })
    const jwk = { ...(await exportJWK(privateKey)), kid: 'test-rs256', alg: 'RS256', use: 'sig' }
    const provider = new Provider(issuer, {
      clients: [{
        client_id: options.clientId,
        client_secret: options.clientSecret,
        redirect_uris: [redirectUri],
        post_logout_redirect_uris: postLogoutRedirectUris,
        response_types: ['code'],
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: 'client_secret_basic',
        id_token_signed_response_alg: 'RS256'
      }],
      jwks: { keys: [jwk] },
      claims: { openid: ['sub'], profile: ['name', 'roles', 'groups'], email: ['email'] },
      cookies: { keys: ['oidc-idp-test-cookie-key'] },
      pkce: { required: () => true },
      features: { devInteractions: { enabled: true } },
      async findAccount (_ctx: unknown, id: string) {
        const claims = options.accounts[id]
        if (claims === undefined) return undefined
        return { accountId: id, claims: async () => ({ sub: id, ...claims }) }
      }
    })
    provider.on('authorization_code.saved', (code: unknown) => { issuedCodes.push((code as { jti: string }).jti) })
    provider.on('access_token.saved', (token: unknown) => { issuedTokens.push((token as { jti: string }).jti) })
    provider.on('grant.success', (ctx: unknown) => {
      const body = (ctx as { body?: Record<string, unknown> }).body ?? {}
      for (const key of ['access_token', 'id_token', 'refresh_token']) {
        const value = body[key]
        if (typeof value === 'string') issuedTokenResponseValues.push(value)
      }
    })
    provider.on('end_session.success', () => { endedSessions++ })
    handler = provider.callback()
    release()
  }

  return {
    issuer,
    configure,
    issuedCodes,
    issuedTokens,
    issuedTokenResponseValues,
    get endedSessions () { return endedSessions },
    close: async () => {
      release()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
