/**
 * The one place a provider instance is opened, whatever its protocol and wherever it was
 * declared: plugins/external-providers.ts opens each enabled configured provider at startup,
 * plugins/runtime-providers.ts each provider from the app's provider source as the source adds
 * it. {@link REGISTRATIONS} names the opening of each protocol: a provider type is its folder plus
 * one entry in providers/provider-types.ts, and the compiler then asks for its opening here (the
 * one part of a type that needs Fastify, so it cannot live in the type's folder). An opening
 * builds the instance with its endpoints declared and registers no route and no scheme.
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
  JwtBearer: async () => (await import('./jwt-bearer.js')).registerJwtBearer,
  ApiKey: async () => (await import('./api-key.js')).registerApiKey
}

/**
 * Opens one provider instance with its protocol's registration: a configured one (its metadata
 * loads when the app is ready) or, with `options.runtime`, one from the provider source (it
 * loads on first use and is marked `runtime`).
 */
export async function openProvider (app: FastifyInstance, options: ProviderRegistrationOptions): Promise<OpenedProvider> {
  // The entry under the instance's own protocol: it takes that instance (the table's type says so per key).
  const open = await (REGISTRATIONS[options.instance.protocol] as RegistrationOf<ProviderProtocol>)()
  return await open(app, options)
}
