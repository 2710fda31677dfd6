/**
 * Registers each external provider whose `Enabled` is true (and only those). It is opened by
 * plugins/providers/open-provider.ts with its protocol's registration, and declares its endpoints
 * (callback, ACS, metadata, logout); {@link registerProviderEndpoints} here registers each as a route (all
 * anonymous, so they appear in the reviewed anonymous inventory), then the instance's entry in
 * the authentication scheme registry (login page, /External/Challenge).
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ApplicationConfiguration } from '../providers/application-schema.js'
import { enabledProviderInstancesUnder } from '../providers/provider-instances.js'
import type { AuthenticationProvider } from '../providers/provider.js'
import { openProvider } from './providers/open-provider.js'

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

export interface ExternalProvidersOptions {
  readonly config: ApplicationConfiguration
  readonly environmentName: string
  /** The app root (a JwtBearer scheme's development-token key, Development only). */
  readonly contentRoot?: string
  /** The application's configuration root key, for the keys providers name in their log lines. */
  readonly rootKey: string
}

async function externalProviders (app: FastifyInstance, options: ExternalProvidersOptions): Promise<void> {
  if (!options.config.Authentication.Enabled) return
  // Each instance names its keys (log lines, problems) under the app's own root key.
  for (const instance of enabledProviderInstancesUnder(options.config, options.rootKey)) {
    const { provider } = await openProvider(app, { instance, environmentName: options.environmentName, ...(options.contentRoot === undefined ? {} : { contentRoot: options.contentRoot }) })
    registerProviderEndpoints(app, provider)
  }
}

export default fp(externalProviders, { name: 'external-providers', dependencies: ['authentication', 'external-sign-in', 'authorization'] })
