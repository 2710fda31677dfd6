/**
 * The configured downstream APIs (`DownstreamApis:<Name>`, issue 35 item 7): for each, where calls
 * go (downstream-call.ts) and how its tokens are had: the signed-in user's token from the UserToken
 * scheme, the one saved at sign-in or one asked for this API with the refresh token (the caller
 * supplies it, see plugins/downstream-apis.ts and session/token-refresh-api.ts) and the app's own
 * client-credentials token (client-credentials.ts). Built once from the validated configuration;
 * the startup rules (settings-rules.ts) have already refused what would fail here. No Fastify types.
 */
import type { CoreConfiguration, DownstreamApiConfiguration } from '../config/schema.js'
import { isDevelopmentLoopbackHttp } from '../http/host-trust.js'
import { readClientAssertionKeys } from '../oidc/client-assertion.js'
import { ClientCredentialsError, ClientCredentialsTokens } from './client-credentials.js'
import { callDownstream, type DownstreamLog, type DownstreamRequestInit, type DownstreamTarget, type TokenSource } from './downstream-call.js'
import { DownstreamApiError } from './downstream-error.js'
import type { ApiTokenRequest } from '../session/token-refresh-api.js'

/** One configured API. */
export interface DownstreamApi extends DownstreamTarget {
  /** The OpenID Connect scheme whose user's token is sent; undefined: no user calls. */
  readonly userScheme: string | undefined
  /**
   * The API's own user token (UserToken:Resource, :Scopes or :Audience set): what the refresh
   * token is redeemed for; undefined: the token saved at sign-in is sent.
   */
  readonly userTokenRequest: ApiTokenRequest | undefined
  /** The app's own tokens; undefined: no app calls. */
  readonly clientCredentials: ClientCredentialsTokens | undefined
}

function clientCredentialsOf (section: DownstreamApiConfiguration, keyPrefix: string, environmentName: string, nowMs: () => number): ClientCredentialsTokens | undefined {
  const settings = section.ClientCredentials
  if (settings.ClientId.trim() === '') return undefined
  const endpoint = settings.Authority !== '' ? settings.Authority : settings.TokenEndpoint
  const keys = settings.TokenEndpointAuthMethod === 'private_key_jwt'
    ? readClientAssertionKeys(settings.ClientAssertionKeys.map((entry) => entry.reveal()).join('\n'), settings.ClientAssertionCertificates.join('\n'),
      { keys: `${keyPrefix}:ClientCredentials:ClientAssertionKeys`, certificates: `${keyPrefix}:ClientCredentials:ClientAssertionCertificates` })
    : undefined
  return new ClientCredentialsTokens({
    ...(settings.Authority !== '' ? { authority: settings.Authority } : { tokenEndpoint: settings.TokenEndpoint }),
    clientId: settings.ClientId,
    clientSecret: settings.ClientSecret,
    method: settings.TokenEndpointAuthMethod,
    ...(keys === undefined ? {} : { clientAssertionKeys: keys }),
    scopes: settings.Scopes.length > 0 ? settings.Scopes : section.Scopes,
    resource: settings.Resource,
    audience: settings.Audience,
    allowInsecureRequests: isDevelopmentLoopbackHttp(new URL(endpoint), environmentName),
    timeoutMs: section.TimeoutSeconds * 1000
  }, nowMs)
}

/** UserToken:Resource, :Scopes and :Audience, when any is set: the request for the API's own user token. */
function userTokenRequestOf (name: string, section: DownstreamApiConfiguration): ApiTokenRequest | undefined {
  const { Resource, Scopes, Audience } = section.UserToken
  if (Resource === '' && Scopes.length === 0 && Audience === '') return undefined
  return { name, resource: Resource, scopes: Scopes, audience: Audience }
}

/** The APIs of `config`, by name. */
export function downstreamApisOf (config: CoreConfiguration, rootKey: string, environmentName: string, nowMs: () => number = Date.now): ReadonlyMap<string, DownstreamApi> {
  const apis = new Map<string, DownstreamApi>()
  for (const [name, section] of Object.entries(config.DownstreamApis)) {
    const keyPrefix = `${rootKey}:DownstreamApis:${name}`
    apis.set(name, {
      name,
      baseUrl: new URL(section.BaseUrl),
      timeoutMs: section.TimeoutSeconds * 1000,
      maxResponseBytes: section.MaxResponseBytes,
      userScheme: section.UserToken.Scheme.trim() === '' ? undefined : section.UserToken.Scheme,
      userTokenRequest: userTokenRequestOf(name, section),
      clientCredentials: clientCredentialsOf(section, keyPrefix, environmentName, nowMs)
    })
  }
  return apis
}

/** The API `name`, or the refusal of a call to an API that is not configured. */
export function apiNamed (apis: ReadonlyMap<string, DownstreamApi>, name: string, log: DownstreamLog): DownstreamApi {
  const api = apis.get(name)
  if (api !== undefined) return api
  log.warn({ event: 'downstream.call.failed', api: name, failure: 'invalid_target' }, 'downstream API call refused: no such API is configured')
  throw new DownstreamApiError(name, 'invalid_target')
}

/** The app's own token source of `api`: its client-credentials token, a newer one after a 401. */
export function appTokenSource (api: DownstreamApi, log: DownstreamLog): TokenSource {
  const tokens = api.clientCredentials
  return async (rejected) => {
    if (tokens === undefined) {
      log.warn({ event: 'downstream.call.failed', api: api.name, caller: 'app', failure: 'invalid_target' }, 'downstream API call refused: the API has no ClientCredentials')
      throw new DownstreamApiError(api.name, 'invalid_target')
    }
    if (rejected !== undefined) tokens.invalidate(rejected)
    try {
      return await tokens.token()
    } catch (error) {
      if (!(error instanceof ClientCredentialsError)) throw error
      log.warn({ event: 'downstream.token.failed', api: api.name, failure: error.failure, ...error.diagnostics }, 'client-credentials token request failed')
      throw new DownstreamApiError(api.name, 'token_unavailable')
    }
  }
}

/** Calls `path` of `api` as the app (client credentials). */
export async function callAsApp (api: DownstreamApi, path: string, init: DownstreamRequestInit, log: DownstreamLog): Promise<Response> {
  return await callDownstream(api, path, init, appTokenSource(api, log), 'app', log)
}
