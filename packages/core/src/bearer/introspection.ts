/**
 * Opaque access tokens through OAuth 2.0 Token Introspection (RFC 7662; issue 35, item 4): a
 * token that is not a JWT is sent to the issuer's introspection endpoint with the scheme's
 * introspection client credentials (client_secret_basic, client_secret_post or private_key_jwt
 * through oidc/client-assertion.ts), read through http/bounded-fetch.ts (64 KB, one deadline).
 *
 * What this module keeps, all in memory and bounded:
 * - identical lookups in flight share one call (single-flight), and at most
 *   {@link MAX_CONCURRENT_INTROSPECTIONS} different ones run at once (more: the endpoint counts as
 *   unavailable, so a flood of garbage tokens cannot open unbounded connections to the issuer);
 * - an inactive answer, for at most {@link INACTIVE_CACHE_MS} and at most
 *   {@link MAX_INACTIVE_ANSWERS} answers, keyed by a hash of the token (never the token), so a
 *   client repeating a revoked token does not make one call per request. Nothing goes to the
 *   shared state store: anonymous garbage cannot grow it.
 * The active answers are cached by the caller (bearer-schemes.ts, the verified-token cache) until
 * {@link activeUntilMs}: the token's `exp` or CacheSeconds from now, whichever comes first.
 *
 * An endpoint that cannot answer (unreachable, timed out, not 200, not a JSON object, over the
 * cap) is `introspection_unavailable`, never a refused token: the API answers 503, not 401, so a
 * client is not told its token is bad when the issuer is down. Plain inputs, no Fastify types.
 */
import { basicAuthorization } from '../http/basic-credentials.js'
import { fetchBounded } from '../http/bounded-fetch.js'
import type { Dispatcher } from '../http/outbound-address.js'
import { CLIENT_ASSERTION_TYPE, signClientAssertion, type ClientAssertionKey } from '../oidc/client-assertion.js'
import { BearerTokenError } from './failures.js'
import { tokenCacheKeyOf } from './token-cache.js'

/** Longest an inactive answer is remembered. */
export const INACTIVE_CACHE_MS = 10_000
/** Most inactive answers remembered at once, per scheme. */
export const MAX_INACTIVE_ANSWERS = 1000
/** Most different introspection calls in flight at once, per scheme. */
export const MAX_CONCURRENT_INTROSPECTIONS = 64

/** @public @experimental */
export type IntrospectionAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt'

/** `Authentication:Schemes:<Name>:Introspection`, as the configuration binds it. @public @experimental */
export interface IntrospectionSettings {
  /** Empty: introspection off. */
  readonly ClientId: string
  readonly ClientSecret: { readonly reveal: () => string }
  /** Empty: discovery's `introspection_endpoint`. */
  readonly Endpoint: string
  readonly TokenEndpointAuthMethod: IntrospectionAuthMethod
  readonly ClientAssertionKeys: ReadonlyArray<{ readonly reveal: () => string }>
  readonly ClientAssertionCertificates: readonly string[]
  readonly CacheSeconds: number
  /** Opaque tokens starting with it are this issuer's (bearer/scheme-routing.ts); empty or absent: none. */
  readonly TokenPrefix?: string
}

/** Whether `settings` turn introspection on. */
export function introspectionEnabled (settings: IntrospectionSettings | undefined): settings is IntrospectionSettings {
  return settings !== undefined && settings.ClientId.trim() !== '' && !/^<[^>]*>$/.test(settings.ClientId.trim())
}

export interface IntrospectionCall {
  readonly endpoint: string
  /** The issuer: the audience of a private_key_jwt assertion (oidc-provider, Keycloak and Okta accept it). */
  readonly issuer: string
}

export interface TokenIntrospectionOptions {
  readonly settings: IntrospectionSettings
  /** Parsed once at startup (settings-rules.ts refuses unreadable keys, naming the key). */
  readonly assertionKeys?: readonly ClientAssertionKey[]
  readonly allowInsecureRequests: boolean
  readonly timeoutMs: number
  readonly dispatcher?: Dispatcher
  readonly now?: () => number
  /** Most inactive answers remembered; default {@link MAX_INACTIVE_ANSWERS} (tests use fewer). */
  readonly maxInactiveAnswers?: number
}

/** The introspection answer of an active token: a JSON object with `active: true`. */
export type ActiveTokenAnswer = Readonly<Record<string, unknown>>

