/**
 * What can be checked of a configured connection's sign-ins (issue 41, item 1). A startup rule:
 * each entry of `Provisioning:Connections:<Name>:Schemes` names a provider of the configuration
 * that is enabled and signs users in (a JwtBearer or ApiKey scheme signs nobody in), while
 * `Authentication:Enabled` is true. A scheme from the provider source cannot be listed here: it
 * does not exist at startup (a connection from the provider source lists it instead,
 * scim/runtime-connections.ts). Empty entries are ignored, as connections.ts ignores them. And
 * whether a provider issues its tenant, which the provider source may still change: a warning.
 */
import type { ConfigurationProblem } from '../config/bind.js'
import { problem } from '../config/rules.js'
import type { ApplicationConfiguration, ApplicationRule } from '../providers/application-schema.js'
import { enabledProviderInstancesUnder, signsIn } from '../providers/provider-instances.js'
import { schemeNotEnabledMessage, type ScimConnection } from './connections.js'

/** The enabled configured schemes that sign users in; none while `Authentication:Enabled` is false. */
export function enabledSignInSchemes (config: ApplicationConfiguration, rootKey: string): ReadonlySet<string> {
  if (!config.Authentication.Enabled) return new Set()
  return new Set(enabledProviderInstancesUnder(config, rootKey).filter(signsIn).map((instance) => instance.scheme))
}

/** `Provisioning:Connections:<Name>:Schemes:<i>` names an enabled sign-in scheme of the configuration. */
export const provisioningConnectionSchemes: ApplicationRule = ({ config, rootKey }) => {
  const enabled = enabledSignInSchemes(config, rootKey)
  const problems: ConfigurationProblem[] = []
  for (const [name, section] of Object.entries(config.Provisioning.Connections)) {
    section.Schemes.forEach((scheme, index) => {
      const key = `${rootKey}:Provisioning:Connections:${name}:Schemes:${index}`
      if (scheme.trim() !== '' && !enabled.has(scheme.trim())) problems.push(problem(key, schemeNotEnabledMessage(key)))
    })
  }
  return problems
}

/** The application tenants the enabled configured providers issue: what their `AllowedTenants` entries map to (`<tenant id>=<tenant>`). */
export function issuedTenantsOf (config: ApplicationConfiguration, rootKey: string): ReadonlySet<string> {
  if (!config.Authentication.Enabled) return new Set()
  return new Set(enabledProviderInstancesUnder(config, rootKey).flatMap((instance) => instance.protocol === 'OpenIdConnect'
    ? instance.settings.AllowedTenants.flatMap((entry) => entry.includes('=') ? [entry.slice(entry.indexOf('=') + 1).trim()] : [])
    : []))
}

/**
 * The tenant check where one is possible (issue 41, item 1): the connections no sign-in can belong
 * to, for they list no `Schemes` and no provider issues their tenant (`issued`: the configured
 * providers' mapped tenants and the tenants of the provider source's rows in use). A warning, not
 * a startup error: a customer's row may arrive later.
 */
export function unmatchedConnections (connections: Iterable<ScimConnection>, issued: ReadonlySet<string>): ScimConnection[] {
  return [...connections].filter((connection) => connection.schemes.length === 0 && !issued.has(connection.tenant))
}
