/**
 * Runtime provider definitions (issue 28): what an app's provider source returns, and their
 * validation with exactly the schema and rules of configuration. A definition is bound as if it
 * were written at `<Root>:Authentication:Schemes:<Name>` (the binder of config/bind.ts with the
 * named scheme's schema, application-schema.ts `NAMED_SCHEMES`), then checked directly by its
 * provider type's rule (settings-rules.ts) and the shape of its domains (configuration-rules.ts), as startup checks each
 * instance; every problem names that colon path, never a value, so a secret never reaches a
 * message. Plain data: no Fastify types.
 */
import { bindConfiguration, type ConfigurationProblem } from '../config/bind.js'
import { flattenJson } from '../config/sources.js'
import { rootKeyOf } from '../application-name.js'
import type { Rule } from '../config/rules.js'
import { NAMED_SCHEMES, type ApplicationConfiguration, type SchemeConfiguration } from './application-schema.js'
import { domainProblems } from './configuration-rules.js'
import { enabledProviderInstancesUnder, namedSchemeInstance, type ProviderInstance } from './provider-instances.js'
import { isDevelopment } from '../environment-name.js'
import { allowanceEntryProblem, InternalHostAllowance, urlTargetProblem } from '../http/outbound-address.js'
import { ENDPOINT_KINDS } from './provider.js'
import { providerSettingsProblems } from './settings-rules.js'

/** One e-mail domain of a runtime provider, with whether its DNS TXT proof succeeded (domain-verification.ts). @public @experimental */
export interface RuntimeProviderDomain {
  readonly name: string
  /** Only verified domains route sign-ins by e-mail address; an unverified one is ignored for discovery. */
  readonly verified: boolean
  /**
   * When the domain proof succeeded (ISO 8601 text, milliseconds since the epoch, or a Date). When
   * two providers claim one verified domain, the earliest keeps it (domain-ownership.ts); without
   * it a claim comes after every dated one and the scheme name decides.
   */
  readonly verifiedAt?: string | number | Date
}

/**
 * The SCIM connection of a runtime customer (issue 41; docs/provisioning.md, "Connections from the
 * provider source"), declared on its provider's row: served at `/scim/v2/<name>/` once a reload
 * applies it, on every instance. @public @experimental
 */
export interface RuntimeConnectionDefinition {
  /** `<Name>`: the rules of `Provisioning:Connections:<Name>` apply; never a configured connection's name. */
  readonly name: string
  /**
   * The keys of `Provisioning:Connections:<Name>` but `Tenant` (the row's `tenant` is the
   * connection's): `ExternalIdClaim`, `RequireProvisionedUsers`, `GroupRoles`, and `Schemes`
   * naming only schemes from the provider source of the same tenant or of none.
   */
  readonly settings?: Readonly<Record<string, unknown>>
}

/**
 * A provider the app's source returns: the scheme name, and the keys of
 * `Authentication:Schemes:<Name>` (`Type` included, secrets as plain strings) in `settings`.
 *
 * @public @experimental
 */
export interface RuntimeProviderDefinition {
  /** The scheme: `/External/Challenge?provider=<scheme>`; the rules of a named scheme's name apply. */
  readonly scheme: string
  /** The keys of `Authentication:Schemes:<Name>`, nested as in appsettings.json (Type, Authority, ClientId, ClientSecret, ...). */
  readonly settings: Readonly<Record<string, unknown>>
  /** E-mail domains with their verification state; `settings.Domains` is not used for a runtime provider. */
  readonly domains?: readonly RuntimeProviderDomain[]
  /**
   * The app's tenant key for this provider: the principal of its users carries it as the
   * `application:tenant` claim, the only one (an `AllowedTenants` entry may not map to another).
   */
  readonly tenant?: string
  /**
   * When the row was created (ISO 8601 text, milliseconds since the epoch, or a Date). When two
   * OpenID Connect providers list one tenant id in `AllowedTenants`, the earlier keeps it and the
   * other is refused (domain-ownership.ts); without it a row comes after every dated one and the
   * scheme name decides.
   */
  readonly createdAt?: string | number | Date
  /**
   * The customer's SCIM connection, when `Provisioning:Enabled` (read whether or not the provider
   * itself is enabled or valid: the row declares both). A change of it alone never reopens the provider.
   */
  readonly connection?: RuntimeConnectionDefinition
}

/** A definition that passed validation: the instance the protocol handlers take, its verified domains and tenant. @public @experimental */
export interface ValidatedRuntimeProvider {
  readonly instance: ProviderInstance
  readonly verifiedDomains: readonly string[]
  readonly tenant?: string
}

/** @public @experimental */
export type RuntimeValidation =
  | { readonly ok: true, readonly provider: ValidatedRuntimeProvider }
  | { readonly ok: false, readonly problems: readonly ConfigurationProblem[] }

