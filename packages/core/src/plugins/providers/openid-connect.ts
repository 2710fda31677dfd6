/**
 * The OpenIdConnect provider (auth-contract.md, "Providers:OpenIdConnect"): its scheme on the
 * login page and /External/Challenge, and its anonymous callback at CallbackPath. Discovery is
 * loaded in the background when the app becomes ready (startup never waits for the provider),
 * refreshed hourly, retried with backoff while it fails, and stopped when the app closes; until
 * it loads, status() is unavailable, so /health/ready answers 503 naming the provider and the
 * login page marks it unavailable. With SignOutAtProvider, sign-out continues at the provider's
 * end_session_endpoint (OpenID Connect RP-Initiated Logout 1.0) with id_token_hint, and the
 * provider returns the browser to SignedOutCallbackPath. With ResponseMode form_post the callback
 * is a POST. With BackChannelLogout, the provider's logout tokens at BackChannelLogoutPath end the
 * sessions of that provider sid or sub (auth/oidc-back-channel-logout.ts). With SaveTokens, the
 * provider's refresh token renews the access token for app.session.accessToken. Protocol logic
 * lives in auth/openid-connect.ts.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import * as client from 'openid-client'
import { isDevelopmentLoopbackHttp } from '../../http/host-trust.js'
import { isLocalUrl } from '../../http/local-url.js'
import {
  LogoutTokenError,
  remoteKeySet,
  validateLogoutToken
} from '../../oidc/back-channel-logout.js'
import {
  buildAuthorizationRequest,
  completeAuthorizationCodeFlow,
  discoverProvider,
  discoveryUrlOf,
  newCorrelationValues,
  OpenIdConnectError,
  OUTBOUND_TIMEOUT_SECONDS,
  ProviderMetadata,
  refreshTokens
} from '../../oidc/relying-party.js'
import { ProviderKeys } from '../../oidc/provider-keys.js'
import { TokenRefreshError } from '../../session/token-refresh.js'
import { isFieldPath } from '../../sign-in/claim-paths.js'
import { networkCauseCode, urlForLog } from '../../http/outbound-diagnostics.js'
import { singleValue } from '../../http/request-input.js'
import { ReplayCache } from '../../state/replay-cache.js'
import { providerSessionIndexKey, providerSubjectIndexKey } from '../../session/session-store.js'
import { ROOT_KEY } from '../../config/schema.js'
import type { ChallengeHint, SignedOutPrincipal } from '../authentication.js'
import { sessionStoreOf } from '../session.js'
import { sessionAuditIdOf } from '../../session/user-identity.js'
import type { ProviderRegistration } from '../authentication.js'
import type { ProviderInstance } from '../../providers/instances.js'

type OpenIdConnectInstance = Extract<ProviderInstance, { protocol: 'OpenIdConnect' }>

/** http to the provider only for a loopback Authority in Development (validation rejects it elsewhere). */
/** The media type of a Content-Type header, lower case, without parameters. */
function mediaTypeOf (header: string | undefined): string {
  return (header ?? '').split(';', 1)[0]!.trim().toLowerCase()
}

export function allowsInsecureRequests (authority: string, environmentName: string): boolean {
  return isDevelopmentLoopbackHttp(new URL(authority), environmentName)
}

