/**
 * One provider from the app's provider source (plugins/runtime-providers.ts): the same protocol
 * state and handlers as a configured scheme (openid-connect-instance.ts, saml2-instance.ts), but
 * without app hooks or routes of its own. It opens lazily: its discovery document or IdP metadata
 * is fetched on the first challenge (which waits for that first load), then refreshed on the
 * protocol's own schedule, and stopped when the provider is removed or the app closes.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { isLocalUrl } from '../../http/local-url.js'
import { singleValue } from '../../http/request-input.js'
import { buildServiceProviderMetadata } from '../../saml2/service-provider.js'
import type { AuthenticationProvider } from '../../providers/provider.js'
import type { ProviderRegistrationOptions } from '../authentication.js'
import { createOpenIdConnectContext, type OpenIdConnectInstance } from './openid-connect-instance.js'
import { callback, challenge as openIdConnectChallenge, signOutRedirect } from './openid-connect-sign-in.js'
import { backChannelLogoutHandler, formPostQuery, rawQueryOf } from './openid-connect.js'
import { createSaml2Context, type Saml2Instance } from './saml2-instance.js'
import { assertionConsumerService, challenge as saml2Challenge } from './saml2-sign-in.js'
import { signOutRedirect as saml2SignOutRedirect, singleLogoutService } from './saml2-logout.js'
import type { ProviderInstance } from '../../config/provider-instances.js'
import { refreshTokens } from '../../oidc/relying-party.js'
import { TokenRefreshError } from '../../session/token-refresh.js'

/** The kinds of endpoint the parametric routes serve. */
export type RouteKind = 'callback' | 'signed-out' | 'back-channel-logout' | 'acs' | 'metadata' | 'saml-logout'

