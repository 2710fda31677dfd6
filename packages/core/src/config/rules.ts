/**
 * Cross-key startup rules, one small named function each; read them as a list in {@link RULES}.
 * Each returns sentences that name the full colon path and never a configured value.
 */
import { isAllowedHostPattern, isDevelopmentLoopbackHttp, isProxyAddress, parsePublicOrigin } from '../http/host-trust.js'
import { inspectKeyStore, keyMaterialOf } from '../data-protection/key-ring.js'
import { readCertificate } from '../saml2/certificates.js'
import { readServiceProviderKeys, type ServiceProviderKeyInput } from '../saml2/keys.js'
import type { ConfigurationProblem } from './bind.js'
import { isDevelopment } from './environment.js'
import { ROOT_KEY, VENDOR_NAMES, type ApplicationConfiguration, type ProviderName, type Saml2Configuration } from './schema.js'
import { enabledProviderInstances, keyOfInstance, providerInstancesOf, type ProviderInstance } from './provider-instances.js'
import type { Secret } from './secret.js'
import { checkRedisShape, redisShapeOf } from './redis-rules.js'
import { telemetrySettings } from './telemetry-rules.js'

export interface RuleContext {
  readonly config: ApplicationConfiguration
  readonly environmentName: string
  /**
   * The app root: relative paths (the key directory) resolve against it. Rules that look at the
   * file system run only when it is given (loadConfiguration always gives it).
   */
  readonly contentRoot?: string
}

type Rule = (context: RuleContext) => ConfigurationProblem[]

const AUTH = `${ROOT_KEY}:Authentication`
const HOSTING = `${ROOT_KEY}:Hosting`
const DATA_PROTECTION = `${ROOT_KEY}:DataProtection`
const AUTHZ = `${ROOT_KEY}:Authorization`
const providerKey = (name: ProviderName, key: string): string => `${AUTH}:Providers:${name}:${key}`
const problem = (key: string, message: string): ConfigurationProblem => ({ key, message })

/**
 * Paths and path areas the application's own routes own. A provider callback may not be one of
 * them or lie below one of the areas.
 */
export const RESERVED_PATHS: readonly string[] = ['/', '/favicon.ico', '/Saml2/Metadata', '/Saml2/Logout']
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

function enabledProviders (config: ApplicationConfiguration): ProviderInstance[] {
  return enabledProviderInstances(config)
}

export const authenticationDisabledRequiresNoFallback: Rule = ({ config }) =>
  !config.Authentication.Enabled && config.Authorization.RequireAuthenticatedUserByDefault
    ? [problem(`${AUTH}:Enabled`, `${AUTH}:Enabled is false while ${AUTHZ}:RequireAuthenticatedUserByDefault is true; set ${AUTHZ}:RequireAuthenticatedUserByDefault to false to run without authentication, or enable authentication.`)]
    : []

export const cookieSessionRequiredWhenAuthenticationEnabled: Rule = ({ config }) =>
  config.Authentication.Enabled && !config.Authentication.Cookie.Enabled
    ? [problem(`${AUTH}:Cookie:Enabled`, `${AUTH}:Cookie:Enabled may be false only when ${AUTH}:Enabled is false; the session is the cookie.`)]
    : []

export const providersRequireAuthentication: Rule = ({ config }) =>
  config.Authentication.Enabled
    ? []
    : enabledProviders(config).map((instance) => problem(keyOfInstance(instance, 'Enabled'), `${keyOfInstance(instance, 'Enabled')} is true while ${AUTH}:Enabled is false; a provider needs application authentication.`))

export const defaultSchemes: Rule = ({ config }) => {
  const auth = config.Authentication
  const problems: ConfigurationProblem[] = []
  if (auth.DefaultScheme !== 'Cookies') problems.push(problem(`${AUTH}:DefaultScheme`, `${AUTH}:DefaultScheme must be Cookies.`))
  if (auth.DefaultSignInScheme !== 'Cookies') problems.push(problem(`${AUTH}:DefaultSignInScheme`, `${AUTH}:DefaultSignInScheme must be Cookies.`))
  const allowed = ['Cookies', ...enabledProviders(config).map((instance) => instance.scheme)]
  if (!allowed.includes(auth.DefaultChallengeScheme)) {
    problems.push(problem(`${AUTH}:DefaultChallengeScheme`, `${AUTH}:DefaultChallengeScheme must be Cookies or the scheme of an enabled provider (${allowed.join(', ')}).`))
  }
  return problems
}

