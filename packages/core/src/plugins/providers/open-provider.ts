/**
 * The one place a provider instance is opened, whatever its protocol and wherever it was
 * declared: plugins/external-providers.ts opens each enabled configured provider at startup,
 * plugins/runtime-providers.ts each provider from the app's provider source as the source adds
 * it. {@link REGISTRATIONS} names the registration of each protocol (a new protocol is one folder
 * plus one entry there); a registration builds the instance with its endpoints declared and
 * registers no route and no scheme.
 */
import type { FastifyInstance } from 'fastify'
import type { ProviderInstance, ProviderProtocol } from '../../providers/provider-instances.js'
import type { OpenedProvider } from '../../providers/provider.js'
import type { ProviderRegistration, ProviderRegistrationOptions } from '../authentication.js'

type RegistrationOf<P extends ProviderProtocol> = () => Promise<ProviderRegistration<Extract<ProviderInstance, { protocol: P }>>>

/**
 * The registration of each protocol, loaded only when a provider of it is opened: with none
 * enabled (the default), openid-client, node-saml and the XML stack are never imported, which
 * keeps cold start and idle memory down (docs/performance.md).
 */
export const REGISTRATIONS: { readonly [P in ProviderProtocol]: RegistrationOf<P> } = {
  OpenIdConnect: async () => (await import('./openid-connect.js')).registerOpenIdConnect,
  Saml2: async () => (await import('./saml2.js')).registerSaml2,
  OAuth: async () => (await import('./oauth-vendors.js')).registerVendor,
  JwtBearer: async () => (await import('./jwt-bearer.js')).registerJwtBearer
}

/**
 * Opens one provider instance with its protocol's registration: a configured one (its metadata
 * loads when the app is ready) or, with `options.runtime`, one from the provider source (it
 * loads on first use and is marked `runtime`).
 */
export async function openProvider (app: FastifyInstance, options: ProviderRegistrationOptions): Promise<OpenedProvider> {
  const { instance } = options
  switch (instance.protocol) {
    case 'OpenIdConnect': return (await REGISTRATIONS.OpenIdConnect())(app, { ...options, instance })
    case 'Saml2': return (await REGISTRATIONS.Saml2())(app, { ...options, instance })
    case 'OAuth': return (await REGISTRATIONS.OAuth())(app, { ...options, instance })
    case 'JwtBearer': return (await REGISTRATIONS.JwtBearer())(app, { ...options, instance })
  }
}
