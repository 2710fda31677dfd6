/**
 * The startup rules of a JwtBearer scheme's settings (`Authentication:Schemes:<Name>` with
 * `Type: JwtBearer`; issue 35, item 1 and "Bad input"): Audiences required, where the issuer and
 * its keys come from (Authority, or Issuer and JwksUri: https, http only on loopback in
 * Development), ValidAlgorithms asymmetric only (`none` and the HMAC algorithms refused: a token
 * "signed" with the issuer's public key as an HMAC secret must never verify), ClockSkewSeconds
 * 0-300, MaxTokenLifetimeSeconds 60-604800 (issue 40, item 6). Each problem names the full colon path (`<schemeKey>:<Key>`) and never a configured
 * value. Plain inputs, no Fastify types.
 */
import type { ConfigurationProblem } from '../config/bind.js'
import type { SettingsRule } from '../config/provider-type.js'
import { isDevelopment } from '../environment-name.js'
import { isDevelopmentLoopbackHttp } from '../http/host-trust.js'
import { ClientAssertionKeyError, readClientAssertionKeys } from '../oidc/client-assertion.js'
import type { JwtBearerSettings } from './jwt-bearer-scheme.js'
import { routingSettingsProblems } from './scheme-routing.js'
import type { JwtBearerInstance } from './settings-schema.js'

/** The JWS algorithms a bearer scheme may accept (RFC 7518 section 3.1 and RFC 8037): asymmetric only. */
export const ASYMMETRIC_ALGORITHMS: readonly string[] = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']

const problem = (key: string, message: string): ConfigurationProblem => ({ key, message })
const isMissing = (value: string): boolean => value.trim() === '' || /^<[^>]*>$/.test(value.trim())

function urlProblems (value: string, key: string, environmentName: string): ConfigurationProblem[] {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return [problem(key, `${key} must be an absolute https URL.`)]
  }
  if (url.protocol === 'https:' || isDevelopmentLoopbackHttp(url, environmentName)) return []
  return [problem(key, `${key} must be an absolute https URL (http is allowed only for a loopback host in Development).`)]
}

export function audiencesRequired (settings: JwtBearerSettings, schemeKey: string): ConfigurationProblem[] {
  const key = `${schemeKey}:Audiences`
  return settings.Audiences.some((audience) => !isMissing(audience))
    ? []
    : [problem(key, `${key} is required: list the audience (aud) values this API accepts, such as its App ID URI (Entra ID), api://default (Okta) or the client id (Keycloak).`)]
}

export function issuerSource (settings: JwtBearerSettings, schemeKey: string, environmentName: string): ConfigurationProblem[] {
  const [authority, issuer, jwksUri] = ['Authority', 'Issuer', 'JwksUri'].map((name) => `${schemeKey}:${name}`) as [string, string, string]
  if (!isMissing(settings.Authority)) {
    const both = !isMissing(settings.Issuer) || !isMissing(settings.JwksUri)
    return [
      ...urlProblems(settings.Authority, authority, environmentName),
      ...(both ? [problem(authority, `${authority} and ${issuer} or ${jwksUri} are both set; set Authority (discovery) or Issuer with JwksUri, not both.`)] : [])
    ]
  }
  if (isMissing(settings.Issuer) || isMissing(settings.JwksUri)) {
    return [problem(authority, `${authority} is required, or ${issuer} and ${jwksUri} together.`)]
  }
  return urlProblems(settings.JwksUri, jwksUri, environmentName)
}

export function algorithmsAsymmetric (settings: JwtBearerSettings, schemeKey: string): ConfigurationProblem[] {
  const key = `${schemeKey}:ValidAlgorithms`
  const refused = settings.ValidAlgorithms.filter((algorithm) => !ASYMMETRIC_ALGORITHMS.includes(algorithm))
  return refused.length === 0
    ? []
    : [problem(key, `${key} may list only asymmetric JWS algorithms (${ASYMMETRIC_ALGORITHMS.join(', ')}); none and the HMAC algorithms (HS256, HS384, HS512) are refused.`)]
}

export function clockSkewInRange (settings: JwtBearerSettings, schemeKey: string): ConfigurationProblem[] {
  const key = `${schemeKey}:ClockSkewSeconds`
  return Number.isInteger(settings.ClockSkewSeconds) && settings.ClockSkewSeconds >= 0 && settings.ClockSkewSeconds <= 300
    ? []
    : [problem(key, `${key} must be an integer from 0 to 300.`)]
}

/** Bounds of MaxTokenLifetimeSeconds: a minute to a week. */
export const MAX_TOKEN_LIFETIME_RANGE = { minimum: 60, maximum: 604_800 } as const

