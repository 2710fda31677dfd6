/**
 * The startup rules of an OpenID Connect provider's settings (auth-contract.md,
 * "Providers:OpenIdConnect", and the named schemes of Type OpenIdConnect), for one enabled
 * instance: the contract section, a named scheme, or a definition from the provider source.
 * Each problem names the full colon path and never a configured value.
 */
import { checkEndpointUrl, isMissing, problem, requiredKeys } from '../config/rules.js'
import { keyOfInstance, type SettingsRule } from '../config/provider-type.js'
import type { OpenIdConnectInstance } from './settings-schema.js'
import { ClientAssertionKeyError, readClientAssertionKeys } from './client-assertion.js'
import { isMultiTenantAuthority, readAllowedTenants } from './tenant-issuer.js'

export const openIdConnectSettingsRule: SettingsRule<OpenIdConnectInstance> = (instance, environmentName) => {
  const oidc = instance.settings
  const key = (name: string): string => keyOfInstance(instance, name)
  const privateKeyJwt = oidc.TokenEndpointAuthMethod === 'private_key_jwt'
  // private_key_jwt authenticates with ClientAssertionKeys; the client secret is not used.
  const problems = requiredKeys(instance, { Authority: oidc.Authority, ClientId: oidc.ClientId, ...(privateKeyJwt ? {} : { ClientSecret: oidc.ClientSecret }) })
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
  oidc.Resources.forEach((resource, index) => { problems.push(...resourceIndicatorProblems(resource, `${key('Resources')}:${index}`)) })
  if (privateKeyJwt) problems.push(...clientAssertionKeyProblems(oidc, key))
  if (oidc.AllowedTenants.length === 0 && isMultiTenantAuthority(oidc.Authority)) {
    problems.push(problem(key('AllowedTenants'), `${key('AllowedTenants')} is required with a multi-tenant Authority (common, organizations or consumers): list the tenant ids allowed to sign in.`))
  }
  const tenants = readAllowedTenants(oidc.AllowedTenants)
  if ('problems' in tenants) for (const entry of tenants.problems) problems.push(problem(`${key('AllowedTenants')}:${entry.index}`, `${key('AllowedTenants')}:${entry.index} ${entry.message}`))
  return problems
}

/** An RFC 8707 resource indicator (section 2): an absolute URI without a fragment. */
export function resourceIndicatorProblems (value: string, setting: string): ReturnType<typeof problem>[] {
  let url: URL | undefined
  try { url = new URL(value) } catch { url = undefined }
  return url === undefined || value.includes('#') || value.trim() !== value
    ? [problem(setting, `${setting} must be an absolute URI without a fragment (RFC 8707 resource indicator).`)]
    : []
}

/** `private_key_jwt`: the keys and certificates must parse and match; the problem names the setting, never the key. */
function clientAssertionKeyProblems (oidc: OpenIdConnectInstance['settings'], key: (name: string) => string): ReturnType<typeof problem>[] {
  try {
    readClientAssertionKeys(oidc.ClientAssertionKeys.map((entry) => entry.reveal()), oidc.ClientAssertionCertificates, { keys: key('ClientAssertionKeys'), certificates: key('ClientAssertionCertificates') })
    return []
  } catch (error) {
    if (!(error instanceof ClientAssertionKeyError)) throw error
    return [problem(error.setting, error.message)]
  }
}