export const registerOpenIdConnect: ProviderRegistration<OpenIdConnectInstance> = async (app: FastifyInstance, options) => {
  const settings = options.instance.settings
  const scheme = settings.Scheme
  const log = app.log.child({ provider: scheme })
  const allowInsecureRequests = allowsInsecureRequests(settings.Authority, options.environmentName)
  let warnedBackChannel = false
  const metadata = new ProviderMetadata(() => discoverProvider({
    authority: settings.Authority,
    clientId: settings.ClientId,
    clientSecret: settings.ClientSecret,
    idTokenSignedResponseAlg: settings.IdTokenSignedResponseAlg,
    allowInsecureRequests,
    tokenEndpointAuthMethod: settings.TokenEndpointAuthMethod,
    clockToleranceSeconds: settings.ClockSkewSeconds
  }), {
    onFailure: (reason, error) => {
      // The URL without credentials or query, and the cause code (ENOTFOUND, ECONNREFUSED,
      // certificate errors) that undici keeps in error.cause.
      log.warn({
        event: 'external.metadata.failed',
        reason,
        url: urlForLog(discoveryUrlOf(settings.Authority)),
        causeCode: networkCauseCode(error),
        errorName: (error as Error | null)?.name,
        errorCode: (error as { code?: unknown } | null)?.code
      }, 'provider metadata could not be loaded')
    },
    onLoaded: () => {
      log.info({ event: 'external.metadata.loaded' }, 'provider metadata loaded')
      // OpenID Connect Back-Channel Logout 1.0, section 2.1: an absent backchannel_logout_supported means false.
      if (settings.BackChannelLogout && !warnedBackChannel && metadata.current?.serverMetadata().backchannel_logout_supported !== true) {
        warnedBackChannel = true
        log.warn({
          event: 'oidc.back_channel_logout.unsupported',
          setting: `${ROOT_KEY}:Authentication:Providers:OpenIdConnect:BackChannelLogout`
        }, 'BackChannelLogout is on but the provider\'s discovery document does not advertise backchannel_logout_supported: it may never send logout tokens')
      }
    }
  })

  // The signing keys of the discovered jwks_uri, kept across metadata refreshes of the same URI
  // so that the unknown-key refetch limit holds per provider.
  let signingKeys: ProviderKeys | undefined
  function keysOf (config: client.Configuration): ProviderKeys {
    const jwksUri = config.serverMetadata().jwks_uri ?? ''
    if (signingKeys?.jwksUri !== jwksUri) {
      signingKeys = new ProviderKeys({
        jwksUri,
        allowInsecureRequests,
        timeoutMs: OUTBOUND_TIMEOUT_SECONDS * 1000,
        onUnknownKeyRefetch: (found) => {
          log.info({ event: 'oidc.signing_keys.refetched', reason: 'unknown_key', found }, 'provider signing keys fetched again for an unknown key id')
        }
      })
    }
    return signingKeys
  }
  const fieldPaths = Object.keys(settings.ClaimMappings).filter(isFieldPath)

  app.addHook('onReady', async () => { metadata.start() })
  app.addHook('onClose', async () => { metadata.stop() })

  async function challenge (request: FastifyRequest, reply: FastifyReply, returnUrl: string, hint?: ChallengeHint): Promise<FastifyReply> {
    const config = metadata.current
    if (config === undefined) return app.externalSignIn.fail(request, reply, scheme, 'unavailable')
    const { nonce, codeVerifier } = newCorrelationValues()
    const state = await app.externalSignIn.beginFlow(reply, scheme, returnUrl, { nonce, codeVerifier })
    const url = await buildAuthorizationRequest(config, {
      redirectUri: `${app.externalSignIn.publicOrigin(request)}${settings.CallbackPath}`,
      scopes: settings.Scopes,
      state,
      nonce,
      codeVerifier,
      responseMode: settings.ResponseMode,
      ...(hint?.loginHint === undefined ? {} : { loginHint: hint.loginHint })
    })
    return reply.redirect(url.href, 302)
  }

  /**
   * The authorization response: from the query (GET) or, with ResponseMode form_post, from the
   * form body of the provider's cross-site POST. No anti-forgery token: the state and the
   * correlation cookie bind the response to the browser that started the flow.
   */
  async function callback (request: FastifyRequest, reply: FastifyReply, parameters: unknown, query: string | undefined): Promise<FastifyReply> {
    const state = singleValue(parameters, 'state')
    const flow = await app.externalSignIn.takeFlow(request, reply, scheme, state)
    const error = singleValue(parameters, 'error')
    if (error !== undefined) return app.externalSignIn.fail(request, reply, scheme, error === 'access_denied' ? 'cancelled' : 'provider_error')
    if (flow === undefined) return app.externalSignIn.fail(request, reply, scheme, 'correlation')
    const config = metadata.current
    if (config === undefined) return app.externalSignIn.fail(request, reply, scheme, 'unavailable')
    const nonce = flow.data.nonce
    const codeVerifier = flow.data.codeVerifier
    if (nonce === undefined || codeVerifier === undefined) return app.externalSignIn.fail(request, reply, scheme, 'correlation')

    if (query === undefined) return app.externalSignIn.fail(request, reply, scheme, 'provider_error')
    try {
      const callbackUrl = new URL(`${app.externalSignIn.publicOrigin(request)}${settings.CallbackPath}${query}`)
      const result = await completeAuthorizationCodeFlow(config, callbackUrl, { state: flow.flowId, nonce, codeVerifier }, {
        keys: keysOf(config),
        algorithm: settings.IdTokenSignedResponseAlg,
        clockToleranceSeconds: settings.ClockSkewSeconds,
        fieldPaths
      })
      const { issuer, sub, sid } = result.providerSession
      return await app.externalSignIn.complete(request, reply, {
        scheme,
        claims: result.claims,
        ...(result.groupOverage === undefined ? {} : { groupOverage: result.groupOverage, acceptGroupOverage: settings.AcceptGroupOverage }),
        // Back-channel logout finds the session by the provider's sid, or by its sub.
        ...(settings.BackChannelLogout
          ? { indexKeys: [providerSubjectIndexKey(issuer, sub), ...(sid === undefined ? [] : [providerSessionIndexKey(issuer, sid)])] }
          : {}),
        returnUrl: flow.returnUrl,
        claimMappings: settings.ClaimMappings,
        // RP-initiated logout needs the ID token as id_token_hint: kept alone when SaveTokens is off.
        ...(settings.SaveTokens
          ? { tokens: result.tokens }
          : settings.SignOutAtProvider && result.tokens.id_token !== undefined ? { tokens: { id_token: result.tokens.id_token } } : {})
      })
    } catch (failure) {
      if (failure instanceof OpenIdConnectError) {
        return app.externalSignIn.fail(request, reply, scheme, failure.failure, failure)
      }
      // An unparsable callback URL (the host check makes it unreachable; never a 500 if it is not).
      if ((failure as { code?: unknown }).code === 'ERR_INVALID_URL') return app.externalSignIn.fail(request, reply, scheme, 'provider_error', failure)
      throw failure
    }
  }

  if (settings.ResponseMode === 'form_post') {
    app.post(settings.CallbackPath, { bodyLimit: 16 * 1024, config: { allowAnonymous: true } }, async (request, reply) =>
      await callback(request, reply, request.body, formPostQuery(request.body)))
  } else {
    app.get(settings.CallbackPath, { config: { allowAnonymous: true } }, async (request, reply) =>
      await callback(request, reply, request.query, request.url.indexOf('?') === -1 ? '' : request.url.slice(request.url.indexOf('?'))))
  }

  /**
   * RP-initiated logout: the provider's end_session_endpoint with id_token_hint (when the ticket
   * kept the ID token), client_id, the registered post-logout redirect URI and the local return
   * URL as `state`. Nothing is sent to the provider from here; undefined (local sign-out only)
   * when the option is off, the metadata is not loaded or the provider has no end_session_endpoint.
   */
  function signOutRedirect (request: FastifyRequest, signedOut: SignedOutPrincipal): string | undefined {
    const config = metadata.current
    if (!settings.SignOutAtProvider || config === undefined || config.serverMetadata().end_session_endpoint === undefined) return undefined
    const parameters: Record<string, string> = {
      post_logout_redirect_uri: `${app.externalSignIn.publicOrigin(request)}${settings.SignedOutCallbackPath}`,
      state: signedOut.returnUrl
    }
    const idToken = signedOut.principal.ticket.tokens?.id_token
    if (idToken !== undefined) parameters.id_token_hint = idToken
    return client.buildEndSessionUrl(config, parameters).href
  }

  if (settings.SignOutAtProvider) {
    // The provider's way back after logout; `state` is the local return URL we sent (anything else: /).
    app.get(settings.SignedOutCallbackPath, { config: { allowAnonymous: true } }, async (request, reply) => {
      const state = singleValue(request.query, 'state')
      return reply.redirect(typeof state === 'string' && isLocalUrl(state) ? state : '/', 302)
    })
  }

  if (settings.SaveTokens) {
    app.session.registerTokenRefresher(scheme, async (tokens) => {
      const config = metadata.current
      if (config === undefined) throw new TokenRefreshError('unavailable')
      return await refreshTokens(config, tokens, { keys: keysOf(config), algorithm: settings.IdTokenSignedResponseAlg })
    })
  }

  if (settings.BackChannelLogout) {
    registerBackChannelLogout(app, settings.BackChannelLogoutPath, {
      scheme,
      clientId: settings.ClientId,
      algorithm: settings.IdTokenSignedResponseAlg,
      clockToleranceSeconds: settings.ClockSkewSeconds,
      metadata: () => metadata.current
    })
  }

  const paths = [settings.CallbackPath]
  if (settings.SignOutAtProvider) paths.push(settings.SignedOutCallbackPath)
  if (settings.BackChannelLogout) paths.push(settings.BackChannelLogoutPath)
  app.authentication.registerProvider({
    scheme,
    displayName: settings.DisplayName,
    protocol: 'OpenIdConnect',
    domains: settings.Domains,
    paths,
    challenge,
    status: () => metadata.status(),
    signOutRedirect
  })
}

