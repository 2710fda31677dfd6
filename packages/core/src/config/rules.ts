/**
 * Cross-key startup rules of the core's own sections, one small named function each, and the
 * helpers the rules of every section are written with. Each returns sentences that name the full
 * colon path and never a configured value. The settings of a provider type, the data-protection
 * keys and the state store are checked by rules of their own folders (oidc/, saml2/, oauth/,
 * data-protection/, state/); configuration.ts lists every rule in the order they report.
 */
import { isAllowedHostPattern, isDevelopmentLoopbackHttp, isProxyAddress, parsePublicOrigin } from '../http/host-trust.js'
import type { ConfigurationProblem } from './bind.js'
import { isDevelopment } from './environment.js'
import type { ApplicationConfiguration } from './schema.js'
import { enabledProviderInstancesUnder, keyOfInstance, providerInstancesUnder, SAML2_LOGOUT_PATH, SAML2_METADATA_PATH, signsIn, type ProviderInstance } from './provider-instances.js'
import type { Secret } from './secret.js'

export interface RuleContext {
  readonly config: ApplicationConfiguration
  readonly environmentName: string
  /**
   * The app root: relative paths (the key directory) resolve against it. Rules that look at the
   * file system run only when it is given (loadConfiguration always gives it).
   */
  readonly contentRoot?: string
  /**
   * The application's root key (`ProjectTemplate` unless the app is named otherwise): every
   * problem names its key under it, once, where the rule writes the path.
   */
  readonly rootKey: string
}

export type Rule = (context: RuleContext) => ConfigurationProblem[]

/**
 * The rule of one provider type's settings, for one instance (enabled) of its protocol: the
 * contract section or a named scheme, configured or from the provider source. Keys are named
 * under the instance's `keyPrefix`.
 */
export type ProviderSettingsRule<P extends ProviderInstance['protocol']> = (instance: Extract<ProviderInstance, { protocol: P }>, environmentName: string) => ConfigurationProblem[]

export const problem = (key: string, message: string): ConfigurationProblem => ({ key, message })

/**
 * Paths and path areas the application's own routes own. A provider callback may not be one of
 * them or lie below one of the areas.
 */
export const RESERVED_PATHS: readonly string[] = ['/', '/favicon.ico', SAML2_METADATA_PATH, SAML2_LOGOUT_PATH]
export const RESERVED_AREAS: readonly string[] = ['/Account', '/External', '/Home', '/health', '/api', '/css']

/** A value that is empty, whitespace or a `<placeholder>` counts as not configured. */
export function isMissing (value: string | Secret): boolean {
  const text = typeof value === 'string' ? value.trim() : value.isEmpty ? '' : 'set'
  return text === '' || /^<[^>]*>$/.test(text)
}

/** Absolute https URL; http is accepted only for a loopback host in Development. */
export function checkEndpointUrl (value: string, key: string, environmentName: string): ConfigurationProblem[] {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return [problem(key, `${key} must be an absolute https URL.`)]
  }
  if (url.protocol === 'https:') return []
  if (isDevelopmentLoopbackHttp(url, environmentName)) return []
  return [problem(key, `${key} must be an absolute https URL (http is allowed only for a loopback host in Development).`)]
}

function enabledProviders (config: ApplicationConfiguration, rootKey: string): ProviderInstance[] {
  return enabledProviderInstancesUnder(config, rootKey)
}

export const authenticationDisabledRequiresNoFallback: Rule = ({ config, rootKey }) =>
  !config.Authentication.Enabled && config.Authorization.RequireAuthenticatedUserByDefault
    ? [problem(`${rootKey}:Authentication:Enabled`, `${rootKey}:Authentication:Enabled is false while ${rootKey}:Authorization:RequireAuthenticatedUserByDefault is true; set ${rootKey}:Authorization:RequireAuthenticatedUserByDefault to false to run without authentication, or enable authentication.`)]
    : []

