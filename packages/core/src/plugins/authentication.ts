/**
 * Authentication schemes: the registry of external providers (each registers only when its
 * Enabled is true) and the two responses every protected route may need, challenge and forbid,
 * rendered by content negotiation.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { isLocalUrl } from '../http/local-url.js'
import type { KeyRing } from '../data-protection/key-ring.js'
import type { Principal } from '../session/principal.js'
import type { ApplicationConfiguration, ProviderName } from '../config/schema.js'
import { createError } from '../errors.js'
import { pagesFor } from './branding.js'
import { isPageNavigation, sendProblem, wantsJson } from '../http/responses.js'

/** Availability of a provider (metadata or discovery loaded). */
export interface ProviderStatus {
  readonly available: boolean
  /** Failure class, never a secret or a URL with credentials. */
  readonly reason?: string
}

/** A remote-authentication handler (OpenID Connect, SAML2, OAuth vendor) as the core sees it. */
export interface AuthenticationProvider {
  readonly scheme: string
  readonly displayName: string
  /** Paths the handler owns (callback, ACS, metadata); reachable anonymously. */
  readonly paths: readonly string[]
  /** Starts the protocol flow for a validated local `returnUrl`. */
  challenge: (request: FastifyRequest, reply: FastifyReply, returnUrl: string) => Promise<FastifyReply> | FastifyReply
  status: () => ProviderStatus
  /**
   * Optional sign-out at the provider (OpenID Connect RP-initiated logout, SAML2 Single Logout).
   * POST /Account/Logout calls it after the local session has ended, with the principal that was
   * signed in by this provider and the validated local return URL; a URL it returns is where the
   * browser goes next (the provider's logout endpoint), undefined keeps the sign-out local. It
   * must not contact the provider: the local sign-out never waits for or depends on it.
   */
  signOutRedirect?: (request: FastifyRequest, signedOut: SignedOutPrincipal) => Promise<string | undefined> | string | undefined
}

/** What a provider's registration receives (plugins/external-providers.ts calls it for each enabled provider). */
export interface ProviderRegistrationOptions {
  readonly name: ProviderName
  readonly config: ApplicationConfiguration
  readonly environmentName: string
  readonly keyRing: KeyRing
  /** The application's configuration root key (default `ProjectTemplate`), for keys named in log lines. */
  readonly rootKey?: string
}

/** Registers one provider's routes and its {@link AuthenticationProvider} on `app`. */
export type ProviderRegistration = (app: FastifyInstance, options: ProviderRegistrationOptions) => Promise<void>

/** What a provider learns at sign-out: who was signed in (claims, tokens it chose to keep) and where to return. */
export interface SignedOutPrincipal {
  readonly principal: Principal
  /** Validated local URL. */
  readonly returnUrl: string
}

/** `app.authentication`: the registered providers, challenge, forbid and provider sign-out. */
export interface AuthenticationApi {
  readonly providers: ReadonlyMap<string, AuthenticationProvider>
  readonly defaultChallengeScheme: string
  /** Adds a provider; call before `ready()`. */
  registerProvider: (provider: AuthenticationProvider) => void
  /** Anonymous caller on a protected resource: login redirect, provider challenge or 401. */
  challenge: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> | FastifyReply
  /** Authenticated caller lacking a policy: AccessDenied redirect or 403. */
  forbid: (request: FastifyRequest, reply: FastifyReply) => FastifyReply
  /**
   * After the local sign-out: continues at the signing-in provider's logout endpoint (a
   * no-store page that navigates there) and returns the reply, or undefined when the
   * sign-out stays local (no hook, nothing to do, or the hook failed, which is logged).
   */
  continueSignOut: (request: FastifyRequest, reply: FastifyReply, signedOut: SignedOutPrincipal) => Promise<FastifyReply | undefined>
}

declare module 'fastify' {
  interface FastifyInstance {
    authentication: AuthenticationApi
  }
}

export interface AuthenticationPluginOptions {
  readonly config: ApplicationConfiguration
}

/** The request's own path and query, when it may travel as a return URL (GET/HEAD only). */
export function returnUrlOf (request: FastifyRequest): string | undefined {
  if (request.method !== 'GET' && request.method !== 'HEAD') return undefined
  return isLocalUrl(request.url) ? request.url : undefined
}

function withReturnUrl (path: string, returnUrl: string | undefined): string {
  return returnUrl === undefined ? path : `${path}?ReturnUrl=${encodeURIComponent(returnUrl)}`
}

async function authenticationPlugin (app: FastifyInstance, options: AuthenticationPluginOptions): Promise<void> {
  const providers = new Map<string, AuthenticationProvider>()
  const defaultChallengeScheme = options.config.Authentication.DefaultChallengeScheme

  app.decorate('authentication', {
    providers,
    defaultChallengeScheme,
    registerProvider (provider: AuthenticationProvider) {
      if (providers.has(provider.scheme)) throw createError('APP_ERR_PROVIDER_DUPLICATE', provider.scheme)
      providers.set(provider.scheme, provider)
    },
    challenge (request: FastifyRequest, reply: FastifyReply) {
      if (wantsJson(request)) return sendProblem(request, reply, 401, { code: 'APP_ERR_AUTH_REQUIRED' })
      const returnUrl = returnUrlOf(request)
      const provider = providers.get(defaultChallengeScheme)
      if (provider !== undefined && provider.status().available) return provider.challenge(request, reply, returnUrl ?? '/')
      return reply.redirect(withReturnUrl('/Account/Login', returnUrl), 302)
    },
    forbid (request: FastifyRequest, reply: FastifyReply) {
      if (wantsJson(request) && !isPageNavigation(request)) return sendProblem(request, reply, 403, { code: 'APP_ERR_AUTH_FORBIDDEN' })
      return reply.redirect(withReturnUrl('/Account/AccessDenied', returnUrlOf(request)), 302)
    },
    async continueSignOut (request: FastifyRequest, reply: FastifyReply, signedOut: SignedOutPrincipal) {
      const provider = providers.get(signedOut.principal.ticket.scheme)
      if (provider?.signOutRedirect === undefined) return undefined
      let url: string | undefined
      try {
        url = await provider.signOutRedirect(request, signedOut)
      } catch (error) {
        request.log.warn({ event: 'external.sign_out.failed', provider: provider.scheme, errorName: (error as Error | null)?.name }, 'sign-out at the provider skipped; the local session has ended')
        return undefined
      }
      if (url === undefined) return undefined
      request.log.info({ event: 'external.sign_out.redirected', provider: provider.scheme }, 'signing out at the provider')
      // The URL may carry an id_token_hint or a signed LogoutRequest: never cached.
      return reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(pagesFor(request).providerSignOutPage({ url, displayName: provider.displayName }))
    }
  })
}

export default fp(authenticationPlugin, { name: 'authentication' })
