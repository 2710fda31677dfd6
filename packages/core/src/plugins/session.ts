/**
 * The cookie session (the `Cookies` scheme): the session cookie carries a sealed reference, the
 * session itself lives in the state store (session/session-store.ts). Checks it once per request
 * (from a local cache, no round trip while the store vouches for its invalidations), renews it
 * when sliding expiration says so (never past the absolute lifetime), and offers the sign-in,
 * sign-out and revocation API that providers, routes and a consuming application call, and
 * `accessToken`, which hands out a provider access token (SaveTokens) and refreshes it once per
 * session through the provider's registered refresher. It verifies no credentials itself.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { applicationNaming, cookieName } from '../application-name.js'
import type { CookieSerializeOptions } from '@fastify/cookie'
import type { KeyRing } from '../data-protection/key-ring.js'
import { Principal, type AuthenticationTicket } from '../session/principal.js'
import { SessionStore, type SessionList } from '../session/session-store.js'
import { describeDevice } from '../session/device.js'
import { auditFieldsOf, checkedUserIdentity, type UserIdentity } from '../session/user-identity.js'
import { expiresSoon, type TokenRefresher, validAccessToken } from '../session/token-refresh.js'
import type { ApplicationConfiguration } from '../providers/application-schema.js'
import { createError } from '../errors.js'
import { SessionTokenRefresh } from '../session/token-refresh-runner.js'
import { keptApiToken, type ApiTokenRequest } from '../session/token-refresh-api.js'

/** The name an API's token is kept under (`DownstreamApis:<Name>`'s names). */
const API_TOKEN_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/
import { issuedTicket, renewedTicket, type RenewalSettings, type SignInRequest } from '../session/renewal.js'

/** @public */
export interface SessionCookieSettings {
  readonly name: string
  readonly options: CookieSerializeOptions
}

/** Callback form of {@link FastifyInstance.session.authenticate}, for hooks that avoid a promise per request. @public */
export type ResolveCallback = (error: Error | null, principal: Principal | undefined) => void

/** Options of {@link SessionApi.accessToken}. @public @experimental */
export interface AccessTokenOptions {
  /** The access token a downstream API refused with 401: refreshed even when not about to expire. */
  readonly rejected?: string
}