/** Keys a runtime provider may not set: its endpoint paths are the defaults the parametric routes serve. */
const FIXED_PATH_KEYS = Object.values(ENDPOINT_KINDS).map((kind) => kind.pathKey)

/** The key names a definition wrote at the top of its section (as written), lower-cased to their spelling. */
function writtenKeys (settings: Readonly<Record<string, unknown>>): Map<string, string> {
  return new Map(Object.keys(settings).map((key) => [key.toLowerCase(), key]))
}

/** The colon path of a runtime provider's section: `<Root>:Authentication:Schemes:<Name>`. */
export const runtimeSectionKey = (scheme: string, rootKey: string): string => `${rootKey}:Authentication:Schemes:${scheme}`

/** The keys of a definition whose URL the app itself fetches (discovery, metadata, keys). */
export const OUTBOUND_URL_KEYS = ['Authority', 'MetadataUrl', 'JwksUri'] as const

/** The URLs a provider from the source makes the app fetch, with their keys (docs/security/federation.md, "Outbound addresses of customers' providers"). */
export function outboundUrlsOf (settings: Readonly<Record<string, unknown>>): Array<{ readonly key: string, readonly url: string }> {
  return OUTBOUND_URL_KEYS.flatMap((key) => typeof settings[key] === 'string' && settings[key] !== '' ? [{ key, url: settings[key] }] : [])
}

/** The tenant ids the enabled configured OpenID Connect providers list in `AllowedTenants` (a runtime provider never gets one). */
export function configuredTenantsOf (config: ApplicationConfiguration, rootKey: string): ReadonlySet<string> {
  return new Set(enabledProviderInstancesUnder(config, rootKey).flatMap((instance) =>
    instance.protocol === 'OpenIdConnect' ? instance.settings.AllowedTenants.map((entry) => entry.split('=', 1)[0]!) : []))
}

/** The operator's exceptions to the public-address rule (`Authentication:ProviderSource:AllowedInternalHosts`). */
export function internalHostAllowanceOf (config: ApplicationConfiguration): InternalHostAllowance {
  return new InternalHostAllowance(config.Authentication.ProviderSource.AllowedInternalHosts)
}

/** The refusal of a definition's URL key that targets an internal host (validation, and plugins/runtime-providers.ts after resolving). */
export function internalTargetProblem (at: string, key: string, problem: string, rootKey: string): ConfigurationProblem {
  return { key: `${at}:${key}`, message: `${at}:${key} ${problem}; a provider from the provider source reaches only public addresses (list an on-premises host in ${rootKey}:Authentication:ProviderSource:AllowedInternalHosts).` }
}

/**
 * Outside Development, the URLs of a definition may name only public hosts (issue 33, item 2):
 * no user information, no localhost, no literal internal address. Host names are resolved and
 * checked when the definition is applied (plugins/runtime-providers.ts) and at every connection.
 */
function internalTargetProblems (section: Readonly<Record<string, unknown>>, at: string, rootKey: string, environmentName: string, allowance: InternalHostAllowance): ConfigurationProblem[] {
  if (isDevelopment(environmentName)) return []
  return outboundUrlsOf(section).flatMap(({ key, url }) => {
    const problem = urlTargetProblem(url, allowance)
    return problem === undefined ? [] : [internalTargetProblem(at, key, problem, rootKey)]
  })
}

/** `Authentication:ProviderSource:AllowedInternalHosts` holds host names and networks only. */
export const internalHostAllowanceIsValid: Rule = ({ config, rootKey }) => config.Authentication.ProviderSource.AllowedInternalHosts.flatMap((entry, index) => {
  const problem = allowanceEntryProblem(entry)
  const key = `${rootKey}:Authentication:ProviderSource:AllowedInternalHosts:${index}`
  return problem === undefined ? [] : [{ key, message: `${key} must be ${problem}.` }]
})

/**
 * What a provider from the source may not say of itself (issue 40, items 18 and 19): an
 * `AllowedTenants` entry mapped to an application tenant other than the definition's `tenant`
 * (only the definition speaks for the tenant; an unmapped entry gets the definition's), and
 * `ClientAssertionAudience: Endpoint` (an audience taken from a customer's discovery document).
 */
function runtimeOnlyProblems (section: Readonly<Record<string, unknown>>, at: string, tenant: string | undefined): ConfigurationProblem[] {
  if (section.Type !== 'OpenIdConnect') return []
  const problems: ConfigurationProblem[] = []
  if (section.ClientAssertionAudience === 'Endpoint') {
    problems.push({ key: `${at}:ClientAssertionAudience`, message: `${at}:ClientAssertionAudience may not be Endpoint for a provider from the provider source: its assertions name its issuer.` })
  }
  const entries = Array.isArray(section.AllowedTenants) ? section.AllowedTenants as unknown[] : []
  for (const [index, entry] of entries.entries()) {
    const separator = typeof entry === 'string' ? entry.indexOf('=') : -1
    if (separator === -1 || (entry as string).slice(separator + 1) === tenant) continue
    const key = `${at}:AllowedTenants:${index}`
    problems.push({ key, message: `${key} maps its tenant id to another application tenant than the definition's tenant; for a provider from the provider source only the definition's tenant speaks for its users (list the tenant id alone).` })
  }
  return problems
}

