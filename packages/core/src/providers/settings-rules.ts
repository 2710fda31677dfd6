/**
 * The rule of each provider type's settings, from the type's own folder (oidc/, saml2/, oauth/):
 * startup validation (configuration.ts) runs it for every enabled instance of the protocol, and
 * runtime validation (runtime-definitions.ts) for the one definition it checks, so the two cannot
 * differ. A new provider type brings its rule in its folder (`settings-rules.ts`) and is one entry
 * here; its opening is one entry in plugins/providers/open-provider.ts `REGISTRATIONS`. Both tables
 * are keyed by `ProviderProtocol` (config/provider-instances.ts), so the compiler asks for both
 * entries once the type's instance is added there; its section schema stays in config/schema.ts,
 * the one schema the configuration's types come from.
 */
import type { ConfigurationProblem } from '../config/bind.js'
import { keyOfInstance, type ProviderInstance, type ProviderProtocol } from '../config/provider-instances.js'
import { problem, providerSettings, type ProviderSettingsRule, type Rule } from '../config/rules.js'
import { jwtBearerSettingsRule } from '../bearer/settings-rules.js'
import { vendorSettingsRule } from '../oauth/settings-rules.js'
import { openIdConnectSettingsRule } from '../oidc/settings-rules.js'
import { saml2SettingsRule } from '../saml2/settings-rules.js'

/** Claim types a provider's `ClaimMappings` may not target: only the app speaks for them. */
const RESERVED_CLAIM_TARGETS = new Set(['application:tenant', 'tenant'])

/**
 * A `ClaimMappings` entry whose target is the tenant claim (issue 33, item 6): an IdP never sets
 * the tenant (a provider from the source gets it from the source), and the mapping was silently
 * ignored; refused, naming the key.
 */
function tenantMappingProblems (instance: ProviderInstance): ConfigurationProblem[] {
  const mappings = (instance.settings as { readonly ClaimMappings?: Readonly<Record<string, string>> }).ClaimMappings ?? {}
  const key = keyOfInstance(instance, 'ClaimMappings')
  return Object.values(mappings).some((target) => RESERVED_CLAIM_TARGETS.has(String(target).trim().toLowerCase()))
    ? [problem(key, `${key} must not map a claim to application:tenant: a provider's tenant comes from the app (the provider source's tenant), never from its IdP.`)]
    : []
}

/** A type's rule, then the checks every provider type shares. */
function withSharedChecks<P extends ProviderProtocol> (rule: ProviderSettingsRule<P>): ProviderSettingsRule<P> {
  return (instance, environmentName) => [...rule(instance, environmentName), ...tenantMappingProblems(instance)]
}

export const PROVIDER_SETTINGS_RULES: { readonly [P in ProviderProtocol]: ProviderSettingsRule<P> } = {
  OpenIdConnect: withSharedChecks(openIdConnectSettingsRule),
  Saml2: withSharedChecks(saml2SettingsRule),
  OAuth: withSharedChecks(vendorSettingsRule),
  JwtBearer: withSharedChecks(jwtBearerSettingsRule)
}

/** The problems of one instance's settings, by its protocol's rule. */
export function providerSettingsProblems (instance: ProviderInstance, environmentName: string): ConfigurationProblem[] {
  switch (instance.protocol) {
    case 'OpenIdConnect': return PROVIDER_SETTINGS_RULES.OpenIdConnect(instance, environmentName)
    case 'Saml2': return PROVIDER_SETTINGS_RULES.Saml2(instance, environmentName)
    case 'OAuth': return PROVIDER_SETTINGS_RULES.OAuth(instance, environmentName)
    case 'JwtBearer': return PROVIDER_SETTINGS_RULES.JwtBearer(instance, environmentName)
  }
}

/** One startup rule per provider type, in the order of {@link PROVIDER_SETTINGS_RULES}: each checks every enabled instance of its protocol. */
export const providerTypeSettings: readonly Rule[] = [
  providerSettings('OpenIdConnect', PROVIDER_SETTINGS_RULES.OpenIdConnect),
  providerSettings('Saml2', PROVIDER_SETTINGS_RULES.Saml2),
  providerSettings('OAuth', PROVIDER_SETTINGS_RULES.OAuth),
  providerSettings('JwtBearer', PROVIDER_SETTINGS_RULES.JwtBearer)
]