export const insecureCookieOnlyInDevelopment: Rule = ({ config, environmentName }) =>
  config.Authentication.Cookie.AllowInsecureHttp && !isDevelopment(environmentName)
    ? [problem(`${AUTH}:Cookie:AllowInsecureHttp`, `${AUTH}:Cookie:AllowInsecureHttp may be true only in Development (current environment: ${environmentName}).`)]
    : []

export const claimTypesAndValues: Rule = ({ config }) => {
  const authz = config.Authorization
  const problems: ConfigurationProblem[] = []
  for (const key of ['RoleClaimType', 'PermissionClaimType'] as const) {
    if (authz[key].trim() === '') problems.push(problem(`${AUTHZ}:${key}`, `${AUTHZ}:${key} must not be empty.`))
  }
  for (const key of ['AdministratorRoles', 'ManageApplicationPermissions'] as const) {
    if (!authz[key].some((value) => value.trim() !== '')) problems.push(problem(`${AUTHZ}:${key}`, `${AUTHZ}:${key} must contain at least one non-empty value.`))
  }
  return problems
}

export const providerSchemesAreFixed: Rule = ({ config }) =>
  providerInstancesOf(config).filter((instance) => instance.settings.Scheme !== instance.scheme)
    .map((instance) => problem(keyOfInstance(instance, 'Scheme'), `${keyOfInstance(instance, 'Scheme')} must equal the provider name (${instance.scheme}).`))

function required (instance: ProviderInstance | ProviderName, keys: Record<string, string | Secret>): ConfigurationProblem[] {
  const keyOf = (key: string): string => typeof instance === 'string' ? providerKey(instance, key) : keyOfInstance(instance, key)
  return Object.entries(keys)
    .filter(([, value]) => isMissing(value))
    .map(([key]) => problem(keyOf(key), `${keyOf(key)} is required when the provider is enabled.`))
}

/** The enabled providers of one protocol (contract section and named schemes). */
function enabledOf<P extends ProviderInstance['protocol']> (config: ApplicationConfiguration, protocol: P): Array<Extract<ProviderInstance, { protocol: P }>> {
  return enabledProviders(config).filter((instance): instance is Extract<ProviderInstance, { protocol: P }> => instance.protocol === protocol)
}

export const openIdConnectSettings: Rule = ({ config, environmentName }) =>
  enabledOf(config, 'OpenIdConnect').flatMap((instance) => {
    const oidc = instance.settings
    const key = (name: string): string => keyOfInstance(instance, name)
    const problems = required(instance, { Authority: oidc.Authority, ClientId: oidc.ClientId, ClientSecret: oidc.ClientSecret })
    if (!isMissing(oidc.Authority)) problems.push(...checkEndpointUrl(oidc.Authority, key('Authority'), environmentName))
    if (oidc.ResponseType !== 'code') {
      problems.push(problem(key('ResponseType'), `${key('ResponseType')} must be code (the authorization code flow with PKCE is the only supported response type).`))
    }
    if (!oidc.Scopes.includes('openid')) {
      problems.push(problem(key('Scopes'), `${key('Scopes')} must include openid.`))
    }
    if (!/^(RS|PS|ES)(256|384|512)$|^EdDSA$|^Ed25519$/.test(oidc.IdTokenSignedResponseAlg)) {
      problems.push(problem(key('IdTokenSignedResponseAlg'), `${key('IdTokenSignedResponseAlg')} must be an asymmetric JWS algorithm (RS256, PS256, ES256, EdDSA, ...).`))
    }
    return problems
  })

/** The SP key settings of Providers:Saml2 as plain text (the secret ones revealed here, for parsing only). */
export function saml2KeyInput (saml: Saml2Configuration): ServiceProviderKeyInput {
  return {
    signingKey: saml.SigningKey.reveal(),
    signingCertificate: saml.SigningCertificate,
    signingCertificateNext: saml.SigningCertificateNext,
    encryptionKey: saml.EncryptionKey.reveal(),
    encryptionKeyPrevious: saml.EncryptionKeyPrevious.reveal(),
    encryptionCertificate: saml.EncryptionCertificate
  }
}

