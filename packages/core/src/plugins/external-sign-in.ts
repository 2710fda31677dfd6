/**
 * `app.externalSignIn`: the Fastify side of the sign-in pipeline (sign-in/pipeline.ts, which
 * holds the steps from the pending flow to the session, in order). This plugin only adapts:
 * the correlation cookie set and deleted, the request's logger and cookies handed in, the
 * session plugin's `reply.signIn` handed in as the session issuer, and the pipeline's answer
 * turned into a redirect to the return URL, the login page's failure message (`fail`) or the
 * access-denied page of an application's refusal. The protocol handlers
 * (plugins/providers/*-sign-in.ts, oauth-vendors.ts) call `beginFlow`, `takeFlow` (its handle goes
 * to `complete`, and its `correlationFailure` to `fail`), `complete` and `fail`.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { CookieSerializeOptions } from '@fastify/cookie'
import { COOKIE_NAMES, cookieName, type CookieNames } from '../application-name.js'
import { isLoopbackHost, parsePublicOrigin } from '../http/host-trust.js'
import type { KeyRing } from '../data-protection/key-ring.js'
import { ReplayCache } from '../state/replay-cache.js'
import { outcomeOf, SIGN_IN_OUTCOMES, type SignInFailure } from '../sign-in/sign-in-failure.js'
import { SignInRefusal } from '../errors.js'
import { identityAuditFields, type UserIdentity } from '../session/user-identity.js'
import type { ApplicationConfiguration } from '../providers/application-schema.js'
import { FLOW_LIFETIME_SECONDS, PendingFlows } from '../sign-in/pending-flows.js'
import type { SignInResult } from '../sign-in/completion.js'
import { SignInPipeline, type SessionIssuer, type TakenFlow } from '../sign-in/pipeline.js'
import type { ProvisioningAdmission } from '../sign-in/provisioning-admission.js'
import type { SignInHookSettings } from '../sign-in/sign-in-hook.js'
import { sessionStoreOf } from './session.js'
import { sectionKeyOf } from '../providers/provider-instances.js'

declare module 'fastify' {
  interface FastifyInstance {
    externalSignIn: {
      /**
       * Seals the flow's state into its correlation cookie (nothing is written to the state
       * store); returns the flow id (use as state/RelayState).
       */
      beginFlow: (reply: FastifyReply, scheme: string, returnUrl: string, data: Readonly<Record<string, string>>) => Promise<string>
      /**
       * Deletes the flow's correlation cookie and returns the handle of the flow sealed in it:
       * `flow` is undefined when missing, foreign, tampered, expired or already completed, and
       * `correlationFailure` is what to `fail` with then (`replay` for the latter). Reads the
       * store, never writes: {@link complete} records the flow as used once the provider's
       * response is verified.
       */
      takeFlow: (request: FastifyRequest, reply: FastifyReply, scheme: string, flowId: unknown) => Promise<TakenFlow>
      /**
       * Runs the pipeline's completion (sign-in/pipeline.ts) for the taken flow: records it as
       * used (a second completion of the same flow is refused as `replay`), normalizes claims,
       * runs the application's hook, signs in with Cookies and redirects to the return URL.
       * Call it only with claims from a verified provider response; `taken` is undefined only
       * for an unsolicited response the provider admits.
       */
      complete: (request: FastifyRequest, reply: FastifyReply, taken: TakenFlow | undefined, result: SignInResult) => Promise<FastifyReply>
      /** Whether the request carries a correlation cookie (a sign-in of this browser is pending); reads nothing else. */
      holdsFlow: (request: FastifyRequest) => boolean
      /**
       * Logs the failure class (never a code, token or assertion) and shows the login page's safe
       * message. `identity`: who, when the provider's response was verified before the refusal
       * (an unverified response's identity is never logged).
       */
      fail: (request: FastifyRequest, reply: FastifyReply, scheme: string, failure: SignInFailure, error?: unknown, identity?: UserIdentity) => FastifyReply
      /**
       * `ProjectTemplate:Hosting:PublicOrigin`; only in Development without one, the request's own
       * scheme and host (already checked by plugins/host-filtering.ts).
       */
      publicOrigin: (request: FastifyRequest) => string
    }
  }
}