/**
 * The form_post parameters as the query string openid-client reads the response from (it does the
 * same with a POST Request): undefined when a parameter is repeated or not text.
 */
function formPostQuery (body: unknown): string | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined
  const parameters = new URLSearchParams()
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    if (typeof value !== 'string') return undefined
    parameters.append(name, value)
  }
  return `?${parameters.toString()}`
}

/** Largest back-channel logout request body: one form field holding a logout token. */
const BACK_CHANNEL_LOGOUT_BODY_LIMIT = 16 * 1024

/**
 * OpenID Connect Back-Channel Logout 1.0: the provider POSTs `logout_token` (form-encoded) to
 * `path`. Anonymous and without an anti-forgery token (a server-to-server call; the token's
 * signature authenticates it). A valid token ends, on every instance, the sessions signed in with
 * that provider `sid` (or, when the token names only a `sub`, every session of that provider
 * subject) and is answered 200; any refused token 400 `{"error":"invalid_request"}`; a key set
 * or state store that cannot answer 503 (so the provider may retry). Always `Cache-Control:
 * no-store`. The log names the failure class, never the token.
 */
function registerBackChannelLogout (app: FastifyInstance, path: string, options: {
  readonly scheme: string
  readonly clientId: string
  readonly algorithm: string
  readonly clockToleranceSeconds: number
  readonly metadata: () => client.Configuration | undefined
}): void {
  const replays = new ReplayCache(app.state, 'oidc-logout')
  let keys: { uri: string, set: ReturnType<typeof remoteKeySet> } | undefined
  function keySetOf (config: client.Configuration): ReturnType<typeof remoteKeySet> | undefined {
    const uri = config.serverMetadata().jwks_uri
    if (uri === undefined) return undefined
    if (keys?.uri !== uri) keys = { uri, set: remoteKeySet(uri, OUTBOUND_TIMEOUT_SECONDS * 1000) }
    return keys.set
  }

  app.post(path, { bodyLimit: BACK_CHANNEL_LOGOUT_BODY_LIMIT, config: { allowAnonymous: true } }, async (request, reply) => {
    reply.header('cache-control', 'no-store')
    const refuse = (failure: LogoutTokenError['failure'], code?: string): FastifyReply => {
      const unavailable = failure === 'unavailable'
      request.log.warn({ event: 'oidc.back_channel_logout.rejected', provider: options.scheme, failure, errorCode: code }, 'back-channel logout refused')
      return unavailable
        ? reply.code(503).send({ error: 'temporarily_unavailable' })
        : reply.code(400).send({ error: 'invalid_request' })
    }
    // OpenID Connect Back-Channel Logout 1.0, 2.5: the token comes form-encoded, nothing else.
    if (mediaTypeOf(request.headers['content-type']) !== 'application/x-www-form-urlencoded') return refuse('malformed', 'CONTENT_TYPE_NOT_FORM')
    const token = singleValue(request.body, 'logout_token')
    if (typeof token !== 'string') return refuse('malformed', 'LOGOUT_TOKEN_MISSING')
    const config = options.metadata()
    const keySet = config === undefined ? undefined : keySetOf(config)
    if (config === undefined || keySet === undefined) return refuse('unavailable', 'METADATA_NOT_LOADED')
    let validated
    try {
      validated = await validateLogoutToken(token, {
        issuer: config.serverMetadata().issuer,
        clientId: options.clientId,
        algorithm: options.algorithm,
        keys: keySet,
        clockToleranceSeconds: options.clockToleranceSeconds
      })
    } catch (error) {
      if (error instanceof LogoutTokenError) return refuse(error.failure, error.code)
      throw error
    }
    // One use per jti, on every instance that shares the store.
    if (!await replays.remember(`${validated.issuer}\u0000${validated.jti}`, validated.acceptableUntilMs)) return refuse('replay', 'LOGOUT_TOKEN_REPLAYED')
    const indexKey = validated.sid !== undefined
      ? providerSessionIndexKey(validated.issuer, validated.sid)
      : providerSubjectIndexKey(validated.issuer, validated.sub ?? '')
    // Keyed on the issuer with the sid or sub: the same value at another issuer is another user.
    const ended = await sessionStoreOf(app).endIndexedSessions(indexKey)
    request.log.info({
      event: 'oidc.back_channel_logout.succeeded',
      provider: options.scheme,
      issuer: validated.issuer,
      ...(validated.sub === undefined ? {} : { subject: validated.sub }),
      by: validated.sid !== undefined ? 'sid' : 'sub',
      sessions: ended.length,
      sessionAuditIds: ended.map(sessionAuditIdOf)
    }, 'back-channel logout')
    return reply.code(200).send()
  })
}
