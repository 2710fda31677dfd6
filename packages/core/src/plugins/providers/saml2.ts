/**
 * The Saml2 provider (auth-contract.md, "Providers:Saml2"; issue 3 "SAML2"), one instance per
 * configured SAML2 provider (the contract section or a named scheme): the challenge and the
 * Assertion Consumer Service at ModulePath (saml2-sign-in.ts), the SP metadata document at its
 * metadata path, and Single Logout at its logout path (saml2-logout.ts), sharing the instance's
 * state (saml2-instance.ts). The instance declares these endpoints; plugins/external-providers.ts
 * registers them as routes. Protocol checks live in src/saml2/.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { buildServiceProviderMetadata } from '../../saml2/service-provider.js'
import { ALREADY_OPEN, endpointPathsOf, openingOnFirstUse, providerEndpoint, type AuthenticationProvider, type ProviderEndpoint, type ProviderOpening } from '../../providers/provider.js'
import type { ProviderRegistration } from '../authentication.js'
import { createSaml2Context, type Saml2Context, type Saml2Instance } from './saml2-instance.js'
import { assertionConsumerService, challenge } from './saml2-sign-in.js'
import { signOutRedirect, singleLogoutService } from './saml2-logout.js'

/**
 * Builds one Saml2 instance: its endpoints (ACS, metadata and, with Single Logout, logout). One
 * from the provider source opens on first use: its IdP metadata is loaded by the first challenge
 * or endpoint that needs it.
 */
export const registerSaml2: ProviderRegistration<Saml2Instance> = (app: FastifyInstance, options) => {
  const ctx = createSaml2Context(app, options)
  const { source } = ctx
  const refresh = (source as { refresh?: () => Promise<void> }).refresh
  const opening = options.runtime === undefined ? ALREADY_OPEN : openingOnFirstUse(async () => { if (refresh !== undefined) await refresh.call(source) })
  const provider = saml2Provider(ctx, opening)
  return {
    provider: options.runtime === undefined ? provider : { ...provider, runtime: true },
    stop: () => { source.stop() }
  }
}

/**
 * The provider of one Saml2 instance, configured or (with its lazy `opening`) from the provider
 * source: its endpoints, challenge, readiness and Single Logout. Before it has opened, nothing is
 * known against it, so it reports available (the first challenge loads the IdP metadata).
 */
export function saml2Provider (ctx: Saml2Context, opening: ProviderOpening = ALREADY_OPEN): AuthenticationProvider & { readonly endpoints: readonly ProviderEndpoint[] } {
  const endpoints = saml2Endpoints(ctx, opening.open)
  return {
    scheme: ctx.scheme,
    displayName: ctx.saml.DisplayName,
    protocol: 'Saml2',
    domains: ctx.saml.Domains,
    paths: endpointPathsOf(endpoints),
    endpoints,
    stepUp: true,
    challenge: async (request, reply, returnUrl, hint) => { await opening.open(); return await challenge(ctx, request, reply, returnUrl, hint) },
    status: () => opening.opened ? ctx.status() : { available: true },
    issuer: () => ctx.source.current?.entityId ?? (ctx.saml.IdpEntityId.trim() === '' ? undefined : ctx.saml.IdpEntityId.trim()),
    signOutRedirect: async (request, signedOut) => await signOutRedirect(ctx, request, signedOut)
  }
}

/**
 * The endpoints of one Saml2 instance: the Assertion Consumer Service (HTTP-POST) at ModulePath,
 * the SP metadata document, and with Single Logout the logout endpoint (HTTP-Redirect and
 * HTTP-POST). `open` runs before a handler that needs the IdP's description (a provider from the
 * provider source loads it on first use); the SP metadata needs none.
 */
export function saml2Endpoints (ctx: Saml2Context, open: () => Promise<void> = ALREADY_OPEN.open): ProviderEndpoint[] {
  const endpoints: ProviderEndpoint[] = [
    providerEndpoint('acs', 'POST', ctx.modulePath, async (request, reply) => { await open(); return await assertionConsumerService(ctx, request, reply) }),
    providerEndpoint('metadata', 'GET', ctx.SAML2_METADATA_PATH, (request, reply) => serviceProviderMetadata(ctx, request, reply))
  ]
  if (ctx.singleLogout) {
    const logout = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => { await open(); return await singleLogoutService(ctx, request, reply) }
    endpoints.push(providerEndpoint('logout', 'GET', ctx.SAML2_LOGOUT_PATH, logout), providerEndpoint('logout', 'POST', ctx.SAML2_LOGOUT_PATH, logout))
  }
  return endpoints
}

/** The SP metadata document: the ACS URL and, with Single Logout, the logout URL at the public origin. */
function serviceProviderMetadata (ctx: Saml2Context, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const logoutUrl = ctx.singleLogout ? `${ctx.app.externalSignIn.publicOrigin(request)}${ctx.SAML2_LOGOUT_PATH}` : undefined
  return reply.type('application/samlmetadata+xml; charset=utf-8').send(buildServiceProviderMetadata(ctx.settings, ctx.acsUrlOf(request), logoutUrl))
}
