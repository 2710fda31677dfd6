/**
 * Client-credentials tokens (RFC 6749 section 4.4) for the app acting as itself towards one
 * downstream API, through openid-client's `clientCredentialsGrant`. The client authenticates with
 * its secret (client_secret_basic, client_secret_post) or a signed assertion (private_key_jwt,
 * oidc/client-assertion.ts: RFC 7523, short-lived, unique `jti`, one per request; `aud` the
 * Authority's issuer, or with a TokenEndpoint alone that endpoint).
 *
 * One token per API, kept in memory until shortly before it expires ({@link refreshAtOf}: the
 * lifetime minus a minute, or half of a lifetime shorter than two minutes; 60 s when the server
 * names none), shared by every caller: concurrent callers while no valid token is held wait for
 * one token request (single flight). A failed request is not kept: the next caller asks again
 * (concurrent callers still share one request). The discovery document (Authority) is kept once
 * read; a failed discovery is asked again by the next caller. Every response is read through the
 * bounded reader (http/bounded-fetch.ts) under the API's deadline. No Fastify types; nothing here
 * logs, and the failure carries only safe diagnostics (status, OAuth error code, network code).
 */
import * as client from 'openid-client'
import { CoreError } from '../errors.js'
import type { Secret } from '../config/secret.js'
import { basicAuthorization } from '../http/basic-credentials.js'
import { boundedFetch } from '../http/bounded-fetch.js'
import { privateKeyJwtAuthentication, type ClientAssertionKey } from '../oidc/client-assertion.js'
import { diagnosticsOf, readDiagnostics, type OpenIdConnectDiagnostics } from '../oidc/errors.js'

/** Seconds before a token's expiry at which it is no longer handed out (at most half its lifetime). */
export const TOKEN_EXPIRY_MARGIN_SECONDS = 60
/** Seconds a token is kept when the token response names no `expires_in`. */
export const TOKEN_DEFAULT_LIFETIME_SECONDS = 60

export type ClientAuthenticationMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt'

export interface ClientCredentialsSettings {
  /** Issuer URL whose discovery document names the token endpoint; or {@link tokenEndpoint}. */
  readonly authority?: string
  readonly tokenEndpoint?: string
  readonly clientId: string
  /** Revealed only while the token request is built. */
  readonly clientSecret: Secret
  readonly method: ClientAuthenticationMethod
  /** The parsed keys of private_key_jwt (required with it). */
  readonly clientAssertionKeys?: readonly ClientAssertionKey[]
  readonly scopes: readonly string[]
  /** RFC 8707 `resource`; empty: not sent. */
  readonly resource?: string
  /** `audience` (Auth0); empty: not sent. */
  readonly audience?: string
  /** DANGEROUS: http to the server; only for a loopback host in Development (startup rules refuse it elsewhere). */
  readonly allowInsecureRequests: boolean
  readonly timeoutMs: number
}

/**
 * Why no token was obtained: `discovery` (the Authority's document could not be read or used),
 * `invalid_client` (the server refused the client's authentication), `refused` (another OAuth
 * error, such as invalid_scope or invalid_target), `unavailable` (network, deadline, a response
 * over its cap or unusable).
 */
export type ClientCredentialsFailure = 'discovery' | 'invalid_client' | 'refused' | 'unavailable'

export class ClientCredentialsError extends CoreError {
  readonly failure: ClientCredentialsFailure
  /** Safe log fields: `httpStatus`, `oauthError`, `causeCode`, `responseKind`, `responseLimitBytes`. */
  readonly diagnostics: OpenIdConnectDiagnostics

  constructor (failure: ClientCredentialsFailure, diagnostics: OpenIdConnectDiagnostics) {
    // The library error is not kept as the cause: it may hold the token endpoint's answer.
    super(`Client-credentials token request failed (${failure})`)
    this.name = 'ClientCredentialsError'
    this.failure = failure
    this.diagnostics = diagnostics
  }
}

/** Milliseconds since the epoch after which a token issued at `nowMs` with `expiresIn` seconds is asked for again. */
export function refreshAtOf (nowMs: number, expiresIn: number | undefined): number {
  if (expiresIn === undefined || !Number.isFinite(expiresIn) || expiresIn <= 0) return nowMs + TOKEN_DEFAULT_LIFETIME_SECONDS * 1000
  const margin = Math.min(TOKEN_EXPIRY_MARGIN_SECONDS, expiresIn / 2)
  return nowMs + (expiresIn - margin) * 1000
}