export const cookieSessionRequiredWhenAuthenticationEnabled: Rule = ({ config, rootKey }) =>
  config.Authentication.Enabled && !config.Authentication.Cookie.Enabled
    ? [problem(`${rootKey}:Authentication:Cookie:Enabled`, `${rootKey}:Authentication:Cookie:Enabled may be false only when ${rootKey}:Authentication:Enabled is false; the session is the cookie.`)]
    : []

export const providersRequireAuthentication: Rule = ({ config, rootKey }) =>
  config.Authentication.Enabled
    ? []
    : enabledProviders(config, rootKey).map((instance) => problem(keyOfInstance(instance, 'Enabled'), `${keyOfInstance(instance, 'Enabled')} is true while ${rootKey}:Authentication:Enabled is false; a provider needs application authentication.`))

export const defaultSchemes: Rule = ({ config, rootKey }) => {
  const auth = config.Authentication
  const problems: ConfigurationProblem[] = []
  if (auth.DefaultScheme !== 'Cookies') problems.push(problem(`${rootKey}:Authentication:DefaultScheme`, `${rootKey}:Authentication:DefaultScheme must be Cookies.`))
  if (auth.DefaultSignInScheme !== 'Cookies') problems.push(problem(`${rootKey}:Authentication:DefaultSignInScheme`, `${rootKey}:Authentication:DefaultSignInScheme must be Cookies.`))
  // A JwtBearer scheme cannot sign anyone in: it is never the challenge scheme.
  const allowed = ['Cookies', ...enabledProviders(config, rootKey).filter(signsIn).map((instance) => instance.scheme)]
  if (!allowed.includes(auth.DefaultChallengeScheme)) {
    problems.push(problem(`${rootKey}:Authentication:DefaultChallengeScheme`, `${rootKey}:Authentication:DefaultChallengeScheme must be Cookies or the scheme of an enabled provider (${allowed.join(', ')}).`))
  }
  return problems
}

export const insecureCookieOnlyInDevelopment: Rule = ({ config, environmentName, rootKey }) =>
  config.Authentication.Cookie.AllowInsecureHttp && !isDevelopment(environmentName)
    ? [problem(`${rootKey}:Authentication:Cookie:AllowInsecureHttp`, `${rootKey}:Authentication:Cookie:AllowInsecureHttp may be true only in Development (current environment: ${environmentName}).`)]
    : []

export const claimTypesAndValues: Rule = ({ config, rootKey }) => {
  const authz = config.Authorization
  const problems: ConfigurationProblem[] = []
  for (const key of ['RoleClaimType', 'PermissionClaimType'] as const) {
    if (authz[key].trim() === '') problems.push(problem(`${rootKey}:Authorization:${key}`, `${rootKey}:Authorization:${key} must not be empty.`))
  }
  for (const key of ['AdministratorRoles', 'ManageApplicationPermissions'] as const) {
    if (!authz[key].some((value) => value.trim() !== '')) problems.push(problem(`${rootKey}:Authorization:${key}`, `${rootKey}:Authorization:${key} must contain at least one non-empty value.`))
  }
  return problems
}

export const providerSchemesAreFixed: Rule = ({ config, rootKey }) =>
  providerInstancesUnder(config, rootKey).filter((instance) => instance.settings.Scheme !== instance.scheme)
    .map((instance) => problem(keyOfInstance(instance, 'Scheme'), `${keyOfInstance(instance, 'Scheme')} must equal the provider name (${instance.scheme}).`))

/** A problem for each of `keys` of `instance` that {@link isMissing}. */
export function requiredKeys (instance: Pick<ProviderInstance, 'keyPrefix'>, keys: Record<string, string | Secret>): ConfigurationProblem[] {
  return Object.entries(keys)
    .filter(([, value]) => isMissing(value))
    .map(([key]) => problem(keyOfInstance(instance, key), `${keyOfInstance(instance, key)} is required when the provider is enabled.`))
}

