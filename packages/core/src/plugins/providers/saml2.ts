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
import { ALREADY_OPEN, endpointPathsOf, type AuthenticationProvider, type ProviderEndpoint, type ProviderOpening } from '../../providers/provider.js'
import type { ProviderRegistrationOptions } from '../authentication.js'
import { ACS_BODY_LIMIT, createSaml2Context, type Saml2Context, type Saml2Instance } from './saml2-instance.js'
import { assertionConsumerService, challenge } from './saml2-sign-in.js'
import { signOutRedirect, singleLogoutService } from './saml2-logout.js'

/**
 * The contract Saml2 provider's metadata and Single Logout paths (reserved in config/rules.ts
 * RESERVED_PATHS); a named SAML2 scheme has its own (MetadataPath, LogoutPath). The Single Logout
 * endpoint, HTTP-Redirect or HTTP-POST, takes the IdP's LogoutResponse to our LogoutRequest and
 * the IdP's own LogoutRequest (SAML Profiles 4.4).
 */
export { SAML2_LOGOUT_PATH, SAML2_METADATA_PATH } from '../../config/provider-instances.js'
/** Body limit of the ACS and logout routes. */
export { ACS_BODY_LIMIT } from './saml2-instance.js'

/** Builds one Saml2 instance: its endpoints (ACS, metadata and, with Single Logout, logout). */
export async function registerSaml2 (app: FastifyInstance, options: ProviderRegistrationOptions<Saml2Instance>): Promise<AuthenticationProvider> {
  return saml2Provider(createSaml2Context(app, options))
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
    challenge: async (request, reply, returnUrl) => { await opening.open(); return await challenge(ctx, request, reply, returnUrl) },
    status: () => opening.opened ? ctx.status() : { available: true },
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
    {
      method: 'POST',
      path: ctx.modulePath,
      kind: 'acs',
      bodyLimit: ACS_BODY_LIMIT,
      rateLimitBucket: 'callback',
      handle: async (request, reply) => { await open(); return await assertionConsumerService(ctx, request, reply) }
    },
    { method: 'GET', path: ctx.SAML2_METADATA_PATH, kind: 'metadata', handle: (request, reply) => serviceProviderMetadata(ctx, request, reply) }
  ]
  if (ctx.singleLogout) {
    const logout = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => { await open(); return await singleLogoutService(ctx, request, reply) }
    endpoints.push(
      { method: 'GET', path: ctx.SAML2_LOGOUT_PATH, kind: 'logout', rateLimitBucket: 'logout-receiver', handle: logout },
      { method: 'POST', path: ctx.SAML2_LOGOUT_PATH, kind: 'logout', bodyLimit: ACS_BODY_LIMIT, rateLimitBucket: 'logout-receiver', handle: logout })
  }
  return endpoints
}

/** The SP metadata document: the ACS URL and, with Single Logout, the logout URL at the public origin. */
function serviceProviderMetadata (ctx: Saml2Context, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const logoutUrl = ctx.singleLogout ? `${ctx.app.externalSignIn.publicOrigin(request)}${ctx.SAML2_LOGOUT_PATH}` : undefined
  return reply.type('application/samlmetadata+xml; charset=utf-8').send(buildServiceProviderMetadata(ctx.settings, ctx.acsUrlOf(request), logoutUrl))
}
