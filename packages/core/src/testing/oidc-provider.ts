/**
 * A real OpenID Provider for tests: oidc-provider (OpenID Certified) on loopback, reached as
 * `http://localhost:<port>` (another site than the app on 127.0.0.1), with one confidential
 * client and accounts whose claims the test chooses. Its dev interactions (login form, consent)
 * stand in for the IdP's pages.
 *
 * The server listens before the provider exists so the app can be configured with the issuer
 * and the provider can be given the app's redirect URI; requests wait until
 * {@link TestOidcProvider.configure}.
 *
 * `oidc-provider` is an optional peer dependency of the core (an app lists it in its
 * devDependencies): it is imported only when {@link startOidcProvider} runs, so importing
 * `@project-template/core/testing` without it installed works, and no production bundle sees it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'

/** The small part of oidc-provider's API used here (the package ships no type declarations). */
interface OidcProviderInstance {
  callback: () => (request: IncomingMessage, response: ServerResponse) => void
  on: (event: string, listener: (...args: any[]) => void) => unknown
  interactionFinished: (request: IncomingMessage, response: ServerResponse, result: Record<string, unknown>, options: { mergeWithLastSubmission: boolean }) => Promise<void>
}
type OidcProviderConstructor = new (issuer: string, configuration: Record<string, unknown>) => OidcProviderInstance

/** Loads oidc-provider at call time; a clear error when the app has not installed it. */
async function loadOidcProvider (): Promise<OidcProviderConstructor> {
  // A variable specifier: neither tsc nor a bundler follows it into the production graph.
  const specifier = 'oidc-provider'
  try {
    return ((await import(specifier)) as { default: OidcProviderConstructor }).default
  } catch (error) {
    throw new Error('startOidcProvider needs the package oidc-provider: npm install --save-dev oidc-provider@^9', { cause: error })
  }
}

/** What {@link startOidcProvider} serves: one confidential client and the accounts that can sign in. @public @experimental */
export interface TestOidcProviderOptions {
  readonly clientId: string
  readonly clientSecret: string
  /** Account id (the login typed in the dev interaction) -> claims. */
  readonly accounts: Readonly<Record<string, Record<string, unknown>>>
  /** Enables back-channel logout (features.backchannelLogout) with this client backchannel_logout_uri. */
  readonly backChannelLogoutUri?: (redirectUri: string) => string
  /**
   * Issues refresh tokens (rotating); access tokens from the code grant live
   * `accessTokenTtlSeconds`, those from a refresh `refreshedAccessTokenTtlSeconds` (default the same).
   */
  readonly refreshTokens?: { readonly accessTokenTtlSeconds: number, readonly refreshedAccessTokenTtlSeconds?: number }
  /** Claims released per scope (default: openid sub; profile name, roles, groups; email email). */
  readonly claims?: Readonly<Record<string, readonly string[]>>
  /** The client's registered token_endpoint_auth_method (default client_secret_basic). */
  readonly tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt'
  /** The client's public keys (its registered `jwks`), which verify its `private_key_jwt` assertions. */
  readonly clientJwks?: { readonly keys: ReadonlyArray<Record<string, unknown>> }
  /**
   * Pushed authorization requests (RFC 9126; features.pushedAuthorizationRequests): `enabled`
   * (oidc-provider's default: the endpoint is in discovery, pushing is optional), `required`
   * (`require_pushed_authorization_requests`: an authorization request not pushed is refused) or
   * `disabled` (no endpoint in discovery).
   */
  readonly pushedAuthorization?: 'enabled' | 'required' | 'disabled'
  /** The `acr` values the provider supports (`acr_values_supported`); its dev login sets none. */
  readonly acrValues?: readonly string[]
  /**
   * How a login at the dev login page authenticates the account: the `acr` and `amr` its session
   * (and so its ID tokens) then carry. Asked at each login, so a test can make the first login
   * weak and the next strong. Without it, the dev login sets neither.
   */
  readonly loginAuthentication?: (accountId: string) => { readonly acr?: string, readonly amr?: readonly string[] } | undefined
  /** The provider's clientAuthMethods, advertised as token_endpoint_auth_methods_supported. */
  readonly clientAuthMethods?: readonly string[]
  /**
   * Reads `Authorization: Basic` credentials without form-decoding them, as LemonLDAP::NG 2.16
   * does: a client id or secret that RFC 6749 section 2.3.1 encoding changes (`+`, `/`, `=`, ...)
   * is refused with 401, `WWW-Authenticate: Basic realm="..."` (no `error`) and an
   * `{"error":"invalid_client"}` body, before oidc-provider sees the request.
   */
  readonly basicCredentialsNotDecoded?: boolean
  /**
   * Experimental. Resource servers (RFC 8707, features.resourceIndicators): resource (an absolute
   * URI) -> the scopes it offers. The `resource` parameters of an authorization request are
   * granted with their scopes; a token request naming one of them gets a JWT access token
   * (RFC 9068) with that audience and its granted scopes; without `resource`, the access token is
   * the opaque one for userinfo.
   */
  readonly resourceServers?: Readonly<Record<string, { readonly scopes: readonly string[] }>>
}

