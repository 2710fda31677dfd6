/**
 * Token refresh for a session's stored provider tokens (SaveTokens), across instances: one
 * instance at a time refreshes (a short lock record in the shared store), the others wait,
 * bounded, and read the refreshed tokens from the session record; a refusal that ends the
 * session ends it. Plain data and the state store; `app.session.accessToken` (plugins/session.ts)
 * drives it per request. No Fastify types.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { AuthenticationTicket } from './claims.js'
import { tokenRefreshLockKey } from '../state/keys.js'
import { requestApiToken, type ApiTokenOutcome, type ApiTokenRequest } from './token-refresh-api.js'
import { expiresSoon, mergeRefreshed, TOKEN_REFRESH_LOCK_SECONDS, TokenRefreshError, type RefreshLog, type SessionTokenRefreshOptions, type TokenRefresher, validAccessToken } from './token-refresh.js'

/** What a refresh leads to for every caller waiting on it. */
export type RefreshOutcome = { readonly ended: true } | { readonly accessToken: string | undefined, readonly ticket?: AuthenticationTicket }

/** Refreshes of the sessions of one app: by scheme, the registered refreshers; by session id, the refreshes in progress here. */
export class SessionTokenRefresh {
  readonly refreshers = new Map<string, TokenRefresher>()
  /** Refreshes in progress in this process, by session id: concurrent callers share one. */
  readonly #refreshing = new Map<string, Promise<RefreshOutcome>>()
  /** Per-API token requests in progress in this process, by session id and API name. */
  readonly #requesting = new Map<string, Promise<ApiTokenOutcome>>()
  readonly #options: SessionTokenRefreshOptions

  constructor (options: SessionTokenRefreshOptions) {
    this.#options = options
  }

  /**
   * The refresh of `ticket`'s tokens by `refresher`, shared with any already in progress for the
   * session. `rejected`: the access token an API refused; refreshed while the record still holds
   * it, even when it is not about to expire.
   */
  async refresh (ticket: AuthenticationTicket, refresher: TokenRefresher, log: RefreshLog, rejected?: string): Promise<RefreshOutcome> {
    let pending = this.#refreshing.get(ticket.sessionId)
    if (pending === undefined) {
      pending = refreshSession(this.#options, ticket, refresher, log, rejected).finally(() => { this.#refreshing.delete(ticket.sessionId) })
      this.#refreshing.set(ticket.sessionId, pending)
    }
    return await pending
  }

  /**
   * The token for one API of `ticket`'s session (token-refresh-api.ts), shared with a request
   * for the same session and API already in progress. `rejected`: the API's token the API refused.
   */
  async apiToken (ticket: AuthenticationTicket, refresher: TokenRefresher, request: ApiTokenRequest, log: RefreshLog, rejected?: string): Promise<ApiTokenOutcome> {
    const key = `${ticket.sessionId}\n${request.name}`
    let pending = this.#requesting.get(key)
    if (pending === undefined) {
      pending = requestApiToken(this.#options, ticket, refresher, request, log, rejected).finally(() => { this.#requesting.delete(key) })
      this.#requesting.set(key, pending)
    }
    return await pending
  }
}

/** Another instance holds the refresh lock: wait (bounded) until its tokens are in the record. */
async function awaitOtherRefresh ({ sessions, state, nowSeconds }: SessionTokenRefreshOptions, ticket: AuthenticationTicket, lockKey: string): Promise<RefreshOutcome> {
  const previous = ticket.tokens?.access_token
  for (let attempt = 0; attempt < 60; attempt++) {
    await sleep(200)
    const at = nowSeconds()
    const stored = await sessions.load(ticket.sessionId, at)
    if (stored === undefined) return { ended: true }
    const tokens = stored.tokens ?? {}
    if (tokens.access_token !== undefined && tokens.access_token !== previous) return { accessToken: tokens.access_token, ticket: stored }
    if (await state.get(lockKey) === undefined) {
      // The other instance gave up (it keeps the session): the old token while it is valid.
      return { accessToken: validAccessToken(tokens, at) }
    }
  }
  return { accessToken: undefined }
}

async function refreshSession (options: SessionTokenRefreshOptions, ticket: AuthenticationTicket, refresher: TokenRefresher, log: RefreshLog, rejected: string | undefined): Promise<RefreshOutcome> {
  // One instance at a time: a short lock record in the shared store; the others wait and re-read.
  const lockKey = tokenRefreshLockKey(ticket.sessionId)
  if (!await options.state.add(lockKey, '1', TOKEN_REFRESH_LOCK_SECONDS * 1000)) return await awaitOtherRefresh(options, ticket, lockKey)
  try {
    const at = options.nowSeconds()
    // Another instance may have refreshed just before the lock was free.
    const stored = await options.sessions.load(ticket.sessionId, at)
    if (stored === undefined) return { ended: true }
    const tokens = stored.tokens ?? {}
    if (tokens.access_token !== undefined && tokens.access_token !== rejected && !expiresSoon(tokens, at)) return { accessToken: tokens.access_token, ticket: stored }
    if (tokens.refresh_token === undefined) return { accessToken: tokens.access_token === rejected ? undefined : validAccessToken(tokens, at) }
    let fresh: Record<string, string>
    try {
      fresh = await refresher(tokens)
    } catch (error) {
      const failure = error instanceof TokenRefreshError ? error : new TokenRefreshError('unavailable', {}, { cause: error })
      log.warn({ event: 'session.token_refresh.failed', provider: stored.scheme, failure: failure.failure, endsSession: failure.endsSession, ...failure.diagnostics }, 'provider token refresh failed')
      if (failure.endsSession) {
        await options.sessions.end(stored)
        return { ended: true }
      }
      return { accessToken: tokens.access_token === rejected ? undefined : validAccessToken(tokens, at) }
    }
    const updated = await options.sessions.replaceTokens(stored, mergeRefreshed(tokens, fresh), at)
    if (updated === undefined) return { ended: true }
    log.info({ event: 'session.token_refresh.succeeded', provider: stored.scheme }, 'provider tokens refreshed')
    return { accessToken: updated.tokens?.access_token, ticket: updated }
  } finally {
    await options.state.delete([lockKey]).catch(() => { /* it expires by itself */ })
  }
}
