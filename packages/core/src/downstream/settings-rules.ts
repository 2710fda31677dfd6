/**
 * Startup rules of `DownstreamApis:<Name>` (issue 35 item 7), one small function per concern. Each
 * problem names the full colon path and never a configured value (no secret, no key).
 */
import { checkEndpointUrl, isMissing, problem } from '../config/rules.js'
import type { ConfigurationProblem } from '../config/bind.js'
import type { DownstreamApiConfiguration } from '../config/schema.js'
import type { ApplicationConfiguration, ApplicationRule } from '../providers/application-schema.js'
import { enabledProviderInstancesUnder } from '../providers/provider-instances.js'
import { ClientAssertionKeyError, readClientAssertionKeys } from '../oidc/client-assertion.js'
import { resourceIndicatorProblems } from '../oidc/settings-rules.js'

type Key = (name: string) => string

/** BaseUrl: an absolute https URL (http on loopback in Development) without user information, query or fragment. */
function baseUrlProblems (section: DownstreamApiConfiguration, key: Key, environmentName: string): ConfigurationProblem[] {
  if (isMissing(section.BaseUrl)) return [problem(key('BaseUrl'), `${key('BaseUrl')} is required: the API's absolute https URL.`)]
  const problems = checkEndpointUrl(section.BaseUrl, key('BaseUrl'), environmentName)
  if (problems.length > 0) return problems
  const url = new URL(section.BaseUrl)
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || section.BaseUrl.includes('?') || section.BaseUrl.includes('#')) {
    return [problem(key('BaseUrl'), `${key('BaseUrl')} must have no user information, query or fragment; calls add their own path and query.`)]
  }
  return []
}

/** UserToken:Scheme names an enabled OpenID Connect scheme that saves its tokens and requests the API's Scopes (and Resource). */
function userTokenProblems (config: ApplicationConfiguration, section: DownstreamApiConfiguration, key: Key, rootKey: string): ConfigurationProblem[] {
  const scheme = section.UserToken.Scheme.trim()
  if (scheme === '') {
    const { Resource, Scopes, Audience } = section.UserToken
    return Resource === '' && Scopes.length === 0 && Audience === ''
      ? []
      : [problem(key('UserToken:Scheme'), `${key('UserToken:Scheme')} is required when ${key('UserToken')} sets Resource, Scopes or Audience.`)]
  }
  const instance = enabledProviderInstancesUnder(config, rootKey).find((candidate) => candidate.scheme === scheme)
  if (instance === undefined || instance.protocol !== 'OpenIdConnect') {
    return [problem(key('UserToken:Scheme'), `${key('UserToken:Scheme')} must name an enabled OpenID Connect scheme (Providers:OpenIdConnect or Authentication:Schemes:<Name>).`)]
  }
  if (!instance.settings.SaveTokens) {
    return [problem(key('UserToken:Scheme'), `${key('UserToken:Scheme')} names ${scheme}, whose SaveTokens is false; set ${instance.keyPrefix}:SaveTokens to true so that its access token is kept for API calls.`)]
  }
  const missing = section.Scopes.filter((scope) => !instance.settings.Scopes.includes(scope))
  return [
    ...(missing.length === 0
      ? []
      : [problem(key('Scopes'), `${key('Scopes')} lists scopes that ${instance.keyPrefix}:Scopes does not request at sign-in (${missing.join(', ')}); the saved access token would not carry them.`)]),
    ...userTokenResourceProblems(section.UserToken.Resource, instance.settings.Resources, instance.keyPrefix, key)
  ]
}

/** UserToken:Resource: a resource indicator the sign-in asked for (RFC 8707 section 2.1), so that the refresh token covers it. */
function userTokenResourceProblems (resource: string, signInResources: readonly string[], schemeKey: string, key: Key): ConfigurationProblem[] {
  if (resource === '') return []
  const problems = resourceIndicatorProblems(resource, key('UserToken:Resource'))
  if (problems.length > 0) return problems
  return signInResources.includes(resource)
    ? []
    : [problem(key('UserToken:Resource'), `${key('UserToken:Resource')} must be among ${schemeKey}:Resources, so that the sign-in asks for it and its refresh token can be redeemed for this API.`)]
}

/** Whether any key of ClientCredentials is set (then it is meant to be used). */
function clientCredentialsTouched (section: DownstreamApiConfiguration): boolean {
  const settings = section.ClientCredentials
  return !isMissing(settings.ClientId) || !isMissing(settings.Authority) || !isMissing(settings.TokenEndpoint) || !settings.ClientSecret.isEmpty || settings.ClientAssertionKeys.length > 0
}

/** ClientCredentials: ClientId with Authority or TokenEndpoint (one of them), and a secret or private_key_jwt keys. */
function clientCredentialsProblems (section: DownstreamApiConfiguration, key: Key, environmentName: string): ConfigurationProblem[] {
  const settings = section.ClientCredentials
  const k = (name: string): string => key(`ClientCredentials:${name}`)
  if (isMissing(settings.ClientId)) {
    return clientCredentialsTouched(section) ? [problem(k('ClientId'), `${k('ClientId')} is required when ${key('ClientCredentials')} is configured.`)] : []
  }
  const problems: ConfigurationProblem[] = []
  const authority = !isMissing(settings.Authority)
  const endpoint = !isMissing(settings.TokenEndpoint)
  if (authority === endpoint) {
    problems.push(problem(k('Authority'), `${k('Authority')} or ${k('TokenEndpoint')} is required, not both.`))
  } else {
    problems.push(...(authority ? checkEndpointUrl(settings.Authority, k('Authority'), environmentName) : checkEndpointUrl(settings.TokenEndpoint, k('TokenEndpoint'), environmentName)))
  }
  if (settings.TokenEndpointAuthMethod === 'private_key_jwt') {
    try {
      readClientAssertionKeys(settings.ClientAssertionKeys.map((entry) => entry.reveal()), settings.ClientAssertionCertificates,
        { keys: k('ClientAssertionKeys'), certificates: k('ClientAssertionCertificates') })
    } catch (error) {
      if (!(error instanceof ClientAssertionKeyError)) throw error
      problems.push(problem(error.setting, error.message))
    }
  } else if (isMissing(settings.ClientSecret)) {
    problems.push(problem(k('ClientSecret'), `${k('ClientSecret')} is required with ${k('TokenEndpointAuthMethod')} ${settings.TokenEndpointAuthMethod} (or set it to private_key_jwt with ${k('ClientAssertionKeys')}).`))
  }
  return problems
}

/** Every `DownstreamApis:<Name>`: a BaseUrl, and at least one way to get a token, each complete. */
export const downstreamApiSettings: ApplicationRule = ({ config, environmentName, rootKey }) =>
  Object.entries(config.DownstreamApis).flatMap(([name, section]) => {
    const key: Key = (child) => `${rootKey}:DownstreamApis:${name}:${child}`
    const problems = [
      ...baseUrlProblems(section, key, environmentName),
      ...userTokenProblems(config, section, key, rootKey),
      ...clientCredentialsProblems(section, key, environmentName)
    ]
    if (section.UserToken.Scheme.trim() === '' && !clientCredentialsTouched(section)) {
      problems.push(problem(`${rootKey}:DownstreamApis:${name}`, `${rootKey}:DownstreamApis:${name} needs UserToken:Scheme (calls as the signed-in user) or ClientCredentials (calls as the app), or both.`))
    }
    return problems
  })
