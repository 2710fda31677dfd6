/**
 * Cross-key startup rules, one small named function each; read them as a list in {@link RULES}.
 * Each returns sentences that name the full colon path and never a configured value.
 */
import type { ConfigurationProblem } from './bind.js'
import { PROVIDER_NAMES, ROOT_KEY, type ApplicationConfiguration, type ProviderName } from './schema.js'
import type { Secret } from './secret.js'

export interface RuleContext {
  readonly config: ApplicationConfiguration
  readonly environmentName: string
}

type Rule = (context: RuleContext) => ConfigurationProblem[]

const AUTH = `${ROOT_KEY}:Authentication`
const AUTHZ = `${ROOT_KEY}:Authorization`
const providerKey = (name: ProviderName, key: string): string => `${AUTH}:Providers:${name}:${key}`
const problem = (key: string, message: string): ConfigurationProblem => ({ key, message })

/**
 * Paths and path areas the application's own routes own. A provider callback may not be one of
 * them or lie below one of the areas.
 */
export const RESERVED_PATHS: readonly string[] = ['/', '/favicon.ico', '/Saml2/Metadata']
export const RESERVED_AREAS: readonly string[] = ['/Account', '/External', '/Home', '/health', '/api', '/css']

/** A value that is empty, whitespace or a `<placeholder>` counts as not configured. */
export function isMissing (value: string | Secret): boolean {
  const text = typeof value === 'string' ? value.trim() : value.isEmpty ? '' : 'set'
  return text === '' || /^<[^>]*>$/.test(text)
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]'])

/** Absolute https URL; http is accepted only for a loopback host in Development. */
export function checkEndpointUrl (value: string, key: string, environmentName: string): ConfigurationProblem[] {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return [problem(key, `${key} must be an absolute https URL.`)]
  }
  if (url.protocol === 'https:') return []
  if (url.protocol === 'http:' && environmentName === 'Development' && LOOPBACK_HOSTS.has(url.hostname)) return []
  return [problem(key, `${key} must be an absolute https URL (http is allowed only for a loopback host in Development).`)]
}

