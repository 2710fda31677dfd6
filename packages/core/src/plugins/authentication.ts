/**
 * Authentication schemes: the registry of external providers (each registers only when its
 * Enabled is true) and the responses every protected route may need, challenge, forbid and
 * step-up, rendered by content negotiation. A route that accepts request credentials, and a
 * caller one authenticated, are answered by the request-credential handler instead, as a sign-in
 * provider answers its own challenge ({@link CredentialAnswers}: RFC 6750's 401 and 403
 * `insufficient_scope`, RFC 9470's 401, never a redirect).
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { isLocalUrl } from '../http/local-url.js'
import { ProviderRegistry } from '../providers/registry.js'
import type { AuthenticationProvider, OpenedProvider, SignedOutPrincipal } from '../providers/provider.js'
import type { ApplicationConfiguration } from '../providers/application-schema.js'
import type { ProviderInstance } from '../providers/provider-instances.js'
import { createError } from '../errors.js'
import { validateRuntimeProvider, type RuntimeProviderDefinition, type RuntimeValidation } from '../providers/runtime-definitions.js'
import type { ProviderReloadResult, ReloadProvidersOptions } from '../providers/runtime-provider-set.js'
import { authenticationRequirementOf, type AuthorizationPolicy } from '../authorization/policies.js'
import type { AuthenticationRequirement } from '../session/authentication-proof.js'
import type { Principal } from '../session/principal.js'
import { pagesFor } from './branding.js'
import { isPageNavigation, sendProblem, wantsJson } from '../http/responses.js'

export type { AuthenticationProvider, ChallengeHint, ProviderStatus, SignedOutPrincipal } from '../providers/provider.js'
export type { ProviderReloadResult, RefusedProvider, ReloadProvidersOptions } from '../providers/runtime-provider-set.js'
import type { Dispatcher } from '../http/outbound-address.js'

/** What a provider's registration receives (plugins/providers/open-provider.ts calls it for each provider it opens). */
export interface ProviderRegistrationOptions<I extends ProviderInstance = ProviderInstance> {
  /** The provider's protocol, settings and configuration key path (under the app's root key). */
  readonly instance: I
  readonly environmentName: string
  /** The app root, for a JwtBearer scheme's development-token key (Development only); absent: none. */
  readonly contentRoot?: string
  /**
   * Set for a provider from the app's provider source (plugins/runtime-providers.ts): its state
   * adds no app hooks (it opens on first use and the runtime set stops it), and its sign-ins carry
   * the tenant key and the per-provider session index.
   */
  readonly runtime?: {
    readonly tenant?: string
    /** Outside Development: connections that reach only public addresses (http/outbound-address.ts). */
    readonly dispatcher?: Dispatcher
    /** Whether another provider already trusts this issuer (a SAML2 IdP entity id); its metadata is then refused. */
    readonly issuerTaken?: (issuer: string) => boolean
  }
}

/**
 * Builds one provider instance of a protocol, its endpoints declared
 * (`AuthenticationProvider.endpoints`); a configured one adds its app hooks (metadata schedule),
 * one from the provider source opens on first use. It registers no route and no scheme.
 */
export type ProviderRegistration<I extends ProviderInstance = ProviderInstance> = (app: FastifyInstance, options: ProviderRegistrationOptions<I>) => OpenedProvider

