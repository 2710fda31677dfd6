/**
 * The OpenIdConnect provider (auth-contract.md, "Providers:OpenIdConnect"), one instance per
 * configured OpenID Connect provider (the contract section or a named scheme; its state in
 * openid-connect-instance.ts, challenge and callback in openid-connect-sign-in.ts): its scheme on the
 * login page and /External/Challenge, and the anonymous endpoints it declares, the callback at
 * CallbackPath first (plugins/external-providers.ts registers them as routes). Discovery is
 * loaded in the background when the app becomes ready (startup never waits for the provider),
 * refreshed hourly, retried with backoff while it fails, and stopped when the app closes; until
 * it loads, status() is unavailable, so /health/ready answers 503 naming the provider and the
 * login page marks it unavailable. With SignOutAtProvider, sign-out continues at the provider's
 * end_session_endpoint (OpenID Connect RP-Initiated Logout 1.0) with id_token_hint, and the
 * provider returns the browser to SignedOutCallbackPath. With ResponseMode form_post the callback
 * is a POST. With BackChannelLogout, the provider's logout tokens at BackChannelLogoutPath end the
 * sessions of that provider sid or sub (oidc/back-channel-logout.ts). With SaveTokens, the
 * provider's refresh token renews the access token for app.session.accessToken. Protocol logic
 * lives in src/oidc/.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Dispatcher } from '../../http/outbound-address.js'
import * as client from 'openid-client'
import { isLocalUrl } from '../../http/local-url.js'
import { LogoutTokenError, remoteKeySet, validateLogoutToken } from '../../oidc/back-channel-logout.js'
import { OUTBOUND_TIMEOUT_SECONDS, refreshTokens } from '../../oidc/relying-party.js'
import { TokenRefreshError, type TokenRefresher } from '../../session/token-refresh.js'
import { singleValue } from '../../http/request-input.js'
import { ReplayCache } from '../../state/replay-cache.js'
import { providerSessionIndexKey, providerSubjectIndexKey } from '../../session/session-store.js'
import { sessionStoreOf } from '../session.js'
import { sessionAuditIdOf } from '../../session/user-identity.js'
import { ALREADY_OPEN, endpointPathsOf, openingOnFirstUse, providerEndpoint, type AuthenticationProvider, type ProviderEndpoint, type ProviderOpening } from '../../providers/provider.js'
import type { ProviderRegistration } from '../authentication.js'
import { createOpenIdConnectContext, type OpenIdConnectContext, type OpenIdConnectInstance } from './openid-connect-instance.js'
import { callback, challenge, signOutRedirect } from './openid-connect-sign-in.js'

export { allowsInsecureRequests } from './openid-connect-instance.js'

/** The media type of a Content-Type header, lower case, without parameters. */
function mediaTypeOf (header: string | undefined): string {
  return (header ?? '').split(';', 1)[0]!.trim().toLowerCase()
}

/**
 * Builds one OpenID Connect instance (its endpoints: callback, signed-out callback, back-channel
 * logout) and, with SaveTokens, registers its token refresher. One from the provider source opens
 * on first use: its discovery document is loaded by the first challenge or endpoint that needs it.
 */
export const registerOpenIdConnect: ProviderRegistration<OpenIdConnectInstance> = (app: FastifyInstance, options) => {
  const ctx = createOpenIdConnectContext(app, options)
  const opening = options.runtime === undefined ? ALREADY_OPEN : openingOnFirstUse(async () => { await ctx.metadata.refresh() })
  // SaveTokens: the refresh token renews the access token.
  const unregisterRefresher = ctx.settings.SaveTokens ? app.session.registerTokenRefresher(ctx.scheme, openIdConnectTokenRefresher(ctx, opening.open)) : undefined
  const provider = openIdConnectProvider(ctx, opening)
  return {
    provider: options.runtime === undefined ? provider : { ...provider, runtime: true },
    stop: () => { ctx.metadata.stop(); unregisterRefresher?.() }
  }
}

/**
 * The provider of one OpenID Connect instance, configured or (with its lazy `opening`) from the
 * provider source: its endpoints, challenge, readiness and RP-initiated sign-out. Before it has
 * opened, nothing is known against it, so it reports available (the first challenge loads it).
 */
export function openIdConnectProvider (ctx: OpenIdConnectContext, opening: ProviderOpening = ALREADY_OPEN): AuthenticationProvider & { readonly endpoints: readonly ProviderEndpoint[] } {
  const { settings, metadata } = ctx
  const endpoints = openIdConnectEndpoints(ctx, opening.open)
  return {
    scheme: ctx.scheme,
    displayName: settings.DisplayName,
    protocol: 'OpenIdConnect',
    domains: settings.Domains,
    stepUp: true,
    paths: endpointPathsOf(endpoints),
    endpoints,
    challenge: async (request, reply, returnUrl, hint) => { await opening.open(); return await challenge(ctx, request, reply, returnUrl, hint) },
    status: () => opening.opened ? metadata.status() : { available: true },
    signOutRedirect: (request, signedOut) => signOutRedirect(ctx, request, signedOut)
  }
}

