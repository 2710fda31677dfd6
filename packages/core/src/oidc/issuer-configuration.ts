/**
 * A discovered client for another issuer than the one its discovery document named: a tenant's
 * own issuer under a `{tenantid}` template (oidc/tenant-issuer.ts). discoverProvider
 * (relying-party.ts) registers how to build one for each configuration it returns (the same
 * client metadata, client authentication and transport rules); the callback (callback.ts) builds
 * one per sign-in, with the transport of that sign-in.
 */
import type * as client from 'openid-client'

type IssuerConfigurationBuilder = (issuer: string, fetch: client.CustomFetch) => client.Configuration

const builders = new WeakMap<client.Configuration, IssuerConfigurationBuilder>()

/** Registers how `config`'s client is built for another issuer (discoverProvider, once per discovery). */
export function registerIssuerConfiguration (config: client.Configuration, build: IssuerConfigurationBuilder): void {
  builders.set(config, build)
}

/** `config`'s client for `issuer`, its outbound calls through `fetch`. Only for a configuration discoverProvider returned. */
export function configurationForIssuer (config: client.Configuration, issuer: string, fetch: client.CustomFetch): client.Configuration {
  const build = builders.get(config)
  if (build === undefined) throw new TypeError('configurationForIssuer needs a configuration from discoverProvider')
  return build(issuer, fetch)
}