/** `app.authentication`: the registered providers, challenge, forbid and provider sign-out. @public */
export interface AuthenticationApi {
  readonly providers: ReadonlyMap<string, AuthenticationProvider>
  readonly defaultChallengeScheme: string
  /** Adds a provider; call before `ready()` (providers from the app's provider source are added by the core at any time). */
  registerProvider: (provider: AuthenticationProvider) => void
  /** The provider whose Domains hold the domain of the e-mail `address` (case-insensitive), or undefined. */
  providerForEmail: (address: string) => AuthenticationProvider | undefined
  /** Whether any provider declares Domains (the login page then offers an e-mail field). */
  readonly discoversByEmail: boolean
  /** Anonymous caller on a protected resource: login redirect, provider challenge or 401. */
  challenge: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> | FastifyReply
  /**
   * Authenticated caller lacking a policy: AccessDenied redirect or 403; a bearer call gets 403
   * `insufficient_scope`, naming the scopes of `policy` when it asks for some.
   */
  forbid: (request: FastifyRequest, reply: FastifyReply, policy?: AuthorizationPolicy) => FastifyReply
  /**
   * Caller who meets `policy` except how or how recently it authenticated (step-up, issue 36
   * item 3): a bearer call gets RFC 9470's 401 `insufficient_user_authentication`; a page
   * navigation goes back to the provider that signed the session in (its own scheme) asking for
   * `requirement`, the policy's for that scheme (authorization/policies.ts `decidePolicy`, which
   * the authorize hook passes on; absent, it is computed from `policy` here, as in 1.2.1); any
   * other call a 401 problem. A session whose provider cannot step up is forbidden.
   */
  stepUp: (request: FastifyRequest, reply: FastifyReply, policy: AuthorizationPolicy, principal: Principal, requirement?: AuthenticationRequirement) => Promise<FastifyReply> | FastifyReply
  /**
   * After the local sign-out: continues at the signing-in provider's logout endpoint (a
   * no-store page that navigates there) and returns the reply, or undefined when the
   * sign-out stays local (no hook, nothing to do, or the hook failed, which is logged).
   */
  continueSignOut: (request: FastifyRequest, reply: FastifyReply, signedOut: SignedOutPrincipal) => Promise<FastifyReply | undefined>
  /**
   * Reads the app's provider source again (`providerSource` of createApp) and applies the change:
   * at once on this instance, and on every instance sharing the state store through its
   * invalidation channel. Without a source it changes nothing. `revokeSessions` ends the sessions
   * of the removed providers. docs/providers/runtime-providers.md.
   */
  reloadProviders: (options?: ReloadProvidersOptions) => Promise<ProviderReloadResult>
  /**
   * Checks one provider definition as the provider source's would be checked (the app's root key,
   * environment and configuration), without applying it: for an admin form before it saves.
   */
  validateProvider: (definition: RuntimeProviderDefinition) => RuntimeValidation
}

/**
 * How the request-credential handler answers (installed by plugins/bearer.ts): each answer
 * returns the reply for a request that is its own (a route that accepts request credentials; a
 * caller a credential authenticated), else undefined and the usual answer follows.
 */
export interface CredentialAnswers {
  challenge: (request: FastifyRequest, reply: FastifyReply) => FastifyReply | undefined
  forbid: (request: FastifyRequest, reply: FastifyReply, policy?: AuthorizationPolicy) => FastifyReply | undefined
  stepUp: (request: FastifyRequest, reply: FastifyReply, policy: AuthorizationPolicy, principal: Principal, requirement: AuthenticationRequirement) => FastifyReply | undefined
}

/** What plugins/runtime-providers.ts and plugins/bearer.ts need of the registry: removal, the reload, the credential answers. */
interface RuntimeRegistryAccess {
  remove: (scheme: string) => boolean
  reloader?: (options: ReloadProvidersOptions) => Promise<ProviderReloadResult>
  credentials?: CredentialAnswers
}
const runtimeAccess = new WeakMap<AuthenticationApi, RuntimeRegistryAccess>()

/** Removes a provider added at runtime; false when there was none (plugins/runtime-providers.ts). */
export function removeProvider (api: AuthenticationApi, scheme: string): boolean {
  return runtimeAccess.get(api)?.remove(scheme) ?? false
}

/** Installs the runtime set's reload behind {@link AuthenticationApi.reloadProviders}. */
export function setProviderReloader (api: AuthenticationApi, reloader: (options: ReloadProvidersOptions) => Promise<ProviderReloadResult>): void {
  const access = runtimeAccess.get(api)
  if (access !== undefined) access.reloader = reloader
}

/** Installs the request-credential handler's answers behind challenge, forbid and step-up. */
export function setCredentialAnswers (api: AuthenticationApi, answers: CredentialAnswers): void {
  const access = runtimeAccess.get(api)
  if (access !== undefined) access.credentials = answers
}

declare module 'fastify' {
  interface FastifyInstance {
    authentication: AuthenticationApi
  }
}

export interface AuthenticationPluginOptions {
  readonly config: ApplicationConfiguration
  /** For {@link AuthenticationApi.validateProvider}: the environment the rules read (default Production). */
  readonly environmentName?: string
  /** For {@link AuthenticationApi.validateProvider}: the root key problems are named under. */
  readonly rootKey: string
}

/** The request's own path and query, when it may travel as a return URL (GET/HEAD only). */
export function returnUrlOf (request: FastifyRequest): string | undefined {
  if (request.method !== 'GET' && request.method !== 'HEAD') return undefined
  return isLocalUrl(request.url) ? request.url : undefined
}

function withReturnUrl (path: string, returnUrl: string | undefined): string {
  return returnUrl === undefined ? path : `${path}?ReturnUrl=${encodeURIComponent(returnUrl)}`
}

