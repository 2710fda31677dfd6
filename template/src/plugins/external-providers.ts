/**
 * Registers each external provider whose `Enabled` is true (and only those): its handler routes
 * (callback, ACS, metadata; all anonymous, so they appear in the reviewed anonymous inventory) and
 * its entry in the authentication scheme registry (login page, /External/Challenge).
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { KeyRing } from '../auth/key-ring.js'
import { PROVIDER_NAMES, type ApplicationConfiguration, type ProviderName } from '../config/schema.js'
import { registerVendor } from './providers/oauth-vendors.js'
import { registerOpenIdConnect } from './providers/openid-connect.js'
import { registerSaml2 } from './providers/saml2.js'

export interface ProviderRegistrationOptions {
  readonly name: ProviderName
  readonly config: ApplicationConfiguration
  readonly environmentName: string
  readonly keyRing: KeyRing
}

/** Registers one provider's routes and scheme on `app`. */
export type ProviderRegistration = (app: FastifyInstance, options: ProviderRegistrationOptions) => Promise<void>

/** The handler of each provider slot. */
const REGISTRATIONS: Partial<Record<ProviderName, ProviderRegistration>> = {
  OpenIdConnect: registerOpenIdConnect,
  Saml2: registerSaml2,
  VendorA: registerVendor,
  VendorB: registerVendor,
  VendorC: registerVendor
}

export interface ExternalProvidersOptions {
  readonly config: ApplicationConfiguration
  readonly environmentName: string
  readonly keyRing: KeyRing
}

async function externalProviders (app: FastifyInstance, options: ExternalProvidersOptions): Promise<void> {
  if (!options.config.Authentication.Enabled) return
  for (const name of PROVIDER_NAMES) {
    if (!options.config.Authentication.Providers[name].Enabled) continue
    const register = REGISTRATIONS[name]
    if (register === undefined) throw new Error(`No handler is available for the ${name} provider.`)
    await register(app, { name, ...options })
  }
}

export default fp(externalProviders, { name: 'external-providers', dependencies: ['authentication', 'external-sign-in', 'authorization'] })