/** `app.session`: the cookie session of the signed-in user, and revocation. @public */
export interface SessionApi {
  readonly cookie: SessionCookieSettings
  /**
   * Reads the session once per request; the principal or undefined. Rejects with a 503
   * error when the state store cannot vouch for the session (fails closed).
   */
  authenticate: (request: FastifyRequest, reply: FastifyReply) => Promise<Principal | undefined>
  /** The same, callback style (the authorization hook). */
  resolve: (request: FastifyRequest, reply: FastifyReply, done: ResolveCallback) => void
  /**
   * Ends every session of one user on every instance and returns how many: the user is
   * (scheme, issuer, subject), as `request.user.identity` gives it (for example when an account
   * is disabled at the IdP). Sessions of another provider or issuer with the same subject value
   * are another user's and stay. docs/security.md, "Revocation".
   */
  revokeUser: (identity: UserIdentity) => Promise<number>
  /**
   * @deprecated Use {@link SessionApi.revokeUser}. A bare subject was ambiguous (two providers may
   * issue the same value for different people), so this takes the identity too and is the same as
   * `revokeUser`; a string argument throws a TypeError.
   */
  revokeSubject: (identity: UserIdentity) => Promise<number>
  /** Ends the session with this id on every instance. */
  revokeSession: (sessionId: string) => Promise<void>
  /**
   * The live sessions of the user `userKey` (`request.user.userKey`, `userKeyOf`), newest first:
   * at most `limit` (default 50, at most 1000) with the total, for an administrator's page
   * (the user's own page is `/Account/Sessions`). docs/security.md, "A user's sessions".
   */
  list: (userKey: string, options?: { readonly limit?: number }) => Promise<SessionList>
  /**
   * Ends one session of the user `userKey`, named by its `sessionAuditId` (from {@link SessionApi.list}
   * or an audit line), on every instance at once; false when that user has no such live session.
   */
  revokeByAuditId: (userKey: string, sessionAuditId: string) => Promise<boolean>
  /**
   * Ends every session listed under an index key given at sign-in (`indexKeys`) on every instance;
   * returns how many. With `scheme`, only the sessions that scheme signed in (a provider's logout
   * message ends nothing another provider signed in).
   */
  revokeIndexed: (indexKey: string, scheme?: string) => Promise<number>
  /**
   * The signed-in user's provider access token (SaveTokens), valid for at least the next
   * minute: refreshed with the refresh token first when it expires within 60 s (once per
   * session, even with concurrent callers on several instances). Undefined when there is no
   * session, no access token, or no valid one can be had; when the provider refuses the
   * refresh token the session ends (its cookie is deleted on `reply`) and the caller should
   * answer as for an anonymous user (401 or a new sign-in). docs/providers/openid-connect.md, "Token refresh".
   *
   * `options.rejected` (experimental): the access token an API has just refused with 401. While
   * the session still holds that token it is refreshed whatever its expiry (once per session, as
   * above); when the session already holds a newer one, that one is handed out. Used by
   * `app.downstreamApis` for its one retry.
   */
  accessToken: (request: FastifyRequest, reply: FastifyReply, options?: AccessTokenOptions) => Promise<string | undefined>
  /**
   * Experimental. The signed-in user's access token for one API (issue 40 item 10): asked for
   * with the session's refresh token and `api`'s `resource` (RFC 8707), `scopes` or `audience`,
   * kept with the session's saved tokens until a minute before it expires (one request per
   * session and API, even with concurrent callers on several instances; the sign-in's own access
   * token is not changed). Undefined when there is no session or refresh token; the session ends
   * only when a new ID token names another subject. Throws `TokenRefreshError` when the provider
   * refused the request or did not answer (the session stays). `options.rejected`: the API's token
   * the API just refused; a new one is asked for. docs/guides/call-another-api.md.
   */
  accessTokenFor: (request: FastifyRequest, reply: FastifyReply, api: ApiTokenRequest, options?: AccessTokenOptions) => Promise<string | undefined>
  /**
   * Registers how a provider scheme refreshes its tokens (providers call it when SaveTokens is on);
   * returns the function that removes it again (a provider from the app's provider source, removed).
   */
  registerTokenRefresher: (scheme: string, refresher: TokenRefresher) => () => void
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in principal; set by {@link FastifyInstance.session.authenticate}. */
    user: Principal | undefined
  }
  interface FastifyReply {
    /** Signs the user in with the Cookies scheme: stores a new session and sets its cookie. */
    signIn: (request: SignInRequest) => Promise<Principal>
    /** Ends this request's session everywhere and deletes the session cookie. */
    signOut: () => Promise<void>
  }
  interface FastifyInstance {
    session: SessionApi
  }
}

export interface SessionPluginOptions {
  readonly config: ApplicationConfiguration
  readonly cookie: SessionCookieSettings
  readonly keyRing: KeyRing
  /** The configuration root key, for messages naming a key. */
  readonly rootKey: string
  /** Milliseconds since the epoch (injectable for lifetime tests). */
  readonly now: () => number
}

/**
 * The instance's {@link SessionStore}, for the core's own plugins that need more than
 * {@link SessionApi} (the ids of ended sessions for audit lines); not part of the public API.
 */
const SESSION_STORE = Symbol('session.store')

/** The session store the session plugin registered on `app` (or an ancestor). */
export function sessionStoreOf (app: FastifyInstance): SessionStore {
  return (app as unknown as Record<symbol, SessionStore>)[SESSION_STORE] as SessionStore
}

const AUTHENTICATED = Symbol('session.authenticated')
type RequestWithFlag = FastifyRequest & { [AUTHENTICATED]?: true }

/**
 * Makes `principal` (or no one) the request's user for the rest of the request, authenticated by
 * another scheme than the cookie: `resolve` and `authenticate` then answer it without reading the
 * session cookie (plugins/bearer.ts: a bearer token alone decides, no fallback to the cookie).
 */
export function authenticateRequestAs (request: FastifyRequest, principal: Principal | undefined): void {
  request.user = principal
  ;(request as RequestWithFlag)[AUTHENTICATED] = true
}

/**
 * Cookie name and attributes per the contract's "Session cookie" table: `__Host-` prefix,
 * HttpOnly, Secure, SameSite=Lax, Path=/, no Domain; the unprefixed, non-Secure form only under
 * the Development-only AllowInsecureHttp override (startup rejects it elsewhere). The name is the
 * application's (`__Host-<Name>.Web.Authentication`).
 */