/** SaveTokens: how the refresh token renews the access token, once the provider's metadata is loaded (`open` first). */
export function openIdConnectTokenRefresher (ctx: OpenIdConnectContext, open: () => Promise<void> = ALREADY_OPEN.open): TokenRefresher {
  const { settings, metadata } = ctx
  return async (tokens, parameters) => {
    await open()
    const config = metadata.current
    if (config === undefined) throw new TokenRefreshError('unavailable')
    return await refreshTokens(config, tokens, { keys: ctx.keysOf(config), algorithm: settings.IdTokenSignedResponseAlg }, parameters)
  }
}

/**
 * The endpoints of one OpenID Connect instance: the callback at CallbackPath (a POST with
 * ResponseMode form_post, else a GET), with SignOutAtProvider the signed-out callback, with
 * BackChannelLogout the back-channel logout receiver. `open` runs before a handler that needs the
 * provider's metadata (a provider from the provider source loads it on first use).
 */
export function openIdConnectEndpoints (ctx: OpenIdConnectContext, open: () => Promise<void> = ALREADY_OPEN.open): ProviderEndpoint[] {
  const { settings } = ctx
  const endpoints: ProviderEndpoint[] = [settings.ResponseMode === 'form_post'
    ? providerEndpoint('callback', 'POST', settings.CallbackPath, async (request, reply) => { await open(); return await callback(ctx, request, reply, request.body, formPostQuery(request.body)) })
    : providerEndpoint('callback', 'GET', settings.CallbackPath, async (request, reply) => { await open(); return await callback(ctx, request, reply, request.query, rawQueryOf(request)) })]
  if (settings.SignOutAtProvider) endpoints.push(providerEndpoint('signed-out-callback', 'GET', settings.SignedOutCallbackPath, signedOutCallback))
  if (settings.BackChannelLogout) {
    const backChannelLogout = backChannelLogoutHandler(ctx.app, {
      scheme: ctx.scheme,
      clientId: settings.ClientId,
      algorithm: settings.IdTokenSignedResponseAlg,
      clockToleranceSeconds: settings.ClockSkewSeconds,
      metadata: () => ctx.metadata.current,
      ...(ctx.options.runtime?.dispatcher === undefined ? {} : { dispatcher: ctx.options.runtime.dispatcher })
    })
    endpoints.push(providerEndpoint('back-channel-logout', 'POST', settings.BackChannelLogoutPath, async (request, reply) => { await open(); return await backChannelLogout(request, reply) }))
  }
  return endpoints
}

/** The provider's way back after logout; `state` is the local return URL we sent (anything else: /). */
function signedOutCallback (request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const state = singleValue(request.query, 'state')
  return reply.redirect(typeof state === 'string' && isLocalUrl(state) ? state : '/', 302)
}

/**
 * The form_post parameters as the query string openid-client reads the response from (it does the
 * same with a POST Request): undefined when a parameter is repeated or not text.
 */
export function formPostQuery (body: unknown): string | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined
  const parameters = new URLSearchParams()
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    if (typeof value !== 'string') return undefined
    parameters.append(name, value)
  }
  return `?${parameters.toString()}`
}

/** The callback's query string exactly as received (`?…`, or empty), which openid-client reads the response from. */
export function rawQueryOf (request: FastifyRequest): string {
  const start = request.url.indexOf('?')
  return start === -1 ? '' : request.url.slice(start)
}

export interface BackChannelLogoutOptions {
  readonly scheme: string
  readonly clientId: string
  readonly algorithm: string
  readonly clockToleranceSeconds: number
  readonly metadata: () => client.Configuration | undefined
  /** A provider from the provider source: its connections (public addresses only outside Development). */
  readonly dispatcher?: Dispatcher
}

/**
 * OpenID Connect Back-Channel Logout 1.0: the provider POSTs `logout_token` (form-encoded) to
 * BackChannelLogoutPath. Anonymous and without an anti-forgery token (a server-to-server call; the
 * token's signature authenticates it). A valid token ends, on every instance, the sessions signed
 * in with that provider `sid` (or, when the token names only a `sub`, every session of that
 * provider subject) and is answered 200; any refused token 400 `{"error":"invalid_request"}`; a
 * key set or state store that cannot answer 503 (so the provider may retry). Always
 * `Cache-Control: no-store`. The log names the failure class, never the token.
 */
export function backChannelLogoutHandler (app: FastifyInstance, options: BackChannelLogoutOptions): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> {
  const replays = new ReplayCache(app.state, 'oidc-logout')
  let keys: { uri: string, set: ReturnType<typeof remoteKeySet> } | undefined
  function keySetOf (config: client.Configuration): ReturnType<typeof remoteKeySet> | undefined {
    const uri = config.serverMetadata().jwks_uri
    if (uri === undefined) return undefined
    if (keys?.uri !== uri) keys = { uri, set: remoteKeySet(uri, OUTBOUND_TIMEOUT_SECONDS * 1000, options.dispatcher) }
    return keys.set
  }

  return async (request, reply) => {
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
    // Keyed on the issuer with the sid or sub: the same value at another issuer is another user;
    // and only sessions this scheme signed in end (issue 33, item 6).
    const ended = await sessionStoreOf(app).endIndexedSessions(indexKey, { scheme: options.scheme, nowSeconds: Math.floor(Date.now() / 1000) })
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
  }
}