/** Each non-empty entry of a certificate list that does not parse, named `<key>:<index>`. */
function unreadableCertificates (values: readonly string[], listKey: string): ConfigurationProblem[] {
  return values.flatMap((value, index) => {
    if (value.trim() === '') return []
    try {
      readCertificate(value)
      return []
    } catch {
      return [problem(`${listKey}:${index}`, `${listKey}:${index} is not a PEM or base64 DER X.509 certificate.`)]
    }
  })
}

export const saml2Settings: Rule = ({ config, environmentName }) =>
  enabledOf(config, 'Saml2').flatMap((instance) => saml2InstanceSettings(instance, environmentName))

function saml2InstanceSettings (instance: Extract<ProviderInstance, { protocol: 'Saml2' }>, environmentName: string): ConfigurationProblem[] {
  const saml = instance.settings
  const providerKey = (_name: 'Saml2', key: string): string => keyOfInstance(instance, key)
  const problems = required(instance, { EntityId: saml.EntityId })
  if (saml.LoadMetadata) {
    problems.push(...required(instance, { MetadataUrl: saml.MetadataUrl }))
    if (!isMissing(saml.MetadataUrl)) problems.push(...checkEndpointUrl(saml.MetadataUrl, providerKey('Saml2', 'MetadataUrl'), environmentName))
    problems.push(...unreadableCertificates(saml.MetadataSigningCertificates, providerKey('Saml2', 'MetadataSigningCertificates')))
  } else {
    problems.push(...required(instance, { IdpEntityId: saml.IdpEntityId, IdpSingleSignOnUrl: saml.IdpSingleSignOnUrl }))
    if (!isMissing(saml.IdpSingleSignOnUrl)) problems.push(...checkEndpointUrl(saml.IdpSingleSignOnUrl, providerKey('Saml2', 'IdpSingleSignOnUrl'), environmentName))
    if (!saml.IdpSigningCertificates.some((value) => !isMissing(value))) {
      problems.push(problem(providerKey('Saml2', 'IdpSigningCertificates'), `${providerKey('Saml2', 'IdpSigningCertificates')} must contain at least one certificate when ${providerKey('Saml2', 'LoadMetadata')} is false.`))
    }
    // The same parse the provider does at startup (plugins/providers/saml2.ts), so check-config finds it first.
    problems.push(...unreadableCertificates(saml.IdpSigningCertificates, providerKey('Saml2', 'IdpSigningCertificates')))
  }
  if (!saml.LoadMetadata && !isMissing(saml.IdpSingleLogoutUrl)) {
    problems.push(...checkEndpointUrl(saml.IdpSingleLogoutUrl, providerKey('Saml2', 'IdpSingleLogoutUrl'), environmentName))
  }
  if (saml.SignOutAtProvider && isMissing(saml.SigningKey)) {
    problems.push(problem(providerKey('Saml2', 'SigningKey'), `${providerKey('Saml2', 'SigningKey')} is required when ${providerKey('Saml2', 'SignOutAtProvider')} is true (LogoutRequests must be signed).`))
  }
  // The provider reads the keys the same way at startup (plugins/providers/saml2.ts).
  for (const keyProblem of readServiceProviderKeys(saml2KeyInput(saml)).problems) {
    const key = providerKey('Saml2', keyProblem.key)
    problems.push(problem(key, `${key} ${keyProblem.message}`))
  }
  return problems
}

export const vendorSettings: Rule = ({ config, environmentName }) => {
  const problems: ConfigurationProblem[] = []
  for (const name of VENDOR_NAMES) {
    const vendor = config.Authentication.Providers[name]
    if (!vendor.Enabled) continue
    problems.push(...required(name, {
      ClientId: vendor.ClientId,
      ClientSecret: vendor.ClientSecret,
      AuthorizationEndpoint: vendor.AuthorizationEndpoint,
      TokenEndpoint: vendor.TokenEndpoint,
      UserInformationEndpoint: vendor.UserInformationEndpoint
    }))
    for (const key of ['AuthorizationEndpoint', 'TokenEndpoint', 'UserInformationEndpoint', 'EmailsEndpoint'] as const) {
      if (!isMissing(vendor[key])) problems.push(...checkEndpointUrl(vendor[key], providerKey(name, key), environmentName))
    }
  }
  return problems
}