export function sessionCookieSettings (insecure: boolean, applicationName: string): SessionCookieSettings {
  return {
    name: cookieName(applicationNaming(applicationName).cookieNames.session, !insecure),
    options: { httpOnly: true, secure: !insecure, sameSite: 'lax', path: '/' }
  }
}

const USER_KEY = /^[A-Za-z0-9_-]{43}$/
const AUDIT_ID = /^[A-Za-z0-9_-]{22}$/
const MAX_LIST_LIMIT = 1000

function checkedUserKey (userKey: unknown, method: string): string {
  if (typeof userKey !== 'string' || !USER_KEY.test(userKey)) throw new TypeError(`app.session.${method}: userKey must be a user key (43 characters, request.user.userKey or userKeyOf).`)
  return userKey
}

function listLimitOf (limit: unknown): number | undefined {
  if (limit === undefined) return undefined
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) throw new TypeError(`app.session.list: limit must be an integer from 1 to ${MAX_LIST_LIMIT}.`)
  return limit
}

/** Store failures reach the error handler as they are; it renders them as 503 (error-handler.ts). */
function asRequestError (error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error))
}

/** What the session plugin's parts share. */
interface SessionContext {
  readonly sessions: SessionStore
  readonly cookie: SessionCookieSettings
  /** Authentication:Enabled and Authentication:Cookie:Enabled. */
  readonly enabled: boolean
  readonly nowSeconds: () => number
  readonly clearCookie: (reply: FastifyReply) => void
}

/** Sets the principal, renewing the session in the background when sliding expiration says so. */
function acceptSession (sessions: SessionContext['sessions'], renewal: RenewalSettings, request: FastifyRequest, ticket: AuthenticationTicket, at: number): Principal {
  const renewed = renewedTicket(ticket, at, renewal)
  if (renewed !== undefined) {
    sessions.renew(renewed, at).then((stored) => {
      if (!stored) request.log.debug({ event: 'session.renewal.skipped' }, 'session ended before its renewal was stored')
    }, (error: unknown) => {
      request.log.warn({ event: 'session.renewal.failed', errorName: (error as Error).name }, 'session renewal not stored')
    })
  }
  request.user = new Principal(renewed ?? ticket)
  return request.user
}

/**
 * `resolve` and `authenticate`: the request's session, checked once per request (a cached session
 * without a round trip), renewed in the background when sliding expiration says so.
 */
function sessionResolver (ctx: SessionContext, renewal: RenewalSettings): Pick<SessionApi, 'resolve' | 'authenticate'> {
  const { sessions, cookie, enabled, nowSeconds, clearCookie } = ctx

  const accept = (request: FastifyRequest, ticket: AuthenticationTicket, at: number): Principal => acceptSession(sessions, renewal, request, ticket, at)

  function resolve (request: FastifyRequest, reply: FastifyReply, done: ResolveCallback): void {
    const flagged = request as RequestWithFlag
    if (flagged[AUTHENTICATED] === true) {
      done(null, request.user)
      return
    }
    flagged[AUTHENTICATED] = true
    const value = enabled && request.headers.cookie !== undefined ? request.cookies[cookie.name] : undefined
    if (value === undefined || value === '') {
      done(null, undefined)
      return
    }
    const sessionId = sessions.sessionIdOf(value)
    if (sessionId === undefined) {
      request.log.debug({ event: 'session.cookie.rejected' }, 'session cookie rejected')
      clearCookie(reply)
      done(null, undefined)
      return
    }
    const at = nowSeconds()
    let ticket: AuthenticationTicket | undefined
    try {
      ticket = sessions.cached(sessionId, at)
    } catch (error) {
      done(asRequestError(error), undefined)
      return
    }
    if (ticket !== undefined) {
      done(null, accept(request, ticket, at))
      return
    }
    sessions.load(sessionId, at).then((loaded) => {
      if (loaded === undefined) {
        // Missing, expired or revoked: anonymous, and the cookie goes.
        request.log.debug({ event: 'session.ended' }, 'session cookie refers to no live session')
        clearCookie(reply)
        done(null, undefined)
        return
      }
      done(null, accept(request, loaded, at))
    }, (error: unknown) => { done(asRequestError(error), undefined) })
  }

  async function authenticate (request: FastifyRequest, reply: FastifyReply): Promise<Principal | undefined> {
    return await new Promise((_resolve, reject) => {
      resolve(request, reply, (error, principal) => { if (error === null) _resolve(principal); else reject(error) })
    })
  }

  return { resolve, authenticate }
}

