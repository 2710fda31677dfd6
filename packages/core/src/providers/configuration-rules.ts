/**
 * Cross-key startup rules across the providers the configuration declares (every type's
 * instances, from provider-instances.ts): a provider needs authentication, the default challenge
 * scheme is a provider's, schemes are fixed, endpoint paths are local and distinct, e-mail domains
 * belong to one provider, PublicOrigin is set when a provider signs users in. Moved from
 * config/rules.ts so that config/ knows no provider type; the rules themselves are unchanged.
 * configuration.ts lists them with the others, in the order they report. Last, the warnings
 * across providers ({@link bearerAudiencesAreNotSignInClients}).
 */
import type { ConfigurationProblem } from '../config/bind.js'
import type { ConfigurationWarning } from '../config/load.js'
import { isDevelopment } from '../config/environment.js'
import { isMissing, problem } from '../config/rules.js'
import { parsePublicOrigin, restrictsHosts } from '../http/host-trust.js'
import { SAML2_LOGOUT_PATH, SAML2_METADATA_PATH } from '../saml2/settings-schema.js'
import type { ApplicationConfiguration, ApplicationRule } from './application-schema.js'
import { enabledProviderInstancesUnder, keyOfInstance, providerInstancesUnder, signsIn, type ProviderInstance } from './provider-instances.js'
import { endpointPathsOf } from './provider-types.js'
import { introspectionEnabled } from '../bearer/introspection.js'
import { routingFactsOf, routingProblems } from '../bearer/scheme-routing.js'
import { apiKeyPrefixProblems } from '../api-keys/settings-rules.js'

/**
 * Paths and path areas the application's own routes own. A provider callback may not be one of
 * them or lie below one of the areas.
 */
export const RESERVED_PATHS: readonly string[] = ['/', '/favicon.ico', SAML2_METADATA_PATH, SAML2_LOGOUT_PATH]
export const RESERVED_AREAS: readonly string[] = ['/Account', '/External', '/Home', '/health', '/api', '/css']

function enabledProviders (config: ApplicationConfiguration, rootKey: string): ProviderInstance[] {
  return enabledProviderInstancesUnder(config, rootKey)
}

export const providersRequireAuthentication: ApplicationRule = ({ config, rootKey }) =>
  config.Authentication.Enabled
    ? []
    : enabledProviders(config, rootKey).map((instance) => problem(keyOfInstance(instance, 'Enabled'), `${keyOfInstance(instance, 'Enabled')} is true while ${rootKey}:Authentication:Enabled is false; a provider needs application authentication.`))

export const defaultSchemes: ApplicationRule = ({ config, rootKey }) => {
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

export const providerSchemesAreFixed: ApplicationRule = ({ config, rootKey }) =>
  providerInstancesUnder(config, rootKey).filter((instance) => instance.settings.Scheme !== instance.scheme)
    .map((instance) => problem(keyOfInstance(instance, 'Scheme'), `${keyOfInstance(instance, 'Scheme')} must equal the provider name (${instance.scheme}).`))

/** Every path an enabled provider owns, with the key that sets it (its type's `endpointPaths`; the contract Saml2's metadata and logout paths are reserved instead). */
function callbackPaths (config: ApplicationConfiguration, rootKey: string): Array<{ key: string, path: string }> {
  return enabledProviders(config, rootKey).flatMap((instance) => [...endpointPathsOf(instance)])
}

/** A domain for e-mail discovery: host-name characters, at least one dot, no scheme or @. */
const EMAIL_DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}$/i