/**
 * Validates one definition in the app's environment: its name, its keys against its type's
 * schema, then its type's settings rule and its domains, on the definition alone (nothing beside
 * the section decides whether it is valid; `config` is the app's configuration, which the rules
 * may read). Problems name `<Root>:Authentication:Schemes:<Name>:<Key>`, under `context.rootKey`
 * (none given: the default application's, {@link rootKeyOf}).
 *
 * @public @experimental
 */
export function validateRuntimeProvider (
  definition: RuntimeProviderDefinition,
  context: { readonly config: ApplicationConfiguration, readonly environmentName: string, readonly rootKey?: string }
): RuntimeValidation {
  // Every key is named under the app's root key from the start: the section is bound under it.
  const rootKey = rootKeyOf(context.rootKey)
  const fail = (problems: ConfigurationProblem[]): RuntimeValidation => ({ ok: false, problems })
  const name = typeof definition?.scheme === 'string' ? definition.scheme : ''
  const at = runtimeSectionKey(name, rootKey)
  const nameProblem = NAMED_SCHEMES.nameProblem(name, at)
  if (nameProblem !== undefined) return fail([{ key: at, message: nameProblem }])
  const settings = definition.settings !== null && typeof definition.settings === 'object' && !Array.isArray(definition.settings) ? definition.settings : undefined
  if (settings === undefined) return fail([{ key: at, message: `${at} must be an object of the keys of a named scheme.` }])
  const written = writtenKeys(settings)
  const type = NAMED_SCHEMES.typeOf(settings[written.get('type') ?? 'Type'])
  if (type === undefined) return fail([{ key: `${at}:Type`, message: NAMED_SCHEMES.typeRequired(at) }])
  // Keys are issued by this app: an ApiKey scheme is configuration only, never a customer's definition (issue 42).
  if (type === 'ApiKey') return fail([{ key: `${at}:Type`, message: `${at}:Type may not be ApiKey for a provider from the provider source: API key schemes are configured in Authentication:Schemes.` }])

  const problems: ConfigurationProblem[] = []
  for (const key of FIXED_PATH_KEYS) {
    if (written.has(key.toLowerCase())) problems.push({ key: `${at}:${key}`, message: `${at}:${key} is fixed for a provider from the provider source (${NAMED_SCHEMES.defaultPathsOf(type, name)[key] ?? 'not used'}); remove it.` })
  }
  if (written.has('domains')) problems.push({ key: `${at}:Domains`, message: `${at}:Domains is not read for a provider from the provider source; give its domains with their verification state in the definition's domains.` })
  const flat = flattenJson({ [rootKey]: { Authentication: { Schemes: { [name]: settings } } } }, 'provider source').entries
  const bound = bindConfiguration<SchemeConfiguration>(flat, NAMED_SCHEMES.schemaFor(type, name), at, NAMED_SCHEMES)
  problems.push(...bound.errors)
  for (const key of bound.unknownKeys) problems.push({ key, message: `${key} is not a key of a ${type} scheme.` })
  const section = { ...bound.value, Type: type } as SchemeConfiguration
  const domains = definition.domains ?? []
  const verifiedDomains = domains.filter((domain) => domain.verified === true).map((domain) => String(domain.name).trim().toLowerCase())
  if (bound.errors.length === 0) {
    // The rules of its type, on this definition alone (enabled, every domain checked for its shape).
    const checked = namedSchemeInstance(name, { ...section, Enabled: true, Domains: domains.map((domain) => String(domain.name)) } as SchemeConfiguration, rootKey)
    problems.push(...providerSettingsProblems(checked, context.environmentName), ...domainProblems(checked),
      ...internalTargetProblems(section as unknown as Record<string, unknown>, at, rootKey, context.environmentName, internalHostAllowanceOf(context.config)),
      ...runtimeOnlyProblems(section as unknown as Record<string, unknown>, at, definition.tenant === undefined ? undefined : String(definition.tenant)))
  }
  if (problems.length > 0) return fail(problems)
  const instance = namedSchemeInstance(name, { ...section, Domains: verifiedDomains } as SchemeConfiguration, rootKey)
  return { ok: true, provider: { instance, verifiedDomains, ...(definition.tenant === undefined ? {} : { tenant: String(definition.tenant) }) } }
}
