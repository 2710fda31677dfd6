/**
 * The startup rules of an OpenID Connect provider's settings (auth-contract.md,
 * "Providers:OpenIdConnect", and the named schemes of Type OpenIdConnect), for one enabled
 * instance: the contract section, a named scheme, or a definition from the provider source.
 * Each problem names the full colon path and never a configured value.
 */
import { checkEndpointUrl, isMissing, problem, requiredKeys, type ProviderSettingsRule } from '../config/rules.js'
import { keyOfInstance } from '../config/provider-instances.js'

export const openIdConnectSettingsRule: ProviderSettingsRule<'OpenIdConnect'> = (instance, environmentName) => {
  const oidc = instance.settings
  const key = (name: string): string => keyOfInstance(instance, name)
  const problems = requiredKeys(instance, { Authority: oidc.Authority, ClientId: oidc.ClientId, ClientSecret: oidc.ClientSecret })
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
}