/** Every path an enabled provider owns, with the key that sets it (the contract Saml2's metadata and logout paths are reserved instead). */
function callbackPaths (config: ApplicationConfiguration): Array<{ key: string, path: string }> {
  return enabledProviders(config).flatMap((instance) => {
    const at = (key: string, path: string): { key: string, path: string } => ({ key: keyOfInstance(instance, key), path })
    if (instance.protocol === 'Saml2') {
      return instance.contract
        ? [at('ModulePath', instance.settings.ModulePath)]
        : [at('ModulePath', instance.settings.ModulePath), at('MetadataPath', instance.settings.MetadataPath), at('LogoutPath', instance.settings.LogoutPath)]
    }
    if (instance.protocol === 'OAuth') return [at('CallbackPath', instance.settings.CallbackPath)]
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
export const providerDomainsAreDistinct: Rule = ({ config }) => {
  const problems: ConfigurationProblem[] = []
  const owners = new Map<string, string>()
  for (const instance of enabledProviders(config)) {
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
  }
  return problems
}

export const callbackPathsAreLocalAndDistinct: Rule = ({ config }) => {
  const problems: ConfigurationProblem[] = []
  const seen = new Map<string, string>()
  for (const { key, path } of callbackPaths(config)) {
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

export const forwardedHeadersNeedKnownProxies: Rule = ({ config }) =>
  config.ForwardedHeaders.Enabled && !config.ForwardedHeaders.KnownProxies.some((value) => value.trim() !== '')
    ? [problem(`${ROOT_KEY}:ForwardedHeaders:KnownProxies`, `${ROOT_KEY}:ForwardedHeaders:KnownProxies must list at least one proxy address when ${ROOT_KEY}:ForwardedHeaders:Enabled is true.`)]
    : []

/** Fastify's proxy-addr throws at startup on an entry it cannot parse, quoting it: refuse it here, unquoted. */
export const knownProxiesAreAddresses: Rule = ({ config }) =>
  config.ForwardedHeaders.Enabled
    ? config.ForwardedHeaders.KnownProxies.flatMap((value, index) => {
      const key = `${ROOT_KEY}:ForwardedHeaders:KnownProxies:${index}`
      return value.trim() === '' || isProxyAddress(value.trim())
        ? []
        : [problem(key, `${key} must be an IP address, an address with a prefix length or IPv4 netmask (10.0.0.0/8), or one of loopback, linklocal, uniquelocal.`)]
    })
    : []

export const dataProtectionKeysAreStrong: Rule = ({ config }) =>
  config.DataProtection.Keys.flatMap((key, index) => {
    const path = `${DATA_PROTECTION}:Keys:${index}`
    return keyMaterialOf(key.reveal()) !== undefined ? [] : [problem(path, `${path} must be base64 of at least 32 random bytes.`)]
  })

export const absoluteLifetimeCoversIdleLifetime: Rule = ({ config }) =>
  config.Authentication.Cookie.AbsoluteExpireMinutes < config.Authentication.Cookie.ExpireMinutes
    ? [problem(`${AUTH}:Cookie:AbsoluteExpireMinutes`, `${AUTH}:Cookie:AbsoluteExpireMinutes must be at least ${AUTH}:Cookie:ExpireMinutes.`)]
    : []

const STATE = `${ROOT_KEY}:State`

/** A Redis connection string: redis://, rediss:// or unix:/path. The message never repeats it (it may hold a password). */
export function checkRedisConnectionString (value: string): string | undefined {
  const key = `${STATE}:Redis:ConnectionString`
  const text = value.trim()
  if (text.startsWith('unix:')) {
    return /^unix:(\/\/)?\/[^\s?#]+$/.test(text) ? undefined : `${key} must be unix: followed by an absolute socket path.`
  }
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return `${key} must be a redis://, rediss:// or unix: connection string.`
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') return `${key} must use redis://, rediss:// or unix:.`
  if (url.hostname === '') return `${key} must name a host.`
  if (!/^(\/\d{0,2})?$/.test(url.pathname)) return `${key} may name only a database number as its path.`
  return undefined
}

export const stateStoreSettings: Rule = ({ config }) => {
  const state = config.State
  if (state.Provider !== 'Redis') return []
  const key = `${STATE}:Redis:ConnectionString`
  const shape = redisShapeOf(state.Redis)
  if (shape !== 'Standalone') return checkRedisShape(state.Redis, `${STATE}:Redis`)
  if (isMissing(state.Redis.ConnectionString)) return [problem(key, `${key} is required when ${STATE}:Provider is Redis.`)]
  const message = checkRedisConnectionString(state.Redis.ConnectionString.reveal())
  return message === undefined ? [] : [problem(key, message)]
}

/** The key directory as startup would find it (read-only here): permissions, a missing, malformed or weak key file. */
export const dataProtectionKeyStoreIsUsable: Rule = ({ config, contentRoot }) =>
  contentRoot === undefined ? [] : inspectKeyStore(config.DataProtection.Keys, config.DataProtection.KeyDirectory, contentRoot)

export const applicationDiscriminatorIsShort: Rule = ({ config }) =>
  config.DataProtection.ApplicationDiscriminator.length > 200
    ? [problem(`${DATA_PROTECTION}:ApplicationDiscriminator`, `${DATA_PROTECTION}:ApplicationDiscriminator must be at most 200 characters.`)]
    : []

/**
 * Every absolute URL a provider needs comes from PublicOrigin outside Development: the request's
 * Host header is the client's to choose.
 */
export const publicOriginIsAnOrigin: Rule = ({ config, environmentName }) => {
  const key = `${HOSTING}:PublicOrigin`
  const value = config.Hosting.PublicOrigin
  if (isMissing(value)) {
    return !isDevelopment(environmentName) && config.Authentication.Enabled && enabledProviders(config).length > 0
      ? [problem(key, `${key} is required outside Development when an external provider is enabled; every redirect_uri and SAML endpoint URL is built from it.`)]
      : []
  }
  return parsePublicOrigin(value, environmentName) === undefined
    ? [problem(key, `${key} must be an absolute https origin such as https://app.example.com (scheme, host and optional port; no path, query or fragment; http only in Development).`)]
    : []
}

export const allowedHostsArePatterns: Rule = ({ config }) =>
  config.Hosting.AllowedHosts.flatMap((value, index) => {
    const key = `${HOSTING}:AllowedHosts:${index}`
    return isAllowedHostPattern(value.trim())
      ? []
      : [problem(key, `${key} must be a host name without scheme or port (app.example.com), a *.example.com pattern, or *.`)]
  })

/** Node refuses to create a server whose header timeout exceeds its request timeout. */
export const headersTimeoutWithinRequestTimeout: Rule = ({ config }) =>
  config.Hosting.HeadersTimeoutSeconds > config.Hosting.RequestTimeoutSeconds
    ? [problem(`${HOSTING}:HeadersTimeoutSeconds`, `${HOSTING}:HeadersTimeoutSeconds must not exceed ${HOSTING}:RequestTimeoutSeconds.`)]
    : []

/** Every cross-key rule, in the order their messages are reported. */
export const RULES: readonly Rule[] = [
  authenticationDisabledRequiresNoFallback,
  cookieSessionRequiredWhenAuthenticationEnabled,
  providersRequireAuthentication,
  defaultSchemes,
  insecureCookieOnlyInDevelopment,
  claimTypesAndValues,
  providerSchemesAreFixed,
  openIdConnectSettings,
  saml2Settings,
  vendorSettings,
  callbackPathsAreLocalAndDistinct,
  providerDomainsAreDistinct,
  forwardedHeadersNeedKnownProxies,
  knownProxiesAreAddresses,
  dataProtectionKeysAreStrong,
  dataProtectionKeyStoreIsUsable,
  applicationDiscriminatorIsShort,
  publicOriginIsAnOrigin,
  allowedHostsArePatterns,
  headersTimeoutWithinRequestTimeout,
  absoluteLifetimeCoversIdleLifetime,
  stateStoreSettings,
  telemetrySettings
]

export function applyRules (context: RuleContext): ConfigurationProblem[] {
  return RULES.flatMap((rule) => rule(context))
}
