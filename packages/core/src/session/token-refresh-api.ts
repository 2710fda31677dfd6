/**
 * A signed-in user's access token for one API (issue 40 item 10), without Fastify types: asked for
 * at the provider with the session's refresh token and the API's `resource` (RFC 8707 section
 * 2.2), `scope` or `audience`, and kept with the session's saved tokens (`api:<name>:access_token`,
 * `api:<name>:expires_at`) until a minute before it expires. The sign-in's own access token is
 * left as it is.
 *
 * One refresh-token use per session at a time, across instances: the same lock record as the
 * sign-in token's refresh (token-refresh-runner.ts), since a rotating refresh token redeemed twice
 * is a replay the provider answers by revoking the grant. A rotated refresh token replaces the
 * session's. A refused request does not end the session (the provider may only refuse this API,
 * for example for want of consent), except a new ID token naming another subject.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { AuthenticationTicket } from './claims.js'
import { tokenRefreshLockKey } from '../state/keys.js'
import { expiresSoon, TOKEN_REFRESH_LOCK_SECONDS, TokenRefreshError, type RefreshLog, type SessionTokenRefreshOptions, type TokenRefresher } from './token-refresh.js'

/**
 * What to ask the provider for: the API's name (the key its token is kept under) and the
 * request's parameters (`app.session.accessTokenFor`).
 * @public @experimental
 */
export interface ApiTokenRequest {
  /** `DownstreamApis:<Name>`'s name (letters, digits, - and _). */
  readonly name: string
  /** RFC 8707 `resource`; empty or absent: not sent. */
  readonly resource?: string
  /** `scope`; empty or absent: not sent (the provider grants what the sign-in granted). */
  readonly scopes?: readonly string[]
  /** `audience` (Auth0); empty or absent: not sent. */
  readonly audience?: string
}

/** The outcome for every caller waiting on one request. */
export type ApiTokenOutcome =
  | { readonly ended: true }
  | { readonly accessToken: string | undefined, readonly ticket?: AuthenticationTicket, readonly failure?: TokenRefreshError }

/** The keys the API's token and its expiry are kept under in the session's saved tokens. */
export function apiTokenKeys (name: string): { readonly accessToken: string, readonly expiresAt: string } {
  return { accessToken: `api:${name}:access_token`, expiresAt: `api:${name}:expires_at` }
}

/** The token kept for the API while it is usable for a minute yet and is not `rejected`. */
export function keptApiToken (tokens: Readonly<Record<string, string>>, name: string, nowSeconds: number, rejected?: string): string | undefined {
  const keys = apiTokenKeys(name)
  const token = tokens[keys.accessToken]
  if (token === undefined || token === rejected) return undefined
  const expiresAt = tokens[keys.expiresAt]
  return expiresSoon(expiresAt === undefined ? {} : { expires_at: expiresAt }, nowSeconds) ? undefined : token
}

/** The token request's parameters. */
export function apiTokenParameters (request: ApiTokenRequest): Record<string, string> {
  const parameters: Record<string, string> = {}
  if (request.resource !== undefined && request.resource !== '') parameters.resource = request.resource
  if (request.scopes !== undefined && request.scopes.length > 0) parameters.scope = request.scopes.join(' ')
  if (request.audience !== undefined && request.audience !== '') parameters.audience = request.audience
  return parameters
}

/** The session's tokens with the API's new token in, and the refresh token the answer rotated to. */
function withApiToken (tokens: Readonly<Record<string, string>>, name: string, fresh: Readonly<Record<string, string>>): Record<string, string> {
  const keys = apiTokenKeys(name)
  const merged: Record<string, string> = { ...tokens, [keys.accessToken]: fresh.access_token ?? '' }
  if (fresh.expires_at === undefined) delete merged[keys.expiresAt]
  else merged[keys.expiresAt] = fresh.expires_at
  if (fresh.refresh_token !== undefined) merged.refresh_token = fresh.refresh_token
  return merged
}

/** Takes the session's refresh lock, waiting (bounded: 60 tries 200 ms apart) while another holder has it. */
async function takeLock (options: SessionTokenRefreshOptions, lockKey: string): Promise<boolean> {
  for (let attempt = 0; attempt < 60; attempt++) {
    if (await options.state.add(lockKey, '1', TOKEN_REFRESH_LOCK_SECONDS * 1000)) return true
    await sleep(200)
  }
  return false
}

/**
 * The API's token for `ticket`'s session: the kept one unless it expires within a minute or is
 * `rejected`, else a new one from `refresher` with the session's refresh token.
 */
export async function requestApiToken (options: SessionTokenRefreshOptions, ticket: AuthenticationTicket, refresher: TokenRefresher, request: ApiTokenRequest, log: RefreshLog, rejected: string | undefined): Promise<ApiTokenOutcome> {
  const lockKey = tokenRefreshLockKey(ticket.sessionId)
  if (!await takeLock(options, lockKey)) return { accessToken: undefined }
  try {
    const at = options.nowSeconds()
    // Re-read under the lock: another instance may have obtained the token or rotated the refresh token.
    const stored = await options.sessions.load(ticket.sessionId, at)
    if (stored === undefined) return { ended: true }
    const tokens = stored.tokens ?? {}
    const kept = keptApiToken(tokens, request.name, at, rejected)
    if (kept !== undefined) return { accessToken: kept, ticket: stored }
    if (tokens.refresh_token === undefined) return { accessToken: undefined }
    let fresh: Record<string, string>
    try {
      fresh = await refresher(tokens, apiTokenParameters(request))
    } catch (error) {
      const failure = error instanceof TokenRefreshError ? error : new TokenRefreshError('unavailable', {}, { cause: error })
      const endsSession = failure.failure === 'id_token'
      log.warn({ event: 'downstream.token.failed', api: request.name, caller: 'user', failure: failure.failure, endsSession, ...failure.diagnostics }, 'token request for the API with the refresh token failed')
      if (endsSession) {
        await options.sessions.end(stored)
        return { ended: true }
      }
      return { accessToken: undefined, failure }
    }
    const updated = await options.sessions.replaceTokens(stored, withApiToken(tokens, request.name, fresh), at)
    if (updated === undefined) return { ended: true }
    log.info({ event: 'downstream.token.obtained', api: request.name, caller: 'user' }, 'token for the API obtained with the refresh token')
    return { accessToken: fresh.access_token, ticket: updated }
  } finally {
    await options.state.delete([lockKey]).catch(() => { /* it expires by itself */ })
  }
}