/** `accessToken` and `registerTokenRefresher`: a provider access token, refreshed once per session when it expires soon. */
function providerTokens (ctx: SessionContext, authenticate: SessionApi['authenticate'], tokenRefresh: SessionTokenRefresh): Pick<SessionApi, 'accessToken' | 'accessTokenFor' | 'registerTokenRefresher'> {
  const refreshers = tokenRefresh.refreshers
  return {
    async accessToken (request, reply, options) {
      const principal = await authenticate(request, reply)
      const ticket = principal?.ticket
      const tokens = ticket?.tokens
      if (ticket === undefined || tokens?.access_token === undefined) return undefined
      const at = ctx.nowSeconds()
      const rejected = options?.rejected !== undefined && options.rejected === tokens.access_token ? options.rejected : undefined
      if (rejected === undefined && !expiresSoon(tokens, at)) return tokens.access_token
      const refresher = refreshers.get(ticket.scheme)
      if (refresher === undefined || tokens.refresh_token === undefined) return rejected === undefined ? validAccessToken(tokens, at) : undefined
      const outcome = await tokenRefresh.refresh(ticket, refresher, request.log, rejected)
      if ('ended' in outcome) {
        ctx.clearCookie(reply)
        request.user = undefined
        return undefined
      }
      if (outcome.ticket !== undefined) request.user = new Principal(outcome.ticket)
      return outcome.accessToken
    },
    async accessTokenFor (request, reply, api, options) {
      if (!API_TOKEN_NAME.test(api.name)) throw new TypeError('accessTokenFor: the API name must be letters, digits, - and _, starting with a letter')
      const ticket = (await authenticate(request, reply))?.ticket
      if (ticket === undefined) return undefined
      const kept = keptApiToken(ticket.tokens ?? {}, api.name, ctx.nowSeconds(), options?.rejected)
      if (kept !== undefined) return kept
      const refresher = refreshers.get(ticket.scheme)
      if (refresher === undefined || ticket.tokens?.refresh_token === undefined) return undefined
      const outcome = await tokenRefresh.apiToken(ticket, refresher, api, request.log, options?.rejected)
      if ('ended' in outcome) {
        ctx.clearCookie(reply)
        request.user = undefined
        return undefined
      }
      if (outcome.ticket !== undefined) request.user = new Principal(outcome.ticket)
      if (outcome.failure !== undefined) throw outcome.failure
      return outcome.accessToken
    },
    registerTokenRefresher (scheme, refresher) {
      if (refreshers.has(scheme)) throw createError('APP_ERR_PROVIDER_DUPLICATE', scheme)
      refreshers.set(scheme, refresher)
      return () => { if (refreshers.get(scheme) === refresher) refreshers.delete(scheme) }
    }
  }
}

/** Revocation and the user's session list: every instance sharing the store sees the change at once. */
function revocation (ctx: SessionContext): Pick<SessionApi, 'revokeUser' | 'revokeSubject' | 'revokeSession' | 'list' | 'revokeByAuditId' | 'revokeIndexed'> {
  const { sessions, nowSeconds } = ctx
  const revokeUser = async (identity: UserIdentity): Promise<number> => {
    if (typeof identity === 'string') {
      throw new TypeError('app.session.revokeSubject and revokeUser take the identity { scheme, issuer, subject } (request.user.identity), not a bare subject: the same subject value may belong to users of different providers.')
    }
    return (await sessions.endUser(checkedUserIdentity(identity, 'app.session.revokeUser'), nowSeconds())).length
  }
  return {
    revokeUser,
    revokeSubject: revokeUser,
    revokeSession: async (sessionId) => { await sessions.endById(sessionId) },
    list: async (userKey, listOptions) => await sessions.listUser(checkedUserKey(userKey, 'list'), nowSeconds(), listLimitOf(listOptions?.limit)),
    revokeByAuditId: async (userKey, sessionAuditId) => {
      if (typeof sessionAuditId !== 'string' || !AUDIT_ID.test(sessionAuditId)) return false
      return await sessions.endUserSession(checkedUserKey(userKey, 'revokeByAuditId'), sessionAuditId)
    },
    revokeIndexed: async (indexKey, scheme) => await sessions.endIndexed(indexKey, scheme === undefined ? undefined : { scheme, nowSeconds: nowSeconds() })
  }
}

