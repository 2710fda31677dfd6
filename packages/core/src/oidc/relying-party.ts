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
import { privateKeyJwtAuthentication, type ClientAssertionAudience, type ClientAssertionKey } from './client-assertion.js'
import { assertPushedAuthorizationAvailable, pushedAuthorizationEndpointOf, type PushedAuthorization } from './pushed-authorization.js'
import { authorityFitsTemplate, isIssuerTemplate, TenantConfigurationError, type AllowedTenants } from './tenant-issuer.js'
import { registerIssuerConfiguration } from './issuer-configuration.js'
import { EndpointOriginError, IGNORED_OFF_ORIGIN_ENDPOINTS, offOriginEndpoints, SAME_ORIGIN_ENDPOINTS } from './provider-metadata.js'
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
  /**
   * `TokenEndpointAuthMethod`; empty or absent: a secret method chosen from discovery
   * (oidc/client-authentication.ts); `private_key_jwt`: {@link clientAssertionKeys} sign (oidc/client-assertion.ts).
   */
  readonly tokenEndpointAuthMethod?: '' | 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt'
  /** The parsed keys of `private_key_jwt` (required with it, ignored otherwise). */
  readonly clientAssertionKeys?: readonly ClientAssertionKey[]
  /**
   * `ClientAssertionAudience` (default `Issuer`): the `aud` of each assertion (oidc/client-assertion.ts).
   * `Endpoint` only for a configured provider (validation refuses it from the provider source).
   */
  readonly clientAssertionAudience?: ClientAssertionAudience
  /** `PushedAuthorization` (default `Never`): with `Require`, discovery without a PAR endpoint fails. */
  readonly pushedAuthorization?: PushedAuthorization
  /** The colon path of `PushedAuthorization`, named when `Require` cannot be met. */
  readonly pushedAuthorizationSetting?: string
  /** The colon path of `TokenEndpointAuthMethod`, named in the startup notice and a refusal's log line. */
  readonly tokenEndpointAuthMethodSetting?: string
  /** `ClockSkewSeconds`; default {@link CLOCK_TOLERANCE_SECONDS}. */
  readonly clockToleranceSeconds?: number
  /**
   * `AllowedTenants`, read (oidc/tenant-issuer.ts): when non-empty the discovery document may
   * publish a `{tenantid}` issuer template that fits the Authority; when empty such a document is
   * refused naming {@link allowedTenantsSetting}.
   */
  readonly allowedTenants?: AllowedTenants
  /** The colon path of `AllowedTenants`. */
  readonly allowedTenantsSetting?: string
  /** The colon path of `Authority`, named when a discovered issuer template does not fit it. */
  readonly authoritySetting?: string
  /** A provider from the provider source: its connections (public addresses only outside Development). */
  readonly dispatcher?: Dispatcher
  /**
   * A provider from the provider source: every endpoint its discovery names must be on the
   * issuer's origin ({@link SAME_ORIGIN_ENDPOINTS}: else {@link EndpointOriginError}); an
   * off-origin userinfo endpoint is not used, and {@link onEndpointIgnored} is told.
   */
  readonly sameOriginEndpoints?: boolean
  /** Called with the member of each endpoint left unused because it is off the issuer's origin (for a log line). */
  readonly onEndpointIgnored?: (endpoint: string) => void
}

/**
 * Client authentication at the token endpoint (and the PAR endpoint): with `private_key_jwt` a
 * fresh signed assertion per request (oidc/client-assertion.ts); otherwise the client secret,
 * revealed at the moment the request is built, by the method oidc/client-authentication.ts
 * chooses (the configured one, else client_secret_post when the provider supports only that or
 * when the Basic encoding would change the id or secret, else client_secret_basic). Basic
 * credentials are encoded here, not by openid-client's `ClientSecretBasic`, which percent-encodes
 * `-`, `.`, `_` and `~` too (http/basic-credentials.ts).
 */
