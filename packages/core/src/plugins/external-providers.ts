/**
 * Registers each external provider whose `Enabled` is true (and only those). Its protocol's
 * registration (plugins/providers/) builds the instance, which declares its endpoints (callback,
 * ACS, metadata, logout); {@link registerProviderEndpoints} here registers each as a route (all
 * anonymous, so they appear in the reviewed anonymous inventory), then the instance's entry in
 * the authentication scheme registry (login page, /External/Challenge).
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { KeyRing } from '../data-protection/key-ring.js'
import { ROOT_KEY, type ApplicationConfiguration } from '../config/schema.js'
import { enabledProviderInstances, type ProviderInstance, type ProviderProtocol } from '../config/provider-instances.js'
import type { AuthenticationProvider } from '../providers/provider.js'
import type { ProviderRegistration } from './authentication.js'

type RegistrationOf<P extends ProviderProtocol> = () => Promise<ProviderRegistration<Extract<ProviderInstance, { protocol: P }>>>

/**
 * The handler of each protocol, loaded only when a provider of it is enabled: with none enabled
 * (the default), openid-client, node-saml and the XML stack are never imported, which keeps cold
 * start and idle memory down (docs/performance.md). A new protocol is one folder plus one entry:
 * its registration returns the instance with its endpoints declared, and registers no route.
 */
export const REGISTRATIONS: { readonly [P in ProviderProtocol]: RegistrationOf<P> } = {
  OpenIdConnect: async () => (await import('./providers/openid-connect.js')).registerOpenIdConnect,
  Saml2: async () => (await import('./providers/saml2.js')).registerSaml2,
  OAuth: async () => (await import('./providers/oauth-vendors.js')).registerVendor
}

/**
 * Registers each endpoint `provider` declares as an anonymous route, in declaration order, with
 * its method, path, body limit and rate-limit group, then adds `provider` to the scheme registry.
 * The one place a configured provider's routes are registered.
 */
export function registerProviderEndpoints (app: FastifyInstance, provider: AuthenticationProvider): void {
  for (const endpoint of provider.endpoints ?? []) {
    app.route({
      method: endpoint.method,
      url: endpoint.path,
      ...(endpoint.bodyLimit === undefined ? {} : { bodyLimit: endpoint.bodyLimit }),
      config: { allowAnonymous: true, ...(endpoint.rateLimitBucket === undefined ? {} : { rateLimitBucket: endpoint.rateLimitBucket }) },
      handler: async (request: FastifyRequest, reply: FastifyReply) => await endpoint.handle(request, reply)
    })
  }
  app.authentication.registerProvider(provider)
}

/** Builds one provider instance with its protocol's registration. */
async function buildInstance (app: FastifyInstance, configured: ProviderInstance, options: ExternalProvidersOptions): Promise<AuthenticationProvider> {
  const common = { name: configured.scheme, ...options }
  // The keys a provider names in its log lines, under the app's own root key.
  const instance = options.rootKey === undefined || options.rootKey === ROOT_KEY ? configured : { ...configured, keyPrefix: `${options.rootKey}${configured.keyPrefix.slice(ROOT_KEY.length)}` }
  switch (instance.protocol) {
    case 'OpenIdConnect': return await (await REGISTRATIONS.OpenIdConnect())(app, { ...common, instance })
    case 'Saml2': return await (await REGISTRATIONS.Saml2())(app, { ...common, instance })
    case 'OAuth': return await (await REGISTRATIONS.OAuth())(app, { ...common, instance })
  }
}

export interface ExternalProvidersOptions {
  readonly config: ApplicationConfiguration
  readonly environmentName: string
  readonly keyRing: KeyRing
  /** The application's configuration root key, for the keys providers name in their log lines. */
  readonly rootKey?: string
}

async function externalProviders (app: FastifyInstance, options: ExternalProvidersOptions): Promise<void> {
  if (!options.config.Authentication.Enabled) return
  for (const instance of enabledProviderInstances(options.config)) registerProviderEndpoints(app, await buildInstance(app, instance, options))
}

export default fp(externalProviders, { name: 'external-providers', dependencies: ['authentication', 'external-sign-in', 'authorization'] })
