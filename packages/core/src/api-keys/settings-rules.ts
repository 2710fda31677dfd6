/**
 * The startup rules of an ApiKey scheme's settings (`Authentication:Schemes:<Name>` with
 * `Type: ApiKey`; issue 42, item 1 and "Bad input"), one small named function each, and the rule
 * across schemes ({@link apiKeyPrefixProblems}: one prefix never starts another, so a key names
 * one scheme before any look-up). Each problem names the full colon path, never a configured
 * value. Plain inputs, no Fastify types.
 */
import type { ConfigurationProblem } from '../config/bind.js'
import { keyOfInstance, type SettingsRule } from '../config/provider-type.js'
import { API_KEY_PREFIX_PATTERN } from './api-key-format.js'
import { API_KEY_OWNER_KINDS, type ApiKeyInstance } from './settings-schema.js'

/** A scope name: what `scopePolicy` names and a key grants (RFC 6749 scope-token characters, narrowed). */
export const API_KEY_SCOPE_PATTERN = /^[A-Za-z0-9._:/-]{1,64}$/
/** Longest scope description, in characters. */
export const MAX_SCOPE_DESCRIPTION_LENGTH = 200

const problem = (key: string, message: string): ConfigurationProblem => ({ key, message })

export function prefixShape (instance: ApiKeyInstance): ConfigurationProblem[] {
  const key = keyOfInstance(instance, 'Prefix')
  return API_KEY_PREFIX_PATTERN.test(instance.settings.Prefix)
    ? []
    : [problem(key, `${key} must be a lower-case letter, then lower-case letters and digits, ending in an underscore, 3-24 characters in all (for example acme_).`)]
}

export function scopesOffered (instance: ApiKeyInstance): ConfigurationProblem[] {
  const key = keyOfInstance(instance, 'Scopes')
  const entries = Object.entries(instance.settings.Scopes)
  if (entries.length === 0) return [problem(key, `${key} is required: name at least one scope a key may grant, with its description ({ "orders.read": "Read your orders" }).`)]
  return entries.flatMap(([name, description], index): ConfigurationProblem[] => {
    if (!API_KEY_SCOPE_PATTERN.test(name)) return [problem(key, `${key}: scope ${index + 1} must be 1-64 letters, digits and . _ : / -.`)]
    if (description.trim() === '' || description.length > MAX_SCOPE_DESCRIPTION_LENGTH) {
      return [problem(`${key}:${name}`, `${key}:${name} needs a description of 1-${MAX_SCOPE_DESCRIPTION_LENGTH} characters (the key page shows it).`)]
    }
    return []
  })
}

export function lifetimesOrdered (instance: ApiKeyInstance): ConfigurationProblem[] {
  const key = keyOfInstance(instance, 'DefaultLifetimeDays')
  return instance.settings.DefaultLifetimeDays <= instance.settings.MaxLifetimeDays
    ? []
    : [problem(key, `${key} must be at most ${keyOfInstance(instance, 'MaxLifetimeDays')}.`)]
}

export function ownersKnown (instance: ApiKeyInstance): ConfigurationProblem[] {
  const key = keyOfInstance(instance, 'Owners')
  const owners = instance.settings.Owners
  const known = owners.every((owner) => (API_KEY_OWNER_KINDS as readonly string[]).includes(owner))
  if (owners.length === 0 || !known || new Set(owners).size !== owners.length) {
    return [problem(key, `${key} must list User and/or Tenant, each once.`)]
  }
  return []
}

export function tenantAdministratorPolicyNamed (instance: ApiKeyInstance): ConfigurationProblem[] {
  const key = keyOfInstance(instance, 'TenantAdministratorPolicy')
  return instance.settings.Owners.includes('Tenant') && instance.settings.TenantAdministratorPolicy.trim() === ''
    ? [problem(key, `${key} is required when ${keyOfInstance(instance, 'Owners')} includes Tenant: name the policy a tenant's administrators meet.`)]
    : []
}

/** The rule of one enabled ApiKey scheme. */
export const apiKeySettingsRule: SettingsRule<ApiKeyInstance> = (instance) => [
  ...prefixShape(instance),
  ...scopesOffered(instance),
  ...lifetimesOrdered(instance),
  ...ownersKnown(instance),
  ...tenantAdministratorPolicyNamed(instance)
]

/** Another token prefix a key must not be mistaken for (a JwtBearer scheme's `Introspection:TokenPrefix`), with its key. */
export interface OtherTokenPrefix {
  readonly key: string
  readonly prefix: string
}

/**
 * Across the enabled ApiKey schemes: no prefix equals or starts another (a key would name two
 * schemes), and none overlaps another token prefix the app routes by (an introspecting JwtBearer
 * scheme's TokenPrefix: a key would be sent to that issuer).
 */
export function apiKeyPrefixProblems (instances: readonly ApiKeyInstance[], others: readonly OtherTokenPrefix[] = []): ConfigurationProblem[] {
  const problems: ConfigurationProblem[] = []
  const overlap = (a: string, b: string): boolean => a !== '' && b !== '' && (a.startsWith(b) || b.startsWith(a))
  instances.forEach((instance, index) => {
    const key = keyOfInstance(instance, 'Prefix')
    for (const other of instances.slice(index + 1)) {
      if (overlap(instance.settings.Prefix, other.settings.Prefix)) {
        problems.push(problem(key, `${key} and ${keyOfInstance(other, 'Prefix')} overlap (one equals or starts the other); give each ApiKey scheme its own prefix.`))
      }
    }
    for (const other of others) {
      if (overlap(instance.settings.Prefix, other.prefix)) problems.push(problem(key, `${key} and ${other.key} overlap (one equals or starts the other).`))
    }
  })
  return problems
}