/** The enabled providers of one protocol (contract section and named schemes). */
function enabledOf<P extends ProviderInstance['protocol']> (config: ApplicationConfiguration, rootKey: string, protocol: P): Array<Extract<ProviderInstance, { protocol: P }>> {
  return enabledProviders(config, rootKey).filter((instance): instance is Extract<ProviderInstance, { protocol: P }> => instance.protocol === protocol)
}

/** The rule that checks every enabled provider of `protocol` with its type's settings rule. */
export function providerSettings<P extends ProviderInstance['protocol']> (protocol: P, rule: ProviderSettingsRule<P>): Rule {
  return ({ config, environmentName, rootKey }) => enabledOf(config, rootKey, protocol).flatMap((instance) => rule(instance, environmentName))
}

/** Every path an enabled provider owns, with the key that sets it (the contract Saml2's metadata and logout paths are reserved instead). */
function callbackPaths (config: ApplicationConfiguration, rootKey: string): Array<{ key: string, path: string }> {
  return enabledProviders(config, rootKey).flatMap((instance) => {
    const at = (key: string, path: string): { key: string, path: string } => ({ key: keyOfInstance(instance, key), path })
    if (instance.protocol === 'Saml2') {
      return instance.contract
        ? [at('ModulePath', instance.settings.ModulePath)]
        : [at('ModulePath', instance.settings.ModulePath), at('MetadataPath', instance.settings.MetadataPath), at('LogoutPath', instance.settings.LogoutPath)]
    }
    if (instance.protocol === 'OAuth') return [at('CallbackPath', instance.settings.CallbackPath)]
    if (instance.protocol === 'JwtBearer') return []
    const oidc = instance.settings
    return [
      at('CallbackPath', oidc.CallbackPath),
      ...(oidc.SignOutAtProvider ? [at('SignedOutCallbackPath', oidc.SignedOutCallbackPath)] : []),
      ...(oidc.BackChannelLogout ? [at('BackChannelLogoutPath', oidc.BackChannelLogoutPath)] : [])
    ]
  })
}

/** A domain for e-mail discovery: host-name characters, at least one dot, no scheme or @. */
const EMAIL_DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}$/i

/** Each provider's Domains are domain names, and a domain belongs to one provider only. */
export const providerDomainsAreDistinct: Rule = ({ config, rootKey }) => {
  const problems: ConfigurationProblem[] = []
  const owners = new Map<string, string>()
  for (const instance of enabledProviders(config, rootKey)) problems.push(...domainProblems(instance, owners))
  return problems
}

/**
 * The Domains of one provider that are no domain names, or that a provider before it names
 * (`owners`: domain -> the key that names it, filled in as they are read).
 */
export function domainProblems (instance: ProviderInstance, owners = new Map<string, string>()): ConfigurationProblem[] {
  const problems: ConfigurationProblem[] = []
  // A JwtBearer scheme has no Domains: e-mail discovery starts sign-ins.
  if (instance.protocol === 'JwtBearer') return problems
  instance.settings.Domains.forEach((value, index) => {
    const key = keyOfInstance(instance, `Domains:${index}`)
    const domain = value.trim().toLowerCase()
    if (!EMAIL_DOMAIN.test(domain)) {
      problems.push(problem(key, `${key} must be an e-mail domain such as example.com (no scheme, no @).`))
      return
    }
    const owner = owners.get(domain)
    if (owner !== undefined) problems.push(problem(key, `${key} names a domain that ${owner} names already; a domain belongs to one provider.`))
    else owners.set(domain, key)
  })
  return problems
}

export const callbackPathsAreLocalAndDistinct: Rule = ({ config, rootKey }) => {
  const problems: ConfigurationProblem[] = []
  const seen = new Map<string, string>()
  for (const { key, path } of callbackPaths(config, rootKey)) {
    if (!/^\/[A-Za-z0-9\-._~/]*$/.test(path) || path.startsWith('//')) {
      problems.push(problem(key, `${key} must start with a single / and contain only unreserved URL characters.`))
      continue
    }
    const lower = path.toLowerCase().replace(/\/+$/, '') || '/'
    const owner = seen.get(lower)
    if (owner !== undefined) {
      problems.push(problem(key, `${key} collides with ${owner}.`))
    } else if (RESERVED_PATHS.some((reserved) => reserved.toLowerCase() === lower) ||
      RESERVED_AREAS.some((area) => lower === area.toLowerCase() || lower.startsWith(`${area.toLowerCase()}/`))) {
      problems.push(problem(key, `${key} collides with a route of the application.`))
    }
    seen.set(lower, key)
  }
  return problems
}