function clientAuthentication (settings: OpenIdConnectSettings): client.ClientAuth {
  if (settings.tokenEndpointAuthMethod === 'private_key_jwt') {
    if (settings.clientAssertionKeys === undefined || settings.clientAssertionKeys.length === 0) throw new TypeError('private_key_jwt needs clientAssertionKeys')
    return privateKeyJwtAuthentication(settings.clientAssertionKeys, settings.clientAssertionAudience ?? 'Issuer')
  }
  const method = settings.tokenEndpointAuthMethod
  return (as, metadata, body, headers) => {
    const secret = settings.clientSecret.reveal()
    const chosen = chooseClientAuthentication(method, as.token_endpoint_auth_methods_supported, { clientId: settings.clientId, clientSecret: secret }).method
    if (chosen === 'client_secret_post') {
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
  // RFC 9126 section 2.2: a request_uri and its lifetime, like a token response.
  add(pushedAuthorizationEndpointOf(metadata), 'token')
  return (url) => kinds.get(url) ?? kinds.get(url.split('?', 1)[0]!) ?? 'other'
}

/** openid-client's refusal of a discovery document whose issuer is a `{tenantid}` template. */
function isTemplateIssuerMismatch (error: unknown): boolean {
  const cause = error as { code?: unknown, cause?: { attribute?: unknown, body?: { issuer?: unknown } } } | null
  return cause?.code === 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED' && cause.cause?.attribute === 'issuer' &&
    typeof cause.cause.body?.issuer === 'string' && isIssuerTemplate(cause.cause.body.issuer)
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
  const clientMetadata = {
    id_token_signed_response_alg: settings.idTokenSignedResponseAlg,
    [client.clockTolerance]: settings.clockToleranceSeconds ?? CLOCK_TOLERANCE_SECONDS
  }
  const multiTenant = settings.allowedTenants !== undefined && settings.allowedTenants.size > 0
  let config: client.Configuration
  try {
    // With AllowedTenants the document is fetched from its own URL, where openid-client does not
    // compare the issuer with the Authority: a template never equals it; checked below instead.
    config = await client.discovery(
      new URL(multiTenant ? discoveryUrlOf(settings.authority) : settings.authority),
      settings.clientId,
      clientMetadata,
      clientAuthentication(settings),
      { execute, timeout: settings.timeoutSeconds ?? OUTBOUND_TIMEOUT_SECONDS, [client.customFetch]: boundedFetch('discovery', timeoutMs, settings.dispatcher) }
    )
  } catch (error) {
    if (isTemplateIssuerMismatch(error)) throw new TenantConfigurationError('ALLOWED_TENANTS_REQUIRED', settings.allowedTenantsSetting ?? 'AllowedTenants')
    throw error
  }
  const issuer = config.serverMetadata().issuer
  if (isIssuerTemplate(issuer) && !multiTenant) throw new TenantConfigurationError('ALLOWED_TENANTS_REQUIRED', settings.allowedTenantsSetting ?? 'AllowedTenants')
  if (multiTenant && (isIssuerTemplate(issuer) ? !authorityFitsTemplate(settings.authority, issuer) : new URL(issuer).href !== new URL(settings.authority).href)) {
    throw new TenantConfigurationError('ISSUER_TEMPLATE_MISMATCH', settings.authoritySetting ?? 'Authority')
  }
  // The same client (metadata, authentication, transport rules) for other server metadata.
  const configurationOf = (metadata: client.ServerMetadata, fetch: client.CustomFetch): client.Configuration => {
    const built = new client.Configuration(metadata, settings.clientId, clientMetadata, clientAuthentication(settings))
    if (settings.allowInsecureRequests) client.allowInsecureRequests(built)
    built.timeout = settings.timeoutSeconds ?? OUTBOUND_TIMEOUT_SECONDS
    built[client.customFetch] = fetch
    return built
  }
  // JSON round trip: the document's members only, without openid-client's helper methods.
  const documentOf = (): client.ServerMetadata => JSON.parse(JSON.stringify(config.serverMetadata())) as client.ServerMetadata
  if (settings.sameOriginEndpoints === true) {
    const document = documentOf()
    const refused = offOriginEndpoints(document, SAME_ORIGIN_ENDPOINTS)
    if (refused.length > 0) throw new EndpointOriginError(refused[0]!)
    const ignored = offOriginEndpoints(document, IGNORED_OFF_ORIGIN_ENDPOINTS)
    if (ignored.length > 0) {
      for (const member of ignored) delete (document as Record<string, unknown>)[member]
      config = configurationOf(document, boundedFetch('discovery', timeoutMs, settings.dispatcher))
      for (const member of ignored) settings.onEndpointIgnored?.(member)
    }
  }
  config[client.customFetch] = boundedFetch(outboundKindOf(config.serverMetadata()), timeoutMs, settings.dispatcher)
  registerIssuerConfiguration(config, (variantIssuer, fetch) => configurationOf({ ...documentOf(), issuer: variantIssuer }, fetch))
  assertPushedAuthorizationAvailable(settings.pushedAuthorization ?? 'Never', config.serverMetadata(), settings.pushedAuthorizationSetting ?? 'PushedAuthorization')
  const method = settings.tokenEndpointAuthMethod
  if (method !== 'private_key_jwt') {
    rememberClientAuthentication(config, chooseClientAuthentication(method, config.serverMetadata().token_endpoint_auth_methods_supported,
      { clientId: settings.clientId, clientSecret: settings.clientSecret.reveal() }), settings.tokenEndpointAuthMethodSetting ?? 'TokenEndpointAuthMethod')
  }
  return config
}

export * from './errors.js'
export * from './authorization-request.js'
export * from './callback.js'
export * from './refresh.js'
export * from './provider-metadata.js'
export * from './pushed-authorization.js'
export * from './client-assertion.js'
export * from './tenant-issuer.js'
export * from './step-up.js'