export interface ExternalSignInOptions {
  readonly config: ApplicationConfiguration
  /** The session cookie's Development override decides for the correlation cookie's name too. */
  readonly insecureCookies: boolean
  readonly environmentName: string
  readonly keyRing: KeyRing
  /** Milliseconds since the epoch. */
  readonly now: () => number
  /** The application's cookie names (application-name.ts); default `ProjectTemplate`'s. */
  readonly cookieNames?: CookieNames
  /** The configuration root key (`ProjectTemplate`, or the app's name) for keys named in log lines. */
  readonly rootKey: string
  /** The application's sign-in hook and its time limit (sign-in/sign-in-hook.ts). */
  readonly signInHook?: SignInHookSettings
  /** SCIM provisioning's sign-in step (sign-in/provisioning-admission.ts); absent without provisioning. */
  readonly provisioning?: ProvisioningAdmission
}

/**
 * A refusal's `diagnostics` (errors.ts, SignInRefusal): safe log fields it chose (HTTP status, OAuth
 * error code, network cause code, the setting to change; never a description, token or secret);
 * any other error has none. A setting is named under the app's root key where the refusal was made.
 */
function diagnosticsOf (error: Error): Record<string, string | number> {
  if (!(error instanceof SignInRefusal)) return {}
  return Object.fromEntries(Object.entries(error.diagnostics)
    .filter(([, value]) => typeof value === 'string' || typeof value === 'number')) as Record<string, string | number>
}

/** The id of the session whose cookie the request carries, if any. */
function carriedSessionId (app: FastifyInstance, request: FastifyRequest): string | undefined {
  return sessionStoreOf(app).sessionIdOf(request.cookies[app.session.cookie.name])
}

/** `beginFlow`, `takeFlow` and `holdsFlow`: the pending flow's cookie written, found and deleted. */
function flowCookies (app: FastifyInstance, pipeline: SignInPipeline, cookieOptions: CookieSerializeOptions): Pick<FastifyInstance['externalSignIn'], 'beginFlow' | 'takeFlow' | 'holdsFlow'> {
  const deleteOptions: CookieSerializeOptions = { ...cookieOptions, maxAge: 0, expires: new Date(0) }
  return {
    async beginFlow (reply, scheme, returnUrl, data) {
      const request = reply.request
      const previousSessionId = carriedSessionId(app, request)
      const started = pipeline.begin(request.cookies, { scheme, returnUrl, data, ...(previousSessionId === undefined ? {} : { previousSessionId }) }, request.log)
      reply.setCookie(started.cookieName, started.cookieValue, cookieOptions)
      return started.flowId
    },
    async takeFlow (request, reply, scheme, flowId) {
      const { taken, cookieToDelete, noCookies } = await pipeline.take(request.cookies, scheme, flowId)
      if (cookieToDelete !== undefined) reply.setCookie(cookieToDelete, '', deleteOptions)
      if (noCookies && request.protocol === 'http' && !isLoopbackHost(request.hostname)) {
        // Browsers drop Secure cookies over plain http to anything but localhost.
        request.log.warn({ event: 'external.correlation.insecure_transport' }, 'a sign-in callback arrived over http without its correlation cookie: browsers keep Secure cookies only over https (or http://localhost). Serve the app over https, or behind a TLS proxy set ForwardedHeaders:Enabled with its address in ForwardedHeaders:KnownProxies')
      }
      return taken
    },
    holdsFlow: (request) => pipeline.holds(request.cookies)
  }
}

