/**
 * The Saml2 provider (auth-contract.md, "Providers:Saml2"; issue 3 "SAML2"), one instance per
 * configured SAML2 provider (the contract section or a named scheme): the challenge and the
 * Assertion Consumer Service at ModulePath (saml2-sign-in.ts), the SP metadata document at its
 * metadata path, and Single Logout at its logout path (saml2-logout.ts), sharing the instance's
 * state (saml2-instance.ts). Protocol checks live in src/saml2/.
 */
import type { FastifyInstance } from 'fastify'
import { buildServiceProviderMetadata } from '../../saml2/service-provider.js'
import type { ProviderRegistrationOptions } from '../authentication.js'
import { ACS_BODY_LIMIT, createSaml2Context, type Saml2Instance } from './saml2-instance.js'
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

/** Registers one Saml2 instance: its ACS, metadata and (with Single Logout) logout routes, and its provider entry. */
export async function registerSaml2 (app: FastifyInstance, options: ProviderRegistrationOptions<Saml2Instance>): Promise<void> {
  const ctx = createSaml2Context(app, options)
  const { saml, settings, singleLogout, modulePath, SAML2_METADATA_PATH, SAML2_LOGOUT_PATH, acsUrlOf } = ctx
  app.post(modulePath, { bodyLimit: ACS_BODY_LIMIT, config: { allowAnonymous: true, rateLimitBucket: 'callback' } }, async (request, reply) => await assertionConsumerService(ctx, request, reply))
  app.get(SAML2_METADATA_PATH, { config: { allowAnonymous: true } }, async (request, reply) => {
    const logoutUrl = singleLogout ? `${app.externalSignIn.publicOrigin(request)}${SAML2_LOGOUT_PATH}` : undefined
    return reply.type('application/samlmetadata+xml; charset=utf-8').send(buildServiceProviderMetadata(settings, acsUrlOf(request), logoutUrl))
  })
  if (singleLogout) {
    app.get(SAML2_LOGOUT_PATH, { config: { allowAnonymous: true, rateLimitBucket: 'logout-receiver' } }, async (request, reply) => await singleLogoutService(ctx, request, reply))
    app.post(SAML2_LOGOUT_PATH, { bodyLimit: ACS_BODY_LIMIT, config: { allowAnonymous: true, rateLimitBucket: 'logout-receiver' } }, async (request, reply) => await singleLogoutService(ctx, request, reply))
  }
  app.authentication.registerProvider({
    scheme: ctx.scheme,
    displayName: saml.DisplayName,
    protocol: 'Saml2',
    domains: saml.Domains,
    paths: singleLogout ? [modulePath, SAML2_METADATA_PATH, SAML2_LOGOUT_PATH] : [modulePath, SAML2_METADATA_PATH],
    challenge: async (request, reply, returnUrl) => await challenge(ctx, request, reply, returnUrl),
    status: ctx.status,
    signOutRedirect: async (request, signedOut) => await signOutRedirect(ctx, request, signedOut)
  })
}
