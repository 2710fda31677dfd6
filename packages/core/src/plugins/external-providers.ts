/**
 * Registers each external provider whose `Enabled` is true (and only those): its handler routes
 * (callback, ACS, metadata; all anonymous, so they appear in the reviewed anonymous inventory) and
 * its entry in the authentication scheme registry (login page, /External/Challenge).
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { KeyRing } from '../data-protection/key-ring.js'
import { PROVIDER_NAMES, VENDOR_NAMES, type ApplicationConfiguration, type ProviderName } from '../config/schema.js'
import type { ProviderRegistration } from './authentication.js'

/**
 * The handler of each provider slot, loaded only when that provider is enabled: with none enabled
 * (the default), openid-client, node-saml and the XML stack are never imported, which keeps cold
 * start and idle memory down (docs/performance.md).
 */
export const REGISTRATIONS: Readonly<Record<ProviderName, () => Promise<ProviderRegistration>>> = {
  OpenIdConnect: async () => (await import('./providers/openid-connect.js')).registerOpenIdConnect,
  Saml2: async () => (await import('./providers/saml2.js')).registerSaml2,
  ...Object.fromEntries(VENDOR_NAMES.map((name) => [name, async () => (await import('./providers/oauth-vendors.js')).registerVendor]))
} as Record<ProviderName, () => Promise<ProviderRegistration>>

export interface ExternalProvidersOptions {
  readonly config: ApplicationConfiguration
  readonly environmentName: string
  readonly keyRing: KeyRing
  /** The application's configuration root key, for the keys providers name in their log lines. */
  readonly rootKey?: string
}

async function externalProviders (app: FastifyInstance, options: ExternalProvidersOptions): Promise<void> {
  if (!options.config.Authentication.Enabled) return
  for (const name of PROVIDER_NAMES) {
    if (!options.config.Authentication.Providers[name].Enabled) continue
    const register = await REGISTRATIONS[name]()
    await register(app, { name, ...options })
  }
}

export default fp(externalProviders, { name: 'external-providers', dependencies: ['authentication', 'external-sign-in', 'authorization'] })