/** Each provider's Domains are domain names, and a domain belongs to one provider only. */
export const providerDomainsAreDistinct: ApplicationRule = ({ config, rootKey }) => {
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
  if (!signsIn(instance)) return problems
  ;(instance.settings as { readonly Domains: readonly string[] }).Domains.forEach((value, index) => {
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

export const callbackPathsAreLocalAndDistinct: ApplicationRule = ({ config, rootKey }) => {
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

/**
 * Every absolute URL a provider needs comes from PublicOrigin outside Development: the request's
 * Host header is the client's to choose.
 */
export const publicOriginIsAnOrigin: ApplicationRule = ({ config, environmentName, rootKey }) => {
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

/** The origin of an issuer URL, lower-cased by URL parsing; undefined when it is not a URL. */
function issuerOriginOf (value: string): string | undefined {
  try {
    return isMissing(value) ? undefined : new URL(value.trim()).origin
  } catch {
    return undefined
  }
}

/**
 * The startup warning (`configuration.bearer_audience_is_client_id`; issue 40, item 3) for each
 * enabled JwtBearer scheme whose Audiences holds the ClientId of an enabled OpenID Connect sign-in
 * provider at the same issuer (their Authority, or the scheme's Issuer, on one origin: Entra ID's
 * tenant and multi-tenant authorities share a host). That issuer's ID tokens for the sign-in
 * client then carry an `aud` the API accepts; an ID token without `nonce` or `at_hash` (both are
 * optional in the code flow) would pass as an access token. Names the two keys, never a value.
 */
export function bearerAudiencesAreNotSignInClients (config: ApplicationConfiguration, rootKey: string): ConfigurationWarning[] {
  const enabled = config.Authentication.Enabled ? enabledProviders(config, rootKey) : []
  const clients = enabled.flatMap((instance) => instance.protocol === 'OpenIdConnect' && !isMissing(instance.settings.ClientId)
    ? [{ key: keyOfInstance(instance, 'ClientId'), clientId: instance.settings.ClientId.trim(), origin: issuerOriginOf(instance.settings.Authority) }]
    : [])
  return enabled.flatMap((instance) => {
    if (instance.protocol !== 'JwtBearer') return []
    const origin = issuerOriginOf(isMissing(instance.settings.Authority) ? instance.settings.Issuer : instance.settings.Authority)
    return instance.settings.Audiences.flatMap((audience, index) => clients
      .filter((client) => origin !== undefined && client.origin === origin && client.clientId === audience.trim())
      .map((client): ConfigurationWarning => {
        const key = keyOfInstance(instance, `Audiences:${index}`)
        return {
          key,
          event: 'configuration.bearer_audience_is_client_id',
          message: `${key} equals ${client.key} at the same issuer: that issuer's ID tokens for the sign-in client carry this audience. Give the API an audience of its own (an App ID URI such as api://orders, or a Keycloak audience mapper for an API client) and never list a sign-in client's id; set ${keyOfInstance(instance, 'RequireAccessTokenType')} when the issuer sets typ at+jwt (docs/providers/jwt-bearer.md).`
        }
      }))
  })
}

/**
 * An opaque token goes to one issuer only (issue 40, item 1; bearer/scheme-routing.ts): two
 * enabled introspecting JwtBearer schemes never have nested TokenPrefixes, nor, sharing API paths,
 * the same TokenPrefix or none. The later scheme's TokenPrefix is named.
 */
export const bearerIntrospectionIsRouted: ApplicationRule = ({ config, rootKey }) =>
  routingProblems(enabledProviders(config, rootKey).flatMap((instance) => instance.protocol === 'JwtBearer' && introspectionEnabled(instance.settings.Introspection)
    ? [{ facts: routingFactsOf(instance.scheme, instance.settings, true, false), keyPrefix: instance.keyPrefix }]
    : []))

/**
 * Outside Development a JwtBearer scheme needs a validated origin (issue 40, item 4): the URL a
 * DPoP proof's `htu` is checked against, the protected-resource metadata's `resource` and the
 * challenges' `resource_metadata` are built from PublicOrigin, or from the request's Host only
 * when AllowedHosts restricts it (no `*`); never from a Host the client chose freely.
 */
/**
 * A key names one scheme by its prefix alone (issue 42): no enabled ApiKey scheme's prefix equals
 * or starts another's, nor an introspecting JwtBearer scheme's `Introspection:TokenPrefix` (a key
 * would be sent to that issuer). api-keys/settings-rules.ts.
 */
export const apiKeyPrefixesAreDistinct: ApplicationRule = ({ config, rootKey }) => {
  const enabled = enabledProviders(config, rootKey)
  const keys = enabled.flatMap((instance) => instance.protocol === 'ApiKey' ? [instance] : [])
  if (keys.length === 0) return []
  const tokenPrefixes = enabled.flatMap((instance) => instance.protocol === 'JwtBearer' && introspectionEnabled(instance.settings.Introspection) && instance.settings.Introspection.TokenPrefix !== ''
    ? [{ key: keyOfInstance(instance, 'Introspection:TokenPrefix'), prefix: instance.settings.Introspection.TokenPrefix }]
    : [])
  return apiKeyPrefixProblems(keys, tokenPrefixes)
}

export const bearerSchemesHaveAnOrigin: ApplicationRule = ({ config, environmentName, rootKey }) => {
  if (isDevelopment(environmentName) || !config.Authentication.Enabled || !isMissing(config.Hosting.PublicOrigin) || restrictsHosts(config.Hosting.AllowedHosts)) return []
  if (!enabledProviders(config, rootKey).some((instance) => instance.protocol === 'JwtBearer')) return []
  const key = `${rootKey}:Hosting:PublicOrigin`
  return [problem(key, `${key} (or ${rootKey}:Hosting:AllowedHosts without *) is required outside Development when a JwtBearer scheme is enabled; DPoP proofs and the protected-resource metadata name the API's origin, which must not come from the request's Host header.`)]
}