/** `reply.signIn`: a new session (new id: no fixation), its cookie, and the end of the session this browser had. */
function signInReply (ctx: SessionContext, lifetimes: { readonly idleSeconds: number, readonly absoluteSeconds: number }, disabledKey: string): FastifyReply['signIn'] {
  const { sessions, cookie, enabled, nowSeconds } = ctx
  return async function signIn (this: FastifyReply, signInRequest: SignInRequest): Promise<Principal> {
    if (!enabled) throw createError('APP_ERR_SESSION_DISABLED', disabledKey, 'Cookie:Enabled')
    const request = this.request
    const at = nowSeconds()
    const ticket = issuedTicket(signInRequest, at, lifetimes, describeDevice(request.headers['user-agent']))
    const previousId = sessions.sessionIdOf(request.cookies[cookie.name])
    const reference = await sessions.create(ticket, at, signInRequest.indexKeys)
    if (previousId !== undefined) {
      await sessions.endById(previousId).catch((error: unknown) => {
        request.log.warn({ event: 'session.end_failed', errorName: (error as Error).name }, 'previous session not ended')
      })
    }
    this.setCookie(cookie.name, reference, cookie.options)
    const principal = new Principal(ticket)
    request.user = principal
    ;(request as RequestWithFlag)[AUTHENTICATED] = true
    request.log.info({ event: 'session.signed_in', scheme: ticket.scheme, ...auditFieldsOf(ticket) }, 'signed in')
    return principal
  }
}

/** `reply.signOut`: the request's session ends everywhere and its cookie is deleted. */
function signOutReply (ctx: SessionContext): FastifyReply['signOut'] {
  const { sessions, cookie, clearCookie } = ctx
  return async function signOut (this: FastifyReply): Promise<void> {
    const request = this.request
    const ticket = request.user?.ticket
    const sessionId = ticket?.sessionId ?? sessions.sessionIdOf(request.cookies[cookie.name])
    clearCookie(this)
    request.user = undefined
    ;(request as RequestWithFlag)[AUTHENTICATED] = true
    if (ticket !== undefined) await sessions.end(ticket)
    else if (sessionId !== undefined) await sessions.endById(sessionId)
  }
}

async function sessionPlugin (app: FastifyInstance, options: SessionPluginOptions): Promise<void> {
  const { config, keyRing, cookie, now } = options
  const cookieSettings = config.Authentication.Cookie
  const idleSeconds = cookieSettings.ExpireMinutes * 60
  const deleteOptions: CookieSerializeOptions = { ...cookie.options, maxAge: 0, expires: new Date(0) }
  const sessions = new SessionStore({ store: app.state, ring: keyRing })
  const nowSeconds = (): number => Math.floor(now() / 1000)
  const ctx: SessionContext = {
    sessions,
    cookie,
    enabled: config.Authentication.Enabled && cookieSettings.Enabled,
    nowSeconds,
    clearCookie: (reply) => { reply.setCookie(cookie.name, '', deleteOptions) }
  }
  const { resolve, authenticate } = sessionResolver(ctx, { slidingExpiration: cookieSettings.SlidingExpiration, idleSeconds })
  const tokens = providerTokens(ctx, authenticate, new SessionTokenRefresh({ sessions, state: app.state, nowSeconds }))
  app.decorate(SESSION_STORE, sessions)
  app.decorate('session', { cookie, authenticate, resolve, ...tokens, ...revocation(ctx) } satisfies SessionApi)
  app.decorateRequest('user', undefined)
  app.decorateReply('signIn', signInReply(ctx, { idleSeconds, absoluteSeconds: cookieSettings.AbsoluteExpireMinutes * 60 }, `${options.rootKey}:Authentication:Enabled`))
  app.decorateReply('signOut', signOutReply(ctx))
}

export default fp(sessionPlugin, { name: 'session', dependencies: ['@fastify/cookie', 'state'] })