/**
 * The claims released per scope; with {@link TestOidcProviderOptions.loginAuthentication}, the
 * login's `acr`, `amr` and `auth_time` with `openid` (in every ID token, as Entra and Okta send them).
 */
function claimsOf (options: TestOidcProviderOptions): Record<string, string[]> {
  const claims = options.claims === undefined
    ? { openid: ['sub'], profile: ['name', 'roles', 'groups'], email: ['email'] }
    : Object.fromEntries(Object.entries(options.claims).map(([scope, names]) => [scope, [...names]]))
  if (options.loginAuthentication !== undefined) claims.openid = [...(claims.openid ?? ['sub']), 'acr', 'amr', 'auth_time']
  return claims
}

/** oidc-provider's features.resourceIndicators for `servers`: JWT access tokens per resource, none by default. */
function resourceIndicatorsOf (servers: NonNullable<TestOidcProviderOptions['resourceServers']>, ttlSeconds = 300): Record<string, unknown> {
  return {
    enabled: true,
    defaultResource: () => undefined,
    useGrantedResource: () => false,
    getResourceServerInfo: (_ctx: unknown, resource: string) => {
      const server = servers[resource]
      if (server === undefined) throw Object.assign(new Error('unknown resource'), { error: 'invalid_target', status: 400, expose: true })
      return { scope: server.scopes.join(' '), audience: resource, accessTokenFormat: 'jwt', accessTokenTTL: ttlSeconds, jwt: { sign: { alg: 'RS256' } } }
    }
  }
}

/** A running {@link startOidcProvider}. @public @experimental */
export interface TestOidcProvider {
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
  /** Pushed authorization requests the provider accepted (RFC 9126). */
  readonly pushedAuthorizationRequests: number
  /** The client assertions (`private_key_jwt`) of accepted token and pushed authorization requests, in order. */
  readonly clientAssertions: string[]
  /** Successful token-endpoint grants by grant_type (authorization_code, refresh_token). */
  readonly grants: Record<string, number>
  /** Back-channel logout POSTs the provider made, with the receiving endpoint's answer status. */
  readonly backChannelLogouts: Array<{ status?: number, error?: string }>
  /** Signs a JWT with the provider's own signing key (RS256, kid of its JWKS). */
  sign: (payload: Record<string, unknown>, header?: Record<string, unknown>) => Promise<string>
  /**
   * Switches the provider to a new signing key (new kid) without overlap: the JWKS then publishes
   * only the new key, and new ID tokens are signed with it. Returns the new kid.
   */
  rotateKeys: () => Promise<string>
  /** The kid new tokens are signed with. */
  readonly currentKid: string
  /** How many times the provider's jwks_uri has been fetched. */
  readonly jwksRequests: number
  /** Revokes the grant a refresh token belongs to (as an administrator at the provider would). */
  revokeRefreshToken: (value: string) => Promise<void>
  close: () => Promise<void>
}

/**
 * Starts a local OpenID Provider (oidc-provider) on 127.0.0.1, port 0, for end-to-end tests of
 * the OpenIdConnect provider: point `Authority` at `issuer`, then call `configure` with the app's
 * redirect URI once the app listens; drive its pages with {@link throughIdpLogin}.
 *
 * @public @experimental
 */