/** `fail`: one log line (the failure class, never a code, token or assertion) and the login page's safe message. */
function failure (): FastifyInstance['externalSignIn']['fail'] {
  return function fail (request, reply, scheme, failure, error, identity) {
    const details = error instanceof Error ? { errorName: error.name, errorCode: (error as { code?: unknown }).code, ...diagnosticsOf(error) } : {}
    const outcome = outcomeOf(failure)
    const shown = SIGN_IN_OUTCOMES[outcome]
    request.log.warn({ event: 'external.sign_in.failed', ...(identity === undefined ? {} : identityAuditFields(identity)), provider: scheme, failure, code: shown.code, ...details }, 'external sign-in failed')
    if (shown.page === 'refusal') return sendSignInRefusal(request, reply, shown.message)
    return reply.redirect(`/Account/Login?failure=${outcome}`, 302)
  }
}

/**
 * A refused sign-in (an organisation not set up, a user the application refused): 403 with the
 * fixed `message` and this request's id, the `reqId` of its `external.sign_in.failed` (or
 * `external.sign_in.refused_by_application`) line and of its completion line.
 */
function sendSignInRefusal (request: FastifyRequest, reply: FastifyReply, message: string): FastifyReply {
  return reply.code(403).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(request.server.pages.accessDeniedPage(undefined, message, request.id))
}

/** The session plugin, adapted to this request and reply, as the pipeline's session issuer. */
function sessionIssuerOf (app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): SessionIssuer {
  return {
    issue: async (signInRequest) => await reply.signIn(signInRequest),
    carriedSessionId: () => carriedSessionId(app, request),
    end: async (sessionId) => { await app.session.revokeSession(sessionId) }
  }
}

/** `complete`: the pipeline's completion, and its answer as a redirect, a failure or the access-denied page. */
function completion (app: FastifyInstance, pipeline: SignInPipeline, fail: FastifyInstance['externalSignIn']['fail']): FastifyInstance['externalSignIn']['complete'] {
  return async function complete (request, reply, taken, result) {
    const completed = await pipeline.complete(taken, result, sessionIssuerOf(app, request, reply), request.log)
    if ('failed' in completed) return fail(request, reply, result.scheme, completed.failed, completed.error, completed.identity)
    if ('refusedByApplication' in completed) return sendSignInRefusal(request, reply, completed.refusedByApplication)
    return reply.redirect(completed.returnUrl, 302)
  }
}

async function externalSignIn (app: FastifyInstance, options: ExternalSignInOptions): Promise<void> {
  const { rootKey } = options
  // Over http in Development the cookie drops the __Host- prefix but stays Secure and
  // SameSite=None: browsers treat http://localhost as a secure context, and a cross-site POST
  // callback (SAML, form_post) from a real IdP still carries it (docs/providers.md, "Local
  // development over http://localhost").
  const pipeline = new SignInPipeline({
    flows: new PendingFlows({
      cookiePrefix: cookieName((options.cookieNames ?? COOKIE_NAMES).correlation, !options.insecureCookies),
      keyRing: options.keyRing,
      now: options.now,
      completed: new ReplayCache(app.state, 'sign-in-flow')
    }),
    claimsTransformation: options.config.Authentication.ClaimsTransformation,
    authorization: options.config.Authorization,
    rootKey,
    sectionKeyOf: (scheme) => sectionKeyOf(scheme, rootKey),
    ...(options.signInHook === undefined ? {} : { signInHook: options.signInHook }),
    ...(options.provisioning === undefined ? {} : { provisioning: options.provisioning })
  })
  const cookieOptions: CookieSerializeOptions = { httpOnly: true, secure: true, sameSite: 'none', path: '/', maxAge: FLOW_LIFETIME_SECONDS }
  // Startup validation guarantees a valid PublicOrigin outside Development when a provider is enabled.
  const { PublicOrigin } = options.config.Hosting
  const configuredOrigin = PublicOrigin.trim() === '' ? undefined : parsePublicOrigin(PublicOrigin, options.environmentName)
  const publicOrigin = (request: FastifyRequest): string => configuredOrigin ?? `${request.protocol}://${request.host}`
  const fail = failure()
  app.decorate('externalSignIn', { ...flowCookies(app, pipeline, cookieOptions), fail, complete: completion(app, pipeline, fail), publicOrigin })
}

export default fp(externalSignIn, { name: 'external-sign-in', dependencies: ['@fastify/cookie', 'session'] })