export function maxTokenLifetimeInRange (settings: JwtBearerSettings, schemeKey: string): ConfigurationProblem[] {
  const key = `${schemeKey}:MaxTokenLifetimeSeconds`
  const value = settings.MaxTokenLifetimeSeconds
  const { minimum, maximum } = MAX_TOKEN_LIFETIME_RANGE
  return value === undefined || (Number.isInteger(value) && value >= minimum && value <= maximum)
    ? []
    : [problem(key, `${key} must be an integer from ${minimum} to ${maximum}.`)]
}

/**
 * `Introspection` (RFC 7662): off without ClientId (an Endpoint or secret without it is a
 * mistake, named); with it, the endpoint comes from Endpoint or the Authority's discovery, the
 * client authenticates with ClientSecret or readable ClientAssertionKeys, CacheSeconds 0-300.
 */
export function introspectionProblems (settings: JwtBearerSettings, schemeKey: string, environmentName: string): ConfigurationProblem[] {
  const introspection = settings.Introspection
  if (introspection === undefined) return []
  const key = (name: string): string => `${schemeKey}:Introspection:${name}`
  if (isMissing(introspection.ClientId)) {
    const stray = !isMissing(introspection.Endpoint) || !isMissing(introspection.ClientSecret.reveal())
    return stray ? [problem(key('ClientId'), `${key('ClientId')} is required when ${key('Endpoint')} or ${key('ClientSecret')} is set: it turns introspection on.`)] : []
  }
  const problems: ConfigurationProblem[] = []
  if (!isMissing(introspection.Endpoint)) problems.push(...urlProblems(introspection.Endpoint, key('Endpoint'), environmentName))
  else if (isMissing(settings.Authority)) problems.push(problem(key('Endpoint'), `${key('Endpoint')} is required when the scheme has no Authority (no discovery names an introspection_endpoint).`))
  if (introspection.TokenEndpointAuthMethod === 'private_key_jwt') {
    try {
      readClientAssertionKeys(introspection.ClientAssertionKeys.map((entry) => entry.reveal()), introspection.ClientAssertionCertificates, { keys: key('ClientAssertionKeys'), certificates: key('ClientAssertionCertificates') })
    } catch (error) {
      if (!(error instanceof ClientAssertionKeyError)) throw error
      problems.push(problem(error.setting, error.message))
    }
  } else if (isMissing(introspection.ClientSecret.reveal())) {
    problems.push(problem(key('ClientSecret'), `${key('ClientSecret')} is required with ${key('TokenEndpointAuthMethod')} ${introspection.TokenEndpointAuthMethod}.`))
  }
  if (!Number.isInteger(introspection.CacheSeconds) || introspection.CacheSeconds < 0 || introspection.CacheSeconds > 300) {
    problems.push(problem(key('CacheSeconds'), `${key('CacheSeconds')} must be an integer from 0 to 300.`))
  }
  return problems
}

/**
 * `DevelopmentTokens` (dev-tokens/): only in Development, so a token minted on a developer's
 * machine can never authenticate anywhere else, whatever the deployed configuration says.
 */
export function developmentTokensOnlyInDevelopment (settings: JwtBearerSettings, schemeKey: string, environmentName: string): ConfigurationProblem[] {
  const key = `${schemeKey}:DevelopmentTokens`
  return settings.DevelopmentTokens === true && !isDevelopment(environmentName)
    ? [problem(key, `${key} is allowed only in Development: remove it (development tokens are never accepted outside Development).`)]
    : []
}

/** Every problem of one JwtBearer scheme, in the order above. */
export function jwtBearerSettingsProblems (settings: JwtBearerSettings, schemeKey: string, environmentName: string): ConfigurationProblem[] {
  return [
    ...audiencesRequired(settings, schemeKey),
    ...issuerSource(settings, schemeKey, environmentName),
    ...algorithmsAsymmetric(settings, schemeKey),
    ...clockSkewInRange(settings, schemeKey),
    ...maxTokenLifetimeInRange(settings, schemeKey),
    ...introspectionProblems(settings, schemeKey, environmentName),
    ...routingSettingsProblems(settings, schemeKey),
    ...developmentTokensOnlyInDevelopment(settings, schemeKey, environmentName)
  ]
}

/** The rule providers/settings-rules.ts runs for every enabled JwtBearer scheme (configured, or a definition from the provider source). */
export const jwtBearerSettingsRule: SettingsRule<JwtBearerInstance> = (instance, environmentName) =>
  jwtBearerSettingsProblems(instance.settings, instance.keyPrefix, environmentName)