function enabledProviders (config: ApplicationConfiguration): ProviderName[] {
  return PROVIDER_NAMES.filter((name) => config.Authentication.Providers[name].Enabled)
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
    : enabledProviders(config).map((name) => problem(providerKey(name, 'Enabled'), `${providerKey(name, 'Enabled')} is true while ${AUTH}:Enabled is false; a provider needs application authentication.`))

export const defaultSchemes: Rule = ({ config }) => {
  const auth = config.Authentication
  const problems: ConfigurationProblem[] = []
  if (auth.DefaultScheme !== 'Cookies') problems.push(problem(`${AUTH}:DefaultScheme`, `${AUTH}:DefaultScheme must be Cookies.`))
  if (auth.DefaultSignInScheme !== 'Cookies') problems.push(problem(`${AUTH}:DefaultSignInScheme`, `${AUTH}:DefaultSignInScheme must be Cookies.`))
  const allowed = ['Cookies', ...enabledProviders(config)]
  if (!allowed.includes(auth.DefaultChallengeScheme)) {
    problems.push(problem(`${AUTH}:DefaultChallengeScheme`, `${AUTH}:DefaultChallengeScheme must be Cookies or the scheme of an enabled provider (${allowed.join(', ')}).`))
  }
  return problems
}

export const insecureCookieOnlyInDevelopment: Rule = ({ config, environmentName }) =>
  config.Authentication.Cookie.AllowInsecureHttp && environmentName !== 'Development'
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
  PROVIDER_NAMES.filter((name) => config.Authentication.Providers[name].Scheme !== name)
    .map((name) => problem(providerKey(name, 'Scheme'), `${providerKey(name, 'Scheme')} must equal the provider name (${name}).`))

function required (name: ProviderName, keys: Record<string, string | Secret>): ConfigurationProblem[] {
  return Object.entries(keys)
    .filter(([, value]) => isMissing(value))
    .map(([key]) => problem(providerKey(name, key), `${providerKey(name, key)} is required when the provider is enabled.`))
}

export const openIdConnectSettings: Rule = ({ config, environmentName }) => {
  const oidc = config.Authentication.Providers.OpenIdConnect
  if (!oidc.Enabled) return []
  const problems = required('OpenIdConnect', { Authority: oidc.Authority, ClientId: oidc.ClientId, ClientSecret: oidc.ClientSecret })
  if (!isMissing(oidc.Authority)) problems.push(...checkEndpointUrl(oidc.Authority, providerKey('OpenIdConnect', 'Authority'), environmentName))
  if (oidc.ResponseType !== 'code') {
    problems.push(problem(providerKey('OpenIdConnect', 'ResponseType'), `${providerKey('OpenIdConnect', 'ResponseType')} must be code (the authorization code flow with PKCE is the only supported response type).`))
  }
  if (!oidc.Scopes.includes('openid')) {
    problems.push(problem(providerKey('OpenIdConnect', 'Scopes'), `${providerKey('OpenIdConnect', 'Scopes')} must include openid.`))
  }
  if (!/^(RS|PS|ES)(256|384|512)$|^EdDSA$|^Ed25519$/.test(oidc.IdTokenSignedResponseAlg)) {
    problems.push(problem(providerKey('OpenIdConnect', 'IdTokenSignedResponseAlg'), `${providerKey('OpenIdConnect', 'IdTokenSignedResponseAlg')} must be an asymmetric JWS algorithm (RS256, PS256, ES256, EdDSA, ...).`))
  }
  return problems
}

export const saml2Settings: Rule = ({ config, environmentName }) => {
  const saml = config.Authentication.Providers.Saml2
  if (!saml.Enabled) return []
  const problems = required('Saml2', { EntityId: saml.EntityId })
  if (saml.LoadMetadata) {
    problems.push(...required('Saml2', { MetadataUrl: saml.MetadataUrl }))
    if (!isMissing(saml.MetadataUrl)) problems.push(...checkEndpointUrl(saml.MetadataUrl, providerKey('Saml2', 'MetadataUrl'), environmentName))
  } else {
    problems.push(...required('Saml2', { IdpEntityId: saml.IdpEntityId, IdpSingleSignOnUrl: saml.IdpSingleSignOnUrl }))
    if (!isMissing(saml.IdpSingleSignOnUrl)) problems.push(...checkEndpointUrl(saml.IdpSingleSignOnUrl, providerKey('Saml2', 'IdpSingleSignOnUrl'), environmentName))
    if (!saml.IdpSigningCertificates.some((value) => !isMissing(value))) {
      problems.push(problem(providerKey('Saml2', 'IdpSigningCertificates'), `${providerKey('Saml2', 'IdpSigningCertificates')} must contain at least one certificate when ${providerKey('Saml2', 'LoadMetadata')} is false.`))
    }
  }
  return problems
}

export const vendorSettings: Rule = ({ config, environmentName }) => {
  const problems: ConfigurationProblem[] = []
  for (const name of ['VendorA', 'VendorB', 'VendorC'] as const) {
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

function callbackPaths (config: ApplicationConfiguration): Array<{ key: string, path: string }> {
  const paths = enabledProviders(config).map((name) => {
    const provider = config.Authentication.Providers[name]
    const pathKey = name === 'Saml2' ? 'ModulePath' : 'CallbackPath'
    return { key: providerKey(name, pathKey), path: 'ModulePath' in provider ? provider.ModulePath : provider.CallbackPath }
  })
  const oidc = config.Authentication.Providers.OpenIdConnect
  if (oidc.Enabled && oidc.SignOutAtProvider) paths.push({ key: providerKey('OpenIdConnect', 'SignedOutCallbackPath'), path: oidc.SignedOutCallbackPath })
  return paths
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

export const dataProtectionKeysAreStrong: Rule = ({ config }) =>
  config.DataProtection.Keys.flatMap((key, index) => {
    const path = `${ROOT_KEY}:DataProtection:Keys:${index}`
    const text = key.reveal().trim()
    const bytes = /^[A-Za-z0-9+/_-]+={0,2}$/.test(text) ? Buffer.from(text, 'base64').length : 0
    return bytes >= 32 ? [] : [problem(path, `${path} must be base64 of at least 32 random bytes.`)]
  })

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
  forwardedHeadersNeedKnownProxies,
  dataProtectionKeysAreStrong
]

export function applyRules (context: RuleContext): ConfigurationProblem[] {
  return RULES.flatMap((rule) => rule(context))
}
