/**
 * The cookie session (the `Cookies` scheme): reads the sealed ticket from the session cookie and
 * its chunks, renews it when sliding expiration says so, and offers the sign-in/sign-out API that
 * providers and a consumer-supplied identity flow call. It verifies no credentials itself.
 */
import { randomUUID } from 'node:crypto'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { CookieSerializeOptions } from '@fastify/cookie'
import { announcedChunks, chunkName, joinCookieValue, MAX_CHUNKS, splitCookieValue } from '../auth/cookie-chunks.js'
import type { KeyRing } from '../auth/key-ring.js'
import { Principal, type AuthenticationTicket, type Claim } from '../auth/principal.js'
import { sealTicket } from '../auth/ticket.js'
import { TicketCache } from '../auth/ticket-cache.js'
import type { ApplicationConfiguration } from '../config/schema.js'
import { AppError } from '../errors.js'

/** What a successful sign-in flow hands to {@link FastifyReply.signIn}. */
export interface SignInRequest {
  /** Scheme that authenticated the user (provider scheme or the consumer's flow name). */
  readonly scheme: string
  /** Normalized claims to store in the ticket. */
  readonly claims: readonly Claim[]
  /** Provider tokens; pass only when the provider's SaveTokens is true. */
  readonly tokens?: Readonly<Record<string, string>>
}

export interface SessionCookieSettings {
  readonly name: string
  readonly options: CookieSerializeOptions
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in principal; set by {@link FastifyInstance.session.authenticate}. */
    user: Principal | undefined
  }
  interface FastifyReply {
    /** Signs the user in with the Cookies scheme: seals a new ticket into the session cookie. */
    signIn: (request: SignInRequest) => Principal
    /** Deletes the session cookie and every chunk. */
    signOut: () => void
  }
  interface FastifyInstance {
    session: {
      readonly cookie: SessionCookieSettings
      /** Reads the session once per request; returns the principal or undefined. */
      authenticate: (request: FastifyRequest, reply: FastifyReply) => Principal | undefined
    }
  }
}

export interface SessionPluginOptions {
  readonly config: ApplicationConfiguration
  readonly environmentName: string
  readonly keyRing: KeyRing
}

const AUTHENTICATED = Symbol('session.authenticated')
type RequestWithFlag = FastifyRequest & { [AUTHENTICATED]?: true }

/**
 * Cookie name and attributes per the contract's "Session cookie" table: `__Host-` prefix,
 * HttpOnly, Secure, SameSite=Lax, Path=/, no Domain; the unprefixed, non-Secure form only under
 * the Development-only AllowInsecureHttp override (startup rejects it elsewhere).
 */
export function sessionCookieSettings (config: ApplicationConfiguration, environmentName: string): SessionCookieSettings {
  const insecure = config.Authentication.Cookie.AllowInsecureHttp && environmentName === 'Development'
  return {
    name: insecure ? '.ProjectTemplate.Web.Authentication' : '__Host-ProjectTemplate.Web.Authentication',
    options: { httpOnly: true, secure: !insecure, sameSite: 'lax', path: '/' }
  }
}

async function sessionPlugin (app: FastifyInstance, options: SessionPluginOptions): Promise<void> {
  const { config, keyRing } = options
  const cookie = sessionCookieSettings(config, options.environmentName)
  const cookieSettings = config.Authentication.Cookie
  const enabled = config.Authentication.Enabled && cookieSettings.Enabled
  const lifetimeSeconds = cookieSettings.ExpireMinutes * 60
  const deleteOptions: CookieSerializeOptions = { ...cookie.options, maxAge: 0, expires: new Date(0) }
  // A browser sends the same sealed value on every request: open it once per process.
  const tickets = new TicketCache(keyRing)
  const chunkNames = Array.from({ length: MAX_CHUNKS }, (_, index) => chunkName(cookie.name, index + 1))

  /** Chunk cookies the request carries (announced or stray), so sign-out removes them all. */
  function presentChunkNames (request: FastifyRequest): string[] {
    const cookies = request.cookies
    const names: string[] = []
    for (const name of chunkNames) if (cookies[name] !== undefined) names.push(name)
    return names
  }

  function clearCookies (request: FastifyRequest, reply: FastifyReply, keep: ReadonlySet<string> = new Set()): void {
    for (const name of [cookie.name, ...presentChunkNames(request)]) {
      if (!keep.has(name)) reply.setCookie(name, '', deleteOptions)
    }
  }

  function writeTicket (request: FastifyRequest, reply: FastifyReply, ticket: AuthenticationTicket): void {
    const cookies = splitCookieValue(cookie.name, sealTicket(ticket, keyRing))
    for (const [name, value] of cookies) reply.setCookie(name, value, cookie.options)
    clearCookies(request, reply, new Set(cookies.map(([name]) => name)))
  }

  function authenticate (request: FastifyRequest, reply: FastifyReply): Principal | undefined {
    const flagged = request as RequestWithFlag
    if (flagged[AUTHENTICATED] === true) return request.user
    flagged[AUTHENTICATED] = true
    if (!enabled || request.headers.cookie === undefined) return undefined
    const sealed = joinCookieValue(request.cookies, cookie.name)
    if (sealed === undefined) {
      // A chunk header without its chunks, or stray chunks: remove the debris.
      const main = request.cookies[cookie.name]
      if ((main !== undefined && announcedChunks(main) !== 0) || presentChunkNames(request).length > 0) clearCookies(request, reply)
      return undefined
    }
    const now = Math.floor(Date.now() / 1000)
    let ticket = tickets.open(sealed, now)
    if (ticket === undefined) {
      request.log.debug({ event: 'session.cookie.rejected' }, 'session cookie rejected')
      clearCookies(request, reply)
      return undefined
    }
    if (cookieSettings.SlidingExpiration && now - ticket.issuedAt > (ticket.expiresAt - ticket.issuedAt) / 2) {
      ticket = { ...ticket, issuedAt: now, expiresAt: now + lifetimeSeconds }
      writeTicket(request, reply, ticket)
    }
    request.user = new Principal(ticket)
    return request.user
  }

  app.decorate('session', { cookie, authenticate })
  app.decorateRequest('user', undefined)

  app.decorateReply('signIn', function signIn (this: FastifyReply, signInRequest: SignInRequest): Principal {
    if (!enabled) throw new AppError('APP_ERR_SESSION_DISABLED', 'Sign-in needs ProjectTemplate:Authentication:Enabled and Cookie:Enabled.')
    const now = Math.floor(Date.now() / 1000)
    const ticket: AuthenticationTicket = {
      sessionId: randomUUID(),
      scheme: signInRequest.scheme,
      claims: signInRequest.claims.map((claim) => ({ type: claim.type, value: claim.value, issuer: claim.issuer })),
      issuedAt: now,
      expiresAt: now + lifetimeSeconds,
      ...(signInRequest.tokens === undefined ? {} : { tokens: { ...signInRequest.tokens } })
    }
    writeTicket(this.request, this, ticket)
    const principal = new Principal(ticket)
    this.request.user = principal
    ;(this.request as RequestWithFlag)[AUTHENTICATED] = true
    this.request.log.info({ event: 'session.signed_in', scheme: ticket.scheme }, 'signed in')
    return principal
  })

  app.decorateReply('signOut', function signOut (this: FastifyReply): void {
    clearCookies(this.request, this)
    this.request.user = undefined
    ;(this.request as RequestWithFlag)[AUTHENTICATED] = true
  })
}

export default fp(sessionPlugin, { name: 'session', dependencies: ['@fastify/cookie'] })
