/**
 * One provider from the app's provider source (plugins/runtime-providers.ts): the same protocol
 * state, handlers and endpoint list as a configured scheme (openid-connect.ts `openIdConnectEndpoints`,
 * saml2.ts `saml2Endpoints`), but without app hooks or routes of its own: the parametric routes
 * dispatch to its endpoints. It opens lazily: its discovery document or IdP metadata is fetched
 * on the first challenge or endpoint that needs it (which waits for that first load), then
 * refreshed on the protocol's own schedule, and stopped when the provider is removed or the app
 * closes.
 */
import type { FastifyInstance } from 'fastify'
import { endpointPathsOf, type AuthenticationProvider, type ProviderEndpoint } from '../../providers/provider.js'
import type { ProviderRegistrationOptions } from '../authentication.js'
import { createOpenIdConnectContext, type OpenIdConnectInstance } from './openid-connect-instance.js'
import { challenge as openIdConnectChallenge, signOutRedirect } from './openid-connect-sign-in.js'
import { openIdConnectEndpoints } from './openid-connect.js'
import { createSaml2Context, type Saml2Instance } from './saml2-instance.js'
import { challenge as saml2Challenge } from './saml2-sign-in.js'
import { signOutRedirect as saml2SignOutRedirect } from './saml2-logout.js'
import { saml2Endpoints } from './saml2.js'
import type { ProviderInstance } from '../../config/provider-instances.js'
import { refreshTokens } from '../../oidc/relying-party.js'
import { TokenRefreshError } from '../../session/token-refresh.js'

export interface RuntimeInstance {
  /** The provider, with the endpoints the parametric routes dispatch to (the same list a configured scheme's routes are registered from). */
  readonly provider: AuthenticationProvider & { readonly endpoints: readonly ProviderEndpoint[] }
  stop: () => void
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
  const endpoints = openIdConnectEndpoints(ctx, lazy.open)
  return {
    provider: {
      scheme: ctx.scheme,
      displayName: settings.DisplayName,
      protocol: 'OpenIdConnect',
      domains: settings.Domains,
      runtime: true,
      paths: endpointPathsOf(endpoints),
      endpoints,
      challenge: async (request, reply, returnUrl, hint) => { await lazy.open(); return await openIdConnectChallenge(ctx, request, reply, returnUrl, hint) },
      // Not opened yet: nothing is known against it (the first challenge loads it).
      status: () => lazy.opened ? metadata.status() : { available: true },
      signOutRedirect: (request, signedOut) => signOutRedirect(ctx, request, signedOut)
    },
    stop: () => { metadata.stop(); unregisterRefresher?.() }
  }
}

function saml2Instance (app: FastifyInstance, options: ProviderRegistrationOptions<Saml2Instance>): RuntimeInstance {
  const ctx = createSaml2Context(app, options)
  const { source, saml } = ctx
  const refresh = (source as { refresh?: () => Promise<void> }).refresh
  const lazy = opener(async () => { if (refresh !== undefined) await refresh.call(source) })
  const endpoints = saml2Endpoints(ctx, lazy.open)
  return {
    provider: {
      scheme: ctx.scheme,
      displayName: saml.DisplayName,
      protocol: 'Saml2',
      domains: saml.Domains,
      runtime: true,
      paths: endpointPathsOf(endpoints),
      endpoints,
      challenge: async (request, reply, returnUrl) => { await lazy.open(); return await saml2Challenge(ctx, request, reply, returnUrl) },
      status: () => lazy.opened ? ctx.status() : { available: true },
      signOutRedirect: async (request, signedOut) => await saml2SignOutRedirect(ctx, request, signedOut)
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