/** Challenge, forbid and step-up: the request-credential handler's answer where it gives one, else the sign-in provider's or the pages'. */
function answersOf (providers: ReadonlyMap<string, AuthenticationProvider>, defaultChallengeScheme: string, access: RuntimeRegistryAccess): Pick<AuthenticationApi, 'challenge' | 'forbid' | 'stepUp'> {
  const answers: Pick<AuthenticationApi, 'challenge' | 'forbid' | 'stepUp'> = {
    challenge (request: FastifyRequest, reply: FastifyReply) {
    // A route that accepts request credentials: RFC 6750, never a redirect.
      const answered = access.credentials?.challenge(request, reply)
      if (answered !== undefined) return answered
      if (wantsJson(request)) return sendProblem(request, reply, 401, { code: 'APP_ERR_AUTH_REQUIRED' })
      const returnUrl = returnUrlOf(request)
      const provider = providers.get(defaultChallengeScheme)
      if (provider !== undefined && provider.status().available) return provider.challenge(request, reply, returnUrl ?? '/')
      return reply.redirect(withReturnUrl('/Account/Login', returnUrl), 302)
    },
    forbid (request: FastifyRequest, reply: FastifyReply, policy?: AuthorizationPolicy) {
      const answered = access.credentials?.forbid(request, reply, policy)
      if (answered !== undefined) return answered
      if (wantsJson(request) && !isPageNavigation(request)) return sendProblem(request, reply, 403, { code: 'APP_ERR_AUTH_FORBIDDEN' })
      return reply.redirect(withReturnUrl('/Account/AccessDenied', returnUrlOf(request)), 302)
    },
    stepUp (request: FastifyRequest, reply: FastifyReply, policy: AuthorizationPolicy, principal: Principal, given?: AuthenticationRequirement) {
      const scheme = principal.ticket.scheme
      const requirement = given ?? authenticationRequirementOf(policy, scheme) ?? {}
      const answered = access.credentials?.stepUp(request, reply, policy, principal, requirement)
      if (answered !== undefined) return answered
      const provider = providers.get(scheme)
      const identity = principal.identity
      if (provider?.stepUp !== true || identity === undefined) {
        request.log.warn({ event: 'authorization.step_up.unavailable', provider: scheme, policy: policy.name }, 'step-up authentication required, but the session\'s provider cannot step up: access denied')
        return answers.forbid(request, reply, policy)
      }
      if (wantsJson(request) && !isPageNavigation(request)) return sendProblem(request, reply, 401, { code: 'APP_ERR_AUTH_STEP_UP_REQUIRED' })
      request.log.info({ event: 'authorization.step_up.required', provider: scheme, policy: policy.name }, 'step-up authentication required: back to the provider')
      // The requirement comes from the server-side policy, never from the request.
      return provider.challenge(request, reply, returnUrlOf(request) ?? '/', { stepUp: { requirement, identity } })
    }
  }
  return answers
}

/** {@link AuthenticationApi.continueSignOut}: the signing-in provider's logout, if it has one. */
function signOutContinuation (providers: ReadonlyMap<string, AuthenticationProvider>): AuthenticationApi['continueSignOut'] {
  return async function continueSignOut (request: FastifyRequest, reply: FastifyReply, signedOut: SignedOutPrincipal) {
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
}

async function authenticationPlugin (app: FastifyInstance, options: AuthenticationPluginOptions): Promise<void> {
  const registry = new ProviderRegistry<AuthenticationProvider>()
  const providers = registry.byScheme
  const defaultChallengeScheme = options.config.Authentication.DefaultChallengeScheme

  const access: RuntimeRegistryAccess = { remove: (scheme) => registry.remove(scheme) }
  const api: AuthenticationApi = {
    providers,
    defaultChallengeScheme,
    registerProvider (provider: AuthenticationProvider) {
      if (providers.has(provider.scheme)) throw createError('APP_ERR_PROVIDER_DUPLICATE', provider.scheme)
      registry.add(provider)
    },
    providerForEmail: (address: string) => registry.forEmail(address),
    get discoversByEmail () {
      return registry.hasDomains
    },
    ...answersOf(providers, defaultChallengeScheme, access),
    continueSignOut: signOutContinuation(providers),
    async reloadProviders (reloadOptions: ReloadProvidersOptions = {}) {
      return access.reloader === undefined ? { added: [], removed: [], refused: [], refusedDomains: [] } : await access.reloader(reloadOptions)
    },
    validateProvider: (definition: RuntimeProviderDefinition) => validateRuntimeProvider(definition, {
      config: options.config,
      environmentName: options.environmentName ?? 'Production',
      rootKey: options.rootKey
    })
  }
  runtimeAccess.set(api, access)
  app.decorate('authentication', api)
}

export default fp(authenticationPlugin, { name: 'authentication' })