function clientAuthentication (settings: ClientCredentialsSettings): client.ClientAuth {
  if (settings.method === 'private_key_jwt') {
    if (settings.clientAssertionKeys === undefined || settings.clientAssertionKeys.length === 0) throw new TypeError('private_key_jwt needs clientAssertionKeys')
    // The audience: the issuer the Authority's discovery names (checked equal to it); with a
    // TokenEndpoint alone there is no issuer to name, and the configured endpoint is the one called.
    return privateKeyJwtAuthentication(settings.clientAssertionKeys, settings.authority !== undefined && settings.authority !== '' ? 'Issuer' : 'Endpoint')
  }
  if (settings.method === 'client_secret_post') {
    return (as, metadata, body, headers) => { client.ClientSecretPost(settings.clientSecret.reveal())(as, metadata, body, headers) }
  }
  // Basic credentials encoded as the OpenID Connect handler encodes them (http/basic-credentials.ts).
  return (_as, metadata, _body, headers) => { headers.set('authorization', basicAuthorization(metadata.client_id, settings.clientSecret.reveal())) }
}

async function configurationOf (settings: ClientCredentialsSettings): Promise<client.Configuration> {
  const execute = settings.allowInsecureRequests ? [client.allowInsecureRequests] : []
  const timeout = Math.ceil(settings.timeoutMs / 1000)
  let config: client.Configuration
  if (settings.authority !== undefined && settings.authority !== '') {
    try {
      config = await client.discovery(new URL(settings.authority), settings.clientId, {}, clientAuthentication(settings),
        { execute, timeout, [client.customFetch]: boundedFetch('discovery', settings.timeoutMs) })
    } catch (error) {
      throw new ClientCredentialsError('discovery', diagnosticsOf(error))
    }
    if (config.serverMetadata().token_endpoint === undefined) throw new ClientCredentialsError('discovery', {})
  } else {
    const endpoint = new URL(settings.tokenEndpoint ?? '')
    config = new client.Configuration({ issuer: endpoint.origin, token_endpoint: endpoint.href }, settings.clientId, {}, clientAuthentication(settings))
    for (const option of execute) option(config)
    config.timeout = timeout
  }
  config[client.customFetch] = boundedFetch('token', settings.timeoutMs)
  return config
}

async function requestToken (config: client.Configuration, settings: ClientCredentialsSettings): Promise<{ token: string, expiresIn: number | undefined }> {
  const parameters: Record<string, string> = {}
  if (settings.scopes.length > 0) parameters.scope = settings.scopes.join(' ')
  if (settings.resource !== undefined && settings.resource !== '') parameters.resource = settings.resource
  if (settings.audience !== undefined && settings.audience !== '') parameters.audience = settings.audience
  try {
    const response = await client.clientCredentialsGrant(config, parameters)
    return { token: response.access_token, expiresIn: response.expiresIn() }
  } catch (error) {
    const diagnostics = await readDiagnostics(error)
    const oauthError = diagnostics.oauthError
    const failure: ClientCredentialsFailure = oauthError === 'invalid_client' || oauthError === 'unauthorized_client' ? 'invalid_client' : oauthError !== undefined ? 'refused' : 'unavailable'
    throw new ClientCredentialsError(failure, diagnostics)
  }
}

/** The client-credentials token of one API: cached, single flight. */
export class ClientCredentialsTokens {
  readonly #settings: ClientCredentialsSettings
  readonly #nowMs: () => number
  #config: Promise<client.Configuration> | undefined
  #cached: { readonly token: string, readonly refreshAtMs: number } | undefined
  #pending: Promise<string> | undefined
  /** Token requests made (sent to the server), for the single-flight tests and metrics. */
  requests = 0

  constructor (settings: ClientCredentialsSettings, nowMs: () => number = Date.now) {
    this.#settings = settings
    this.#nowMs = nowMs
  }

  /** A token valid for a while yet: the cached one, or the one the request in flight brings, or a new one. Throws {@link ClientCredentialsError}. */
  async token (): Promise<string> {
    const cached = this.#cached
    if (cached !== undefined && this.#nowMs() < cached.refreshAtMs) return cached.token
    this.#pending ??= this.#fetch().finally(() => { this.#pending = undefined })
    return await this.#pending
  }

  /** Forgets `token` (the API refused it with 401) unless a newer one replaced it already. */
  invalidate (token: string): void {
    if (this.#cached?.token === token) this.#cached = undefined
  }

  async #fetch (): Promise<string> {
    this.#config ??= configurationOf(this.#settings)
    let config: client.Configuration
    try {
      config = await this.#config
    } catch (error) {
      this.#config = undefined
      throw error
    }
    this.requests++
    const { token, expiresIn } = await requestToken(config, this.#settings)
    this.#cached = { token, refreshAtMs: refreshAtOf(this.#nowMs(), expiresIn) }
    return token
  }
}
