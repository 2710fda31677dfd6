/**
 * Cross-key startup rules of the core's own sections, one small named function each, and the
 * helpers the rules of every section are written with. Each returns sentences that name the full
 * colon path and never a configured value. The settings of a provider type, the data-protection
 * keys and the state store are checked by rules of their own folders (oidc/, saml2/, oauth/,
 * bearer/, data-protection/, state/), the rules across providers by providers/configuration-rules.ts;
 * configuration.ts lists every rule in the order they report.
 */
import { isAllowedHostPattern, isDevelopmentLoopbackHttp, isProxyAddress } from '../http/host-trust.js'
import type { ConfigurationProblem } from './bind.js'
import { isDevelopment } from './environment.js'
import { keyOfInstance, type ProviderInstanceBase } from './provider-type.js'
import type { CoreConfiguration } from './schema.js'
import type { Secret } from './secret.js'

export interface RuleContext<C extends CoreConfiguration = CoreConfiguration> {
  readonly config: C
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

/**
 * One cross-key rule. A rule of the core's own sections reads {@link CoreConfiguration}; a rule
 * that reads the provider sections takes the composed configuration (providers/configuration-rules.ts).
 */
export type Rule<C extends CoreConfiguration = CoreConfiguration> = (context: RuleContext<C>) => ConfigurationProblem[]

export const problem = (key: string, message: string): ConfigurationProblem => ({ key, message })

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

export const authenticationDisabledRequiresNoFallback: Rule = ({ config, rootKey }) =>
  !config.Authentication.Enabled && config.Authorization.RequireAuthenticatedUserByDefault
    ? [problem(`${rootKey}:Authentication:Enabled`, `${rootKey}:Authentication:Enabled is false while ${rootKey}:Authorization:RequireAuthenticatedUserByDefault is true; set ${rootKey}:Authorization:RequireAuthenticatedUserByDefault to false to run without authentication, or enable authentication.`)]
    : []

export const cookieSessionRequiredWhenAuthenticationEnabled: Rule = ({ config, rootKey }) =>
  config.Authentication.Enabled && !config.Authentication.Cookie.Enabled
    ? [problem(`${rootKey}:Authentication:Cookie:Enabled`, `${rootKey}:Authentication:Cookie:Enabled may be false only when ${rootKey}:Authentication:Enabled is false; the session is the cookie.`)]
    : []

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

/** A problem for each of `keys` of `instance` that {@link isMissing}. */
export function requiredKeys (instance: Pick<ProviderInstanceBase, 'keyPrefix'>, keys: Record<string, string | Secret>): ConfigurationProblem[] {
  return Object.entries(keys)
    .filter(([, value]) => isMissing(value))
    .map(([key]) => problem(keyOfInstance(instance, key), `${keyOfInstance(instance, key)} is required when the provider is enabled.`))
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
