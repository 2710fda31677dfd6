/**
 * OpenID Connect relying party (auth-contract.md, "Providers:OpenIdConnect"; issue 3), built on
 * openid-client 6 without Fastify types, one file per step: discovery and client authentication
 * (here), the authorization request (authorization-request.ts: code flow, PKCE S256, state,
 * nonce), the callback (callback.ts: token exchange, ID token validation with the signature
 * checked and the algorithm pinned, userinfo merged, claims flattened), token refresh
 * (refresh.ts), the metadata schedule (provider-metadata.ts) and the refusals (errors.ts); this
 * module re-exports them.
 *
 * openid-client's defaults this module changes on purpose:
 * - it skips the ID token signature for tokens from the token endpoint: this module verifies it
 *   with the provider's `jwks_uri` keys (oidc/provider-keys.ts, which refetches the set once when
 *   the `kid` is unknown, so a key rotation without overlap costs no sign-in);
 * - it accepts any algorithm the provider advertises: `id_token_signed_response_alg` pins one;
 * - it does not refuse an `iat` in the future: the clock skew setting does.
 */
import * as client from 'openid-client'
import type { Secret } from '../config/secret.js'
import { chooseClientAuthentication, rememberClientAuthentication } from './client-authentication.js'
import { basicAuthorization } from '../http/basic-credentials.js'
import { boundedFetch, type OutboundResponseKind } from '../http/bounded-fetch.js'
import type { Dispatcher } from '../http/outbound-address.js'

/** Seconds an outbound call (discovery, token, JWKS, userinfo) may take. */
export const OUTBOUND_TIMEOUT_SECONDS = 10
/** Default allowed clock difference for `exp`, `nbf` and `iat` (seconds): `Providers:OpenIdConnect:ClockSkewSeconds`. */
export const CLOCK_TOLERANCE_SECONDS = 60
export interface OpenIdConnectSettings {
  /** Issuer URL (`Authority`). */
  readonly authority: string
  readonly clientId: string
  /** Revealed only inside the token request. */
  readonly clientSecret: Secret
  readonly idTokenSignedResponseAlg: string
  /**
   * DANGEROUS: allows http to the provider. Only for an http Authority on a loopback host in
   * Development (startup validation rejects http anywhere else).
   */
  readonly allowInsecureRequests: boolean
  readonly timeoutSeconds?: number
  /** `TokenEndpointAuthMethod`; empty or absent: chosen from discovery (oidc/client-authentication.ts). */
  readonly tokenEndpointAuthMethod?: '' | 'client_secret_basic' | 'client_secret_post'
  /** The colon path of `TokenEndpointAuthMethod`, named in the startup notice and a refusal's log line. */
  readonly tokenEndpointAuthMethodSetting?: string
  /** `ClockSkewSeconds`; default {@link CLOCK_TOLERANCE_SECONDS}. */
  readonly clockToleranceSeconds?: number
  /** A provider from the provider source: its connections (public addresses only outside Development). */
  readonly dispatcher?: Dispatcher
}

/**
 * Client authentication at the token endpoint with the client secret, revealed at the moment the
 * request is built: the method oidc/client-authentication.ts chooses (the configured one, else
 * client_secret_post when the provider supports only that or when the Basic encoding would change
 * the id or secret, else client_secret_basic). Basic credentials are encoded here, not by
 * openid-client's `ClientSecretBasic`, which percent-encodes `-`, `.`, `_` and `~` too
 * (http/basic-credentials.ts).
 */
function clientSecretAuthentication (settings: OpenIdConnectSettings): client.ClientAuth {
  return (as, metadata, body, headers) => {
    const secret = settings.clientSecret.reveal()
    const { method } = chooseClientAuthentication(settings.tokenEndpointAuthMethod, as.token_endpoint_auth_methods_supported, { clientId: settings.clientId, clientSecret: secret })
    if (method === 'client_secret_post') {
      client.ClientSecretPost(secret)(as, metadata, body, headers)
      return
    }
    headers.set('authorization', basicAuthorization(metadata.client_id, secret))
  }
}

/** The discovery document URL openid-client requests for `authority` (OpenID Connect Discovery 1.0, section 4). */
export function discoveryUrlOf (authority: string): string {
  const url = new URL(authority)
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/.well-known/openid-configuration`
  return url.href
}

/**
 * The kind of an outbound call to the provider, by its URL (http/bounded-fetch.ts caps each kind):
 * the endpoints the discovery document named; anything else has the smallest cap.
 */
export function outboundKindOf (metadata: client.ServerMetadata): (url: string) => OutboundResponseKind {
  const kinds = new Map<string, OutboundResponseKind>()
  const add = (endpoint: string | undefined, kind: OutboundResponseKind): void => { if (endpoint !== undefined) kinds.set(endpoint, kind) }
  add(metadata.token_endpoint, 'token')
  add(metadata.userinfo_endpoint, 'userinfo')
  add(metadata.introspection_endpoint, 'introspection')
  add(metadata.jwks_uri, 'jwks')
  return (url) => kinds.get(url) ?? kinds.get(url.split('?', 1)[0]!) ?? 'other'
}

/**
 * Fetches `<Authority>/.well-known/openid-configuration` and prepares the client. Every call
 * openid-client makes (discovery here; token, user information and refresh later) reads its
 * response through the bounded reader (http/bounded-fetch.ts) under one deadline per call.
 */
export async function discoverProvider (settings: OpenIdConnectSettings): Promise<client.Configuration> {
  // The ID token signature is verified with ProviderKeys, not openid-client's non-repudiation check.
  const execute = settings.allowInsecureRequests ? [client.allowInsecureRequests] : []
  const timeoutMs = (settings.timeoutSeconds ?? OUTBOUND_TIMEOUT_SECONDS) * 1000
  const config = await client.discovery(
    new URL(settings.authority),
    settings.clientId,
    {
      id_token_signed_response_alg: settings.idTokenSignedResponseAlg,
      [client.clockTolerance]: settings.clockToleranceSeconds ?? CLOCK_TOLERANCE_SECONDS
    },
    clientSecretAuthentication(settings),
    { execute, timeout: settings.timeoutSeconds ?? OUTBOUND_TIMEOUT_SECONDS, [client.customFetch]: boundedFetch('discovery', timeoutMs, settings.dispatcher) }
  )
  config[client.customFetch] = boundedFetch(outboundKindOf(config.serverMetadata()), timeoutMs, settings.dispatcher)
  rememberClientAuthentication(config, chooseClientAuthentication(settings.tokenEndpointAuthMethod, config.serverMetadata().token_endpoint_auth_methods_supported,
    { clientId: settings.clientId, clientSecret: settings.clientSecret.reveal() }), settings.tokenEndpointAuthMethodSetting ?? 'TokenEndpointAuthMethod')
  return config
}

export * from './errors.js'
export * from './authorization-request.js'
export * from './callback.js'
export * from './refresh.js'
export * from './provider-metadata.js'