export interface RuntimeInstance {
  readonly provider: AuthenticationProvider
  readonly paths: readonly string[]
  /** Each path with the kind of endpoint it is. */
  readonly routes: ReadonlyArray<readonly [string, RouteKind]>
  handle: (kind: RouteKind, request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>
  stop: () => void
}

/** The app's safe 404 (an endpoint of a kind this provider does not serve). */
function notFound (reply: FastifyReply): FastifyReply {
  reply.callNotFound()
  return reply
}

/** Runs `load` once, on first use; later calls wait for the same first load. */
function opener (load: () => Promise<void>): { open: () => Promise<void>, readonly opened: boolean } {
  let first: Promise<void> | undefined
  return {
    open: async () => { first ??= load(); await first },
    get opened () { return first !== undefined }
  }
}

function openIdConnectInstance (app: FastifyInstance, options: ProviderRegistrationOptions<OpenIdConnectInstance>): RuntimeInstance {
  const ctx = createOpenIdConnectContext(app, options)
  const { settings, metadata } = ctx
  const lazy = opener(async () => { await metadata.refresh() })
  // SaveTokens: the refresh token renews the access token, as for a configured scheme (openid-connect.ts).
  const unregisterRefresher = settings.SaveTokens
    ? app.session.registerTokenRefresher(ctx.scheme, async (tokens) => {
      await lazy.open()
      const config = metadata.current
      if (config === undefined) throw new TokenRefreshError('unavailable')
      return await refreshTokens(config, tokens, { keys: ctx.keysOf(config), algorithm: settings.IdTokenSignedResponseAlg })
    })
    : undefined
  const routes: Array<readonly [string, RouteKind]> = [[settings.CallbackPath, 'callback']]
  if (settings.SignOutAtProvider) routes.push([settings.SignedOutCallbackPath, 'signed-out'])
  if (settings.BackChannelLogout) routes.push([settings.BackChannelLogoutPath, 'back-channel-logout'])
  const backChannelLogout = settings.BackChannelLogout
    ? backChannelLogoutHandler(app, { scheme: ctx.scheme, clientId: settings.ClientId, algorithm: settings.IdTokenSignedResponseAlg, clockToleranceSeconds: settings.ClockSkewSeconds, metadata: () => metadata.current })
    : undefined
  const paths = routes.map(([path]) => path)
  return {
    provider: {
      scheme: ctx.scheme,
      displayName: settings.DisplayName,
      protocol: 'OpenIdConnect',
      domains: settings.Domains,
      runtime: true,
      paths,
      challenge: async (request, reply, returnUrl, hint) => { await lazy.open(); return await openIdConnectChallenge(ctx, request, reply, returnUrl, hint) },
      // Not opened yet: nothing is known against it (the first challenge loads it).
      status: () => lazy.opened ? metadata.status() : { available: true },
      signOutRedirect: (request, signedOut) => signOutRedirect(ctx, request, signedOut)
    },
    paths,
    routes,
    async handle (kind, request, reply) {
      if (kind === 'signed-out') {
        const state = singleValue(request.query, 'state')
        return reply.redirect(typeof state === 'string' && isLocalUrl(state) ? state : '/', 302)
      }
      await lazy.open()
      if (kind === 'back-channel-logout') return backChannelLogout === undefined ? notFound(reply) : await backChannelLogout(request, reply)
      if (request.method === 'POST') {
        if (settings.ResponseMode !== 'form_post') return notFound(reply)
        return await callback(ctx, request, reply, request.body, formPostQuery(request.body))
      }
      if (settings.ResponseMode === 'form_post') return notFound(reply)
      return await callback(ctx, request, reply, request.query, rawQueryOf(request))
    },
    stop: () => { metadata.stop(); unregisterRefresher?.() }
  }
}

function saml2Instance (app: FastifyInstance, options: ProviderRegistrationOptions<Saml2Instance>): RuntimeInstance {
  const ctx = createSaml2Context(app, options)
  const { source, saml, settings } = ctx
  const refresh = (source as { refresh?: () => Promise<void> }).refresh
  const lazy = opener(async () => { if (refresh !== undefined) await refresh.call(source) })
  const routes: Array<readonly [string, RouteKind]> = [[ctx.modulePath, 'acs'], [ctx.SAML2_METADATA_PATH, 'metadata']]
  if (ctx.singleLogout) routes.push([ctx.SAML2_LOGOUT_PATH, 'saml-logout'])
  const paths = routes.map(([path]) => path)
  return {
    provider: {
      scheme: ctx.scheme,
      displayName: saml.DisplayName,
      protocol: 'Saml2',
      domains: saml.Domains,
      runtime: true,
      paths,
      challenge: async (request, reply, returnUrl) => { await lazy.open(); return await saml2Challenge(ctx, request, reply, returnUrl) },
      status: () => lazy.opened ? ctx.status() : { available: true },
      signOutRedirect: async (request, signedOut) => await saml2SignOutRedirect(ctx, request, signedOut)
    },
    paths,
    routes,
    async handle (kind, request, reply) {
      if (kind === 'metadata') {
        const logoutUrl = ctx.singleLogout ? `${app.externalSignIn.publicOrigin(request)}${ctx.SAML2_LOGOUT_PATH}` : undefined
        return reply.type('application/samlmetadata+xml; charset=utf-8').send(buildServiceProviderMetadata(settings, ctx.acsUrlOf(request), logoutUrl))
      }
      await lazy.open()
      if (kind === 'saml-logout') return await singleLogoutService(ctx, request, reply)
      return await assertionConsumerService(ctx, request, reply)
    },
    stop: () => { source.stop() }
  }
}

/** Opens the state of one runtime provider of either protocol (nothing is fetched until first use). */
export function openRuntimeInstance (app: FastifyInstance, options: ProviderRegistrationOptions): RuntimeInstance {
  const instance: ProviderInstance = options.instance
  if (instance.protocol === 'OpenIdConnect') return openIdConnectInstance(app, { ...options, instance })
  if (instance.protocol === 'Saml2') return saml2Instance(app, { ...options, instance })
  throw new TypeError('a provider from the provider source is OpenIdConnect or Saml2')
}
