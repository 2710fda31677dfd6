/**
 * The rule of each provider type's settings, from the type's registration (provider-types.ts
 * `PROVIDER_TYPES`; the rule itself in the type's folder, `settings-rules.ts`): startup
 * validation (configuration.ts) runs it for every enabled instance of the protocol, and runtime
 * validation (runtime-definitions.ts) for the one definition it checks, so the two cannot differ.
 * A new provider type brings its rule with its registration; nothing here changes.
 */
import type { ConfigurationProblem } from '../config/bind.js'
import { problem } from '../config/rules.js'
import type { ApplicationConfiguration, ApplicationRule } from './application-schema.js'
import { enabledProviderInstancesUnder, keyOfInstance, type ProviderInstance, type ProviderProtocol } from './provider-instances.js'
import { PROVIDER_TYPES, typeRuleProblems } from './provider-types.js'

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

/** The problems of one instance's settings: its type's rule, then the checks every provider type shares. */
export function providerSettingsProblems (instance: ProviderInstance, environmentName: string): ConfigurationProblem[] {
  return [...typeRuleProblems(instance, environmentName), ...tenantMappingProblems(instance)]
}

/** The enabled providers of one protocol (contract section and named schemes). */
function enabledOf (config: ApplicationConfiguration, rootKey: string, protocol: ProviderProtocol): ProviderInstance[] {
  return enabledProviderInstancesUnder(config, rootKey).filter((instance) => instance.protocol === protocol)
}

/** The rule that checks every enabled provider of `protocol` with its type's settings rule. */
export function providerSettings (protocol: ProviderProtocol): ApplicationRule {
  return ({ config, environmentName, rootKey }) => enabledOf(config, rootKey, protocol).flatMap((instance) => providerSettingsProblems(instance, environmentName))
}

/** One startup rule per provider type, in the order of {@link PROVIDER_TYPES}: each checks every enabled instance of its protocol. */
export const providerTypeSettings: readonly ApplicationRule[] = (Object.keys(PROVIDER_TYPES) as ProviderProtocol[]).map(providerSettings)