/** Until when an active answer may be reused: the token's `exp` or CacheSeconds from now, whichever comes first. */
export function activeUntilMs (answer: ActiveTokenAnswer, nowMs: number, cacheSeconds: number): number {
  const limit = nowMs + cacheSeconds * 1000
  return typeof answer.exp === 'number' ? Math.min(answer.exp * 1000, limit) : limit
}

export class TokenIntrospection {
  readonly #options: TokenIntrospectionOptions
  readonly #inactiveUntil = new Map<string, number>()
  readonly #inFlight = new Map<string, Promise<ActiveTokenAnswer>>()

  constructor (options: TokenIntrospectionOptions) {
    this.#options = options
  }

  get cacheSeconds (): number {
    return this.#options.settings.CacheSeconds
  }

  #now (): number {
    return this.#options.now?.() ?? Date.now()
  }

  /**
   * The issuer's answer for an active `token`; throws {@link BearerTokenError} `inactive` (the
   * issuer says so, or said so within {@link INACTIVE_CACHE_MS}) or `introspection_unavailable`.
   */
  async introspect (token: string, call: IntrospectionCall): Promise<ActiveTokenAnswer> {
    const key = tokenCacheKeyOf(token)
    const until = this.#inactiveUntil.get(key)
    if (until !== undefined) {
      if (this.#now() < until) throw new BearerTokenError('inactive')
      this.#inactiveUntil.delete(key)
    }
    const pending = this.#inFlight.get(key)
    if (pending !== undefined) return await pending
    if (this.#inFlight.size >= MAX_CONCURRENT_INTROSPECTIONS) throw new BearerTokenError('introspection_unavailable')
    const lookup = this.#ask(token, call).finally(() => { this.#inFlight.delete(key) })
    this.#inFlight.set(key, lookup)
    try {
      return await lookup
    } catch (error) {
      if (error instanceof BearerTokenError && error.failure === 'inactive') this.#rememberInactive(key)
      throw error
    }
  }

  #rememberInactive (key: string): void {
    const ttl = Math.min(INACTIVE_CACHE_MS, this.cacheSeconds * 1000)
    if (ttl <= 0) return
    if (!this.#inactiveUntil.has(key) && this.#inactiveUntil.size >= (this.#options.maxInactiveAnswers ?? MAX_INACTIVE_ANSWERS)) {
      const oldest = this.#inactiveUntil.keys().next().value
      if (oldest !== undefined) this.#inactiveUntil.delete(oldest)
    }
    this.#inactiveUntil.set(key, this.#now() + ttl)
  }

  async #request (token: string, call: IntrospectionCall): Promise<{ headers: Record<string, string>, body: URLSearchParams }> {
    const { settings } = this.#options
    const body = new URLSearchParams({ token, token_type_hint: 'access_token' })
    const headers: Record<string, string> = { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' }
    switch (settings.TokenEndpointAuthMethod) {
      case 'client_secret_post':
        body.set('client_id', settings.ClientId)
        body.set('client_secret', settings.ClientSecret.reveal())
        break
      case 'private_key_jwt':
        body.set('client_id', settings.ClientId)
        body.set('client_assertion_type', CLIENT_ASSERTION_TYPE)
        body.set('client_assertion', await signClientAssertion(this.#options.assertionKeys ?? [], settings.ClientId, call.issuer, this.#now()))
        break
      default:
        headers.authorization = basicAuthorization(settings.ClientId, settings.ClientSecret.reveal())
    }
    return { headers, body }
  }

  async #ask (token: string, call: IntrospectionCall): Promise<ActiveTokenAnswer> {
    let answer: unknown
    try {
      const url = new URL(call.endpoint)
      if (url.protocol !== 'https:' && !(this.#options.allowInsecureRequests && url.protocol === 'http:')) throw new Error('introspection endpoint must be https')
      const { headers, body } = await this.#request(token, call)
      const response = await fetchBounded(url, { method: 'POST', headers, body, redirect: 'error' }, {
        kind: 'introspection',
        timeoutMs: this.#options.timeoutMs,
        ...(this.#options.dispatcher === undefined ? {} : { dispatcher: this.#options.dispatcher })
      })
      if (response.status !== 200) throw new Error(`introspection answered ${response.status}`)
      answer = await response.json()
    } catch (error) {
      throw new BearerTokenError('introspection_unavailable', { cause: error })
    }
    if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) throw new BearerTokenError('introspection_unavailable')
    const active = (answer as { active?: unknown }).active
    if (active !== true) throw new BearerTokenError('inactive')
    return answer as ActiveTokenAnswer
  }
}
