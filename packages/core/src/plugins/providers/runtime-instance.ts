/**
 * One provider from the app's provider source (plugins/runtime-providers.ts): the same protocol
 * state, handlers, endpoint list and provider as a configured scheme (openid-connect.ts
 * `openIdConnectProvider`, saml2.ts `saml2Provider`, given a lazy opening), but without app hooks
 * or routes of its own: the parametric routes dispatch to its endpoints. It opens lazily: its discovery document or IdP metadata is fetched
 * on the first challenge or endpoint that needs it (which waits for that first load), then
 * refreshed on the protocol's own schedule, and stopped when the provider is removed or the app
 * closes.
 */
import type { FastifyInstance } from 'fastify'
import type { AuthenticationProvider, ProviderEndpoint, ProviderOpening } from '../../providers/provider.js'
import type { ProviderRegistrationOptions } from '../authentication.js'
import { createOpenIdConnectContext, type OpenIdConnectInstance } from './openid-connect-instance.js'
import { openIdConnectProvider, openIdConnectTokenRefresher } from './openid-connect.js'
import { createSaml2Context, type Saml2Instance } from './saml2-instance.js'
import { saml2Provider } from './saml2.js'
import type { ProviderInstance } from '../../config/provider-instances.js'

export interface RuntimeInstance {
  /** The provider, with the endpoints the parametric routes dispatch to (the same list a configured scheme's routes are registered from). */
  readonly provider: AuthenticationProvider & { readonly endpoints: readonly ProviderEndpoint[] }
  stop: () => void
}

/** Runs `load` once, on first use; later calls wait for the same first load. */
function opener (load: () => Promise<void>): ProviderOpening {
  let first: Promise<void> | undefined
  return {
    open: async () => { first ??= load(); await first },
    get opened () { return first !== undefined }
  }
}

function openIdConnectInstance (app: FastifyInstance, options: ProviderRegistrationOptions<OpenIdConnectInstance>): RuntimeInstance {
  const ctx = createOpenIdConnectContext(app, options)
  const lazy = opener(async () => { await ctx.metadata.refresh() })
  // SaveTokens: the refresh token renews the access token, as for a configured scheme.
  const unregisterRefresher = ctx.settings.SaveTokens ? app.session.registerTokenRefresher(ctx.scheme, openIdConnectTokenRefresher(ctx, lazy.open)) : undefined
  return {
    provider: { ...openIdConnectProvider(ctx, lazy), runtime: true },
    stop: () => { ctx.metadata.stop(); unregisterRefresher?.() }
  }
}

function saml2Instance (app: FastifyInstance, options: ProviderRegistrationOptions<Saml2Instance>): RuntimeInstance {
  const ctx = createSaml2Context(app, options)
  const { source } = ctx
  const refresh = (source as { refresh?: () => Promise<void> }).refresh
  const lazy = opener(async () => { if (refresh !== undefined) await refresh.call(source) })
  return {
    provider: { ...saml2Provider(ctx, lazy), runtime: true },
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
