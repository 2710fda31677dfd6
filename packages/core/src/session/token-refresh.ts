/**
 * Provider token refresh (issue 11), without Fastify types: the shape of a provider's refresher,
 * its failure classes, and the rules for when a stored access token needs refreshing and how the
 * refreshed tokens replace the stored ones. The single-flight coordination and the session record
 * update live in plugins/session.ts (`app.session.accessToken`).
 *
 * Stored tokens (the ticket's `tokens`, only with SaveTokens): `access_token`, `refresh_token`,
 * `id_token` (OpenID Connect), `token_type` and `expires_at` (seconds since the epoch, computed
 * from `expires_in` when the token was received). They live only in the sealed server-side session
 * record, never in a cookie or a log.
 */
import { SignInRefusal } from '../errors.js'
import type { StateStore } from '../state/state-store.js'
import type { SessionStore } from './session-store.js'

/** An access token expiring within this many seconds is refreshed before it is handed out. */
export const TOKEN_REFRESH_SKEW_SECONDS = 60
/** How long one instance may hold the refresh lock of a session (longer than one token request). */
export const TOKEN_REFRESH_LOCK_SECONDS = 30

/**
 * Failure classes of a refresh, logged as `failure` (never with a token): `invalid_grant` (the
 * provider refused the refresh token: revoked, expired, reused) and `id_token` (the refreshed ID
 * token is invalid or names another subject) end the session; `unavailable` (network, timeout,
 * any other provider error or unusable answer) keeps it, and the caller gets the old access token
 * while it is still valid, else nothing.
 *
 * @public
 */
export type TokenRefreshFailure = 'invalid_grant' | 'id_token' | 'unavailable'

/** @public */
export interface TokenRefreshDiagnostics {
  readonly httpStatus?: number
  readonly oauthError?: string
  readonly causeCode?: string
}

/** @public */
export class TokenRefreshError extends SignInRefusal<TokenRefreshFailure, TokenRefreshDiagnostics> {
  constructor (failure: TokenRefreshFailure, diagnostics: TokenRefreshDiagnostics = {}, options?: ErrorOptions) {
    super(failure, `Token refresh failed (${failure})`, { ...options, diagnostics })
    this.name = 'TokenRefreshError'
  }

  /** Whether this failure ends the session. */
  get endsSession (): boolean {
    return this.failure === 'invalid_grant' || this.failure === 'id_token'
  }
}

/**
 * Redeems `tokens.refresh_token` at the provider and returns the new tokens (at least
 * `access_token`; `expires_at` when the provider sent `expires_in`; `refresh_token` when it
 * rotated it). Throws {@link TokenRefreshError}. `parameters` (experimental): more token-request
 * parameters, for a token meant for one API (`resource`, RFC 8707; `scope`; `audience`); a
 * refresher that cannot send them throws `unavailable`.
 *
 * @public
 */
export type TokenRefresher = (tokens: Readonly<Record<string, string>>, parameters?: Readonly<Record<string, string>>) => Promise<Record<string, string>>

function expiresAtOf (tokens: Readonly<Record<string, string>>): number | undefined {
  const value = tokens.expires_at
  if (value === undefined || !/^\d{1,12}$/.test(value)) return undefined
  return Number(value)
}

/** True when the access token expires within the skew (a token without `expires_at` never does). */
export function expiresSoon (tokens: Readonly<Record<string, string>>, nowSeconds: number, skewSeconds = TOKEN_REFRESH_SKEW_SECONDS): boolean {
  const expiresAt = expiresAtOf(tokens)
  return expiresAt !== undefined && expiresAt - skewSeconds <= nowSeconds
}

/** The stored access token while it has not expired (or its expiry is unknown); else undefined. */
export function validAccessToken (tokens: Readonly<Record<string, string>>, nowSeconds: number): string | undefined {
  const expiresAt = expiresAtOf(tokens)
  return expiresAt === undefined || expiresAt > nowSeconds ? tokens.access_token : undefined
}

/**
 * The stored tokens after a refresh: the new ones over the old; a refresh token or ID token the
 * provider did not send again is kept (RFC 6749 section 6: the old refresh token stays valid
 * unless a new one is issued); an old `expires_at` is dropped when the answer had no expiry.
 */
export function mergeRefreshed (old: Readonly<Record<string, string>>, fresh: Readonly<Record<string, string>>): Record<string, string> {
  const merged: Record<string, string> = { ...old, ...fresh }
  if (fresh.expires_at === undefined) delete merged.expires_at
  return merged
}

/** The two log levels a refresh writes (pino's, as request.log has them). */
export interface RefreshLog {
  warn: (fields: Record<string, unknown>, message: string) => void
  info: (fields: Record<string, unknown>, message: string) => void
}

export interface SessionTokenRefreshOptions {
  readonly sessions: SessionStore
  readonly state: StateStore
  /** Seconds since the epoch. */
  readonly nowSeconds: () => number
}