export const forwardedHeadersNeedKnownProxies: Rule = ({ config, rootKey }) =>
  config.ForwardedHeaders.Enabled && !config.ForwardedHeaders.KnownProxies.some((value) => value.trim() !== '')
    ? [problem(`${rootKey}:ForwardedHeaders:KnownProxies`, `${rootKey}:ForwardedHeaders:KnownProxies must list at least one proxy address when ${rootKey}:ForwardedHeaders:Enabled is true.`)]
    : []

/** Fastify's proxy-addr throws at startup on an entry it cannot parse, quoting it: refuse it here, unquoted. */
export const knownProxiesAreAddresses: Rule = ({ config, rootKey }) =>
  config.ForwardedHeaders.Enabled
    ? config.ForwardedHeaders.KnownProxies.flatMap((value, index) => {
      const key = `${rootKey}:ForwardedHeaders:KnownProxies:${index}`
      return value.trim() === '' || isProxyAddress(value.trim())
        ? []
        : [problem(key, `${key} must be an IP address, an address with a prefix length or IPv4 netmask (10.0.0.0/8), or one of loopback, linklocal, uniquelocal.`)]
    })
    : []

export const absoluteLifetimeCoversIdleLifetime: Rule = ({ config, rootKey }) =>
  config.Authentication.Cookie.AbsoluteExpireMinutes < config.Authentication.Cookie.ExpireMinutes
    ? [problem(`${rootKey}:Authentication:Cookie:AbsoluteExpireMinutes`, `${rootKey}:Authentication:Cookie:AbsoluteExpireMinutes must be at least ${rootKey}:Authentication:Cookie:ExpireMinutes.`)]
    : []

/**
 * Every absolute URL a provider needs comes from PublicOrigin outside Development: the request's
 * Host header is the client's to choose.
 */
export const publicOriginIsAnOrigin: Rule = ({ config, environmentName, rootKey }) => {
  const key = `${rootKey}:Hosting:PublicOrigin`
  const value = config.Hosting.PublicOrigin
  if (isMissing(value)) {
    // A JwtBearer scheme builds no redirect: only sign-in providers need it.
    return !isDevelopment(environmentName) && config.Authentication.Enabled && enabledProviders(config, rootKey).some(signsIn)
      ? [problem(key, `${key} is required outside Development when an external provider is enabled; every redirect_uri and SAML endpoint URL is built from it.`)]
      : []
  }
  return parsePublicOrigin(value, environmentName) === undefined
    ? [problem(key, `${key} must be an absolute https origin such as https://app.example.com (scheme, host and optional port; no path, query or fragment; http only in Development).`)]
    : []
}

export const allowedHostsArePatterns: Rule = ({ config, rootKey }) =>
  config.Hosting.AllowedHosts.flatMap((value, index) => {
    const key = `${rootKey}:Hosting:AllowedHosts:${index}`
    return isAllowedHostPattern(value.trim())
      ? []
      : [problem(key, `${key} must be a host name without scheme or port (app.example.com), a *.example.com pattern, or *.`)]
  })

/** Node refuses to create a server whose header timeout exceeds its request timeout. */
export const headersTimeoutWithinRequestTimeout: Rule = ({ config, rootKey }) =>
  config.Hosting.HeadersTimeoutSeconds > config.Hosting.RequestTimeoutSeconds
    ? [problem(`${rootKey}:Hosting:HeadersTimeoutSeconds`, `${rootKey}:Hosting:HeadersTimeoutSeconds must not exceed ${rootKey}:Hosting:RequestTimeoutSeconds.`)]
    : []