export async function startOidcProvider (options: TestOidcProviderOptions): Promise<TestOidcProvider> {
  const Provider = await loadOidcProvider()
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
  let pushedAuthorizationRequests = 0
  const clientAssertions: string[] = []
  const grants: Record<string, number> = {}
  const backChannelLogouts: Array<{ status?: number, error?: string }> = []
  let signingKey: Parameters<SignJWT['sign']>[0] | undefined
  let provider: OidcProviderInstance | undefined
  let currentKid = 'test-rs256'
  let generation = 0
  let jwksRequests = 0
  let registered: { redirectUri: string, postLogoutRedirectUris: string[] } | undefined
  async function configure (redirectUri: string, postLogoutRedirectUris: string[] = []): Promise<void> {
    registered = { redirectUri, postLogoutRedirectUris }
    const { privateKey } = await generateKeyPair('RS256', { extractable: true })
    signingKey = privateKey
    const backChannel = options.backChannelLogoutUri?.(redirectUri)
    const refresh = options.refreshTokens
    const jwk = { ...(await exportJWK(privateKey)), kid: currentKid, alg: 'RS256', use: 'sig' }
    // The memory adapter's storage is shared by every Provider instance of the process, so a
    // provider rebuilt with a new key keeps its sessions and grants.
    provider = new Provider(issuer, {
      clients: [{
        client_id: options.clientId,
        client_secret: options.clientSecret,
        redirect_uris: [redirectUri],
        post_logout_redirect_uris: postLogoutRedirectUris,
        response_types: ['code'],
        grant_types: refresh === undefined ? ['authorization_code'] : ['authorization_code', 'refresh_token'],
        token_endpoint_auth_method: options.tokenEndpointAuthMethod ?? 'client_secret_basic',
        id_token_signed_response_alg: 'RS256',
        ...(options.clientJwks === undefined ? {} : { jwks: { keys: options.clientJwks.keys.map((key) => ({ ...key })) } }),
        ...(backChannel === undefined ? {} : { backchannel_logout_uri: backChannel, backchannel_logout_session_required: true })
      }],
      ...(refresh === undefined
        ? {}
        : {
            ttl: {
              AccessToken: (ctx: { oidc?: { params?: { grant_type?: unknown } } }) => ctx.oidc?.params?.grant_type === 'refresh_token'
                ? refresh.refreshedAccessTokenTtlSeconds ?? refresh.accessTokenTtlSeconds
                : refresh.accessTokenTtlSeconds,
              RefreshToken: 3600
            },
            issueRefreshToken: async () => true,
            rotateRefreshToken: true
          }),
      jwks: { keys: [jwk] },
      claims: claimsOf(options),
      ...(options.clientAuthMethods === undefined ? {} : { clientAuthMethods: [...options.clientAuthMethods] }),
      ...(options.acrValues === undefined ? {} : { acrValues: [...options.acrValues] }),
      cookies: { keys: ['oidc-idp-test-cookie-key'] },
      pkce: { required: () => true },
      // The provider's outbound fetch refuses special-use addresses (SSRF protection); the app
      // under test listens on 127.0.0.1, so its back-channel POST goes without that dispatcher.
      fetch: async (url: string | URL, init: RequestInit & { dispatcher?: unknown }) => {
        return await fetch(url, { ...init, dispatcher: undefined } as RequestInit)
      },
      features: {
        devInteractions: { enabled: true },
        pushedAuthorizationRequests: { enabled: options.pushedAuthorization !== 'disabled', requirePushedAuthorizationRequests: options.pushedAuthorization === 'required' },
        ...(backChannel === undefined ? {} : { backchannelLogout: { enabled: true } }),
        ...(options.resourceServers === undefined ? {} : { resourceIndicators: resourceIndicatorsOf(options.resourceServers, refresh?.accessTokenTtlSeconds) })
      },
      async findAccount (_ctx: unknown, id: string) {
        const claims = options.accounts[id]
        if (claims === undefined) return undefined
        return { accountId: id, claims: async () => ({ sub: id, ...claims }) }
      }
    })
    provider.on('authorization_code.saved', (code: unknown) => { issuedCodes.push((code as { jti: string }).jti) })
    provider.on('access_token.saved', (token: unknown) => { issuedTokens.push((token as { jti: string }).jti) })
    provider.on('backchannel.success', () => { backChannelLogouts.push({ status: 200 }) })
    provider.on('backchannel.error', (_ctx: unknown, error: unknown) => { backChannelLogouts.push({ error: (error as Error).message }) })
    const keepAssertion = (ctx: unknown): void => {
      const oidc = (ctx as { oidc?: { params?: { client_assertion?: unknown }, body?: { client_assertion?: unknown } } }).oidc
      const assertion = oidc?.body?.client_assertion ?? oidc?.params?.client_assertion
      if (typeof assertion === 'string') clientAssertions.push(assertion)
    }
    provider.on('pushed_authorization_request.success', (ctx: unknown) => { pushedAuthorizationRequests++; keepAssertion(ctx) })
    provider.on('grant.success', (ctx: unknown) => {
      keepAssertion(ctx)
      const grantType = (ctx as { oidc?: { params?: { grant_type?: unknown } } }).oidc?.params?.grant_type
      if (typeof grantType === 'string') grants[grantType] = (grants[grantType] ?? 0) + 1
      const body = (ctx as { body?: Record<string, unknown> }).body ?? {}
      for (const key of ['access_token', 'id_token', 'refresh_token']) {
        const value = body[key]
        if (typeof value === 'string') issuedTokenResponseValues.push(value)
      }
    })
    provider.on('end_session.success', () => { endedSessions++ })
    const callback = provider.callback()
    const interaction = /^\/interaction\/[A-Za-z0-9_-]+$/
    // The dev login's form, finished with the acr and amr the test chose (the body is handed on
    // already read for any other prompt; oidc-provider reads `request.body` then).
    const login = async (request: IncomingMessage, response: ServerResponse, authenticationOf: NonNullable<TestOidcProviderOptions['loginAuthentication']>): Promise<void> => {
      const chunks: Buffer[] = []
      let size = 0
      for await (const chunk of request as AsyncIterable<Buffer>) {
        size += chunk.length
        if (size > 65_536) { response.writeHead(413).end(); return }
        chunks.push(chunk)
      }
      const raw = Buffer.concat(chunks).toString('utf8')
      const form = new URLSearchParams(raw)
      if (form.get('prompt') !== 'login') {
        (request as IncomingMessage & { body?: string }).body = raw
        callback(request, response)
        return
      }
      const accountId = form.get('login') ?? ''
      const how = authenticationOf(accountId)
      await provider?.interactionFinished(request, response, {
        login: { accountId, ...(how?.acr === undefined ? {} : { acr: how.acr }), ...(how?.amr === undefined ? {} : { amr: [...how.amr] }) }
      }, { mergeWithLastSubmission: false })
    }
    handler = (request, response) => {
      const authenticationOf = options.loginAuthentication
      if (authenticationOf !== undefined && request.method === 'POST' && interaction.test(request.url ?? '')) {
        login(request, response, authenticationOf).catch(() => { if (!response.headersSent) response.writeHead(500).end() })
        return
      }
      if (request.url?.startsWith('/jwks') === true) jwksRequests++
      const basic = /^Basic (.+)$/.exec(request.headers.authorization ?? '')?.[1]
      if (options.basicCredentialsNotDecoded === true && request.method === 'POST' && request.url?.startsWith('/token') === true && basic !== undefined) {
        const raw = Buffer.from(basic, 'base64').toString('utf8')
        const separator = raw.indexOf(':')
        if (raw.slice(0, separator) !== options.clientId || raw.slice(separator + 1) !== options.clientSecret) {
          response.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Basic realm="test-oidc"' })
            .end(JSON.stringify({ error: 'invalid_client', error_description: 'client authentication failed' }))
          return
        }
      }
      callback(request, response)
    }
    release()
  }

  return {
    issuer,
    configure,
    issuedCodes,
    issuedTokens,
    issuedTokenResponseValues,
    grants,
    clientAssertions,
    get pushedAuthorizationRequests () { return pushedAuthorizationRequests },
    backChannelLogouts,
    sign: async (payload, header = {}) => {
      if (signingKey === undefined) throw new Error('configure the IdP first')
      return await new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid: currentKid, ...header }).sign(signingKey)
    },
    rotateKeys: async () => {
      if (registered === undefined) throw new Error('configure the IdP first')
      currentKid = `test-rs256-${++generation}`
      await configure(registered.redirectUri, registered.postLogoutRedirectUris)
      return currentKid
    },
    get currentKid () { return currentKid },
    get jwksRequests () { return jwksRequests },
    revokeRefreshToken: async (value) => {
      const token = await (provider as unknown as { RefreshToken: { find: (v: string) => Promise<{ grantId: string } | undefined> }, Grant: { find: (id: string) => Promise<{ destroy: () => Promise<void> } | undefined> } } | undefined)?.RefreshToken.find(value)
      if (token === undefined) throw new Error('unknown refresh token')
      const grant = await (provider as unknown as { Grant: { find: (id: string) => Promise<{ destroy: () => Promise<void> } | undefined> } }).Grant.find(token.grantId)
      await grant?.destroy()
      await (token as unknown as { destroy: () => Promise<void> }).destroy()
    },
    get endedSessions () { return endedSessions },
    close: async () => {
      release()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
