/**
 * What every external provider shares: the pending sign-in flow that binds a callback to the
 * browser that started it (sign-in/pending-flows.ts: the correlation cookies), and the two ways a
 * flow ends: signed in (sign-in/completion.ts, then the application's sign-in hook and
 * `reply.signIn`), or a safe failure (the login page's message, one log line). This file is the
 * Fastify glue: cookies in and out, log lines, redirects.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { CookieSerializeOptions } from '@fastify/cookie'
import { COOKIE_NAMES, cookieName, rerootKeyPaths, type CookieNames } from '../application-name.js'
import { findGroupPathMismatch } from '../sign-in/group-paths.js'
import { isLoopbackHost, parsePublicOrigin } from '../http/host-trust.js'
import type { KeyRing } from '../data-protection/key-ring.js'
import { isLocalUrl } from '../http/local-url.js'
import { ReplayCache } from '../state/replay-cache.js'
import type { Claim } from '../session/principal.js'
import { outcomeOf, SIGN_IN_OUTCOMES, type SignInFailure } from '../sign-in/sign-in-failure.js'
import { SignInRefusal } from '../sign-in/refusal.js'
import { auditFieldsOf, identityAuditFields, identityOfTicket, type UserIdentity } from '../session/user-identity.js'
import { ROOT_KEY, type ApplicationConfiguration } from '../config/schema.js'
import { FLOW_LIFETIME_SECONDS, PendingFlows, type FlowState } from '../sign-in/pending-flows.js'
import { applicationClaimsOf, sessionClaimsOf, type SignInResult } from '../sign-in/completion.js'
import { previousSessionToEnd } from '../sign-in/previous-session.js'
import { sessionStoreOf } from './session.js'
import { applySignInHook, type SignInHookSettings } from './sign-in-hook.js'
import { sectionKeyOf } from '../config/provider-instances.js'

export { FLOW_LIFETIME_SECONDS, MAX_FLOWS_PER_BROWSER, type FlowState } from '../sign-in/pending-flows.js'
export { TENANT_CLAIM_TYPE, type SignInResult } from '../sign-in/completion.js'

/** The closed set of failure classes `fail()` logs as `failure` (auth/sign-in-failure.ts maps each to its login-page outcome). */
export type FailureClass = SignInFailure

declare module 'fastify' {
  interface FastifyInstance {
    externalSignIn: {
      /**
       * Seals the flow's state into its correlation cookie (nothing is written to the state
       * store); returns the flow id (use as state/RelayState).
       */
      beginFlow: (reply: FastifyReply, scheme: string, returnUrl: string, data: Readonly<Record<string, string>>) => Promise<string>
      /**
       * Deletes the flow's correlation cookie and returns the state sealed in it; undefined when
       * missing, foreign, tampered, expired or already completed (a following
       * `fail(..., 'correlation')` then logs `replay` for the latter). Reads the store, never
       * writes: {@link complete} records the flow as used once the provider's response is verified.
       */
      takeFlow: (request: FastifyRequest, reply: FastifyReply, scheme: string, flowId: unknown) => Promise<FlowState | undefined>
      /**
       * Records the taken flow as used (a second completion of the same flow is refused as
       * `replay`), normalizes claims, signs in with Cookies and redirects to the return URL.
       * Call it only with claims from a verified provider response.
       */
      complete: (request: FastifyRequest, reply: FastifyReply, result: SignInResult) => Promise<FastifyReply>
      /** Whether the request carries a correlation cookie (a sign-in of this browser is pending); reads nothing else. */
      holdsFlow: (request: FastifyRequest) => boolean
      /**
       * Logs the failure class (never a code, token or assertion) and shows the login page's safe
       * message. `identity`: who, when the provider's response was verified before the refusal
       * (an unverified response's identity is never logged).
       */
      fail: (request: FastifyRequest, reply: FastifyReply, scheme: string, failure: FailureClass, error?: unknown, identity?: UserIdentity) => FastifyReply
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
  readonly rootKey?: string
  /** The application's sign-in hook and its time limit (plugins/sign-in-hook.ts). */
  readonly signInHook?: SignInHookSettings
}

/**
 * A refusal's `diagnostics` (sign-in/refusal.ts): safe log fields it chose (HTTP status, OAuth
 * error code, network cause code, the setting to change; never a description, token or secret);
 * any other error has none. A setting named under the default root is moved under `rootKey`.
 */
function diagnosticsOf (error: Error, rootKey: string): Record<string, string | number> {
  if (!(error instanceof SignInRefusal)) return {}
  return Object.fromEntries(Object.entries(error.diagnostics)
    .filter(([, value]) => typeof value === 'string' || typeof value === 'number')
    .map(([name, value]) => [name, typeof value === 'string' ? rerootKeyPaths(value, rootKey) : value])) as Record<string, string | number>
}

const TAKEN_FLOW = Symbol('externalSignIn.takenFlow')
const TAKE_FAILURE = Symbol('externalSignIn.takeFailure')
type RequestWithFlow = FastifyRequest & { [TAKE_FAILURE]?: FailureClass, [TAKEN_FLOW]?: FlowState }

/** The id of the session whose cookie the request carries, if any. */
function carriedSessionId (app: FastifyInstance, request: FastifyRequest): string | undefined {
  return sessionStoreOf(app).sessionIdOf(request.cookies[app.session.cookie.name])
}

/** `beginFlow` and `takeFlow`: the pending flow's cookie written, found and deleted. */
function flowCookies (app: FastifyInstance, flows: PendingFlows, cookieOptions: CookieSerializeOptions): Pick<FastifyInstance['externalSignIn'], 'beginFlow' | 'takeFlow' | 'holdsFlow'> {
  const deleteOptions: CookieSerializeOptions = { ...cookieOptions, maxAge: 0, expires: new Date(0) }
  return {
    async beginFlow (reply, scheme, returnUrl, data) {
      const request = reply.request
      const previousSessionId = carriedSessionId(app, request)
      const started = flows.start(request.cookies, { scheme, returnUrl, data, ...(previousSessionId === undefined ? {} : { previousSessionId }) })
      if (started.shortened !== undefined) request.log.info({ event: 'external.flow.return_url_shortened', ...started.shortened }, 'the return URL is too long for the correlation cookie: the sign-in returns to a shorter one')
      if (started.replacedOlder) request.log.debug({ event: 'external.flow.pruned', count: 1 }, 'an older sign-in flow of this browser abandoned')
      reply.setCookie(started.cookieName, started.cookieValue, cookieOptions)
      return started.flowId
    },
    async takeFlow (request, reply, scheme, flowId) {
      const found = await flows.find(request.cookies, scheme, flowId)
      if (found.cookieToDelete !== undefined) reply.setCookie(found.cookieToDelete, '', deleteOptions)
      if (found.noCookies && request.protocol === 'http' && !isLoopbackHost(request.hostname)) {
        // Browsers drop Secure cookies over plain http to anything but localhost.
        request.log.warn({ event: 'external.correlation.insecure_transport' }, 'a sign-in callback arrived over http without its correlation cookie: browsers keep Secure cookies only over https (or http://localhost). Serve the app over https, or behind a TLS proxy set ForwardedHeaders:Enabled with its address in ForwardedHeaders:KnownProxies')
      }
      if (found.replayed) (request as RequestWithFlow)[TAKE_FAILURE] = 'replay'
      if (found.flow !== undefined) (request as RequestWithFlow)[TAKEN_FLOW] = found.flow
      return found.flow
    },
    holdsFlow: (request) => flows.holds(request.cookies)
  }
}

/** `fail`: one log line (the failure class, never a code, token or assertion) and the login page's safe message. */
function failure (rootKey: string): FastifyInstance['externalSignIn']['fail'] {
  return function fail (request, reply, scheme, reported, error, identity) {
    const takeFailure = (request as RequestWithFlow)[TAKE_FAILURE]
    const failure = reported === 'correlation' && takeFailure !== undefined ? takeFailure : reported
    const details = error instanceof Error ? { errorName: error.name, errorCode: (error as { code?: unknown }).code, ...diagnosticsOf(error, rootKey) } : {}
    const outcome = outcomeOf(failure)
    request.log.warn({ event: 'external.sign_in.failed', ...(identity === undefined ? {} : identityAuditFields(identity)), provider: scheme, failure, code: SIGN_IN_OUTCOMES[outcome].code, ...details }, 'external sign-in failed')
    return reply.redirect(`/Account/Login?failure=${outcome}`, 302)
  }
}

/**
 * Logs group overage; true when the sign-in goes on (no overage, or `AcceptGroupOverage`).
 * Without its groups the user would pass every group-based deny rule: refused by default.
 */
function acceptsGroupOverage (request: FastifyRequest, result: SignInResult, rootKey: string): boolean {
  if (result.groupOverage === undefined) return true
  const accepted = result.acceptGroupOverage === true
  request.log[accepted ? 'info' : 'warn']({
    event: 'external.sign_in.group_overage',
    provider: result.scheme,
    indicator: result.groupOverage,
    accepted,
    setting: `${sectionKeyOf(result.scheme, rootKey)}:AcceptGroupOverage`
  }, accepted ? 'group overage accepted: the user has no group claims' : 'group overage: the provider left the groups out; sign-in refused')
  return accepted
}

/** Once per process: group claims that arrive as paths (/admins) while policies name bare groups. */
function groupPathReporter (config: ApplicationConfiguration, rootKey: string): (request: FastifyRequest, provider: string, claims: readonly Claim[]) => void {
  let reported = false
  return (request, provider, claims) => {
    if (reported) return
    const mismatch = findGroupPathMismatch(claims, config.Authorization)
    if (mismatch === undefined) return
    reported = true
    const entry = { event: 'authorization.group_path_mismatch', provider, keys: mismatch.keys.map((key) => rerootKeyPaths(key, rootKey)) }
    if (mismatch.keys.length > 0) request.log.warn(entry, 'a policy names a group without the leading slash of the group paths the provider sends')
    else request.log.info(entry, 'the provider sends group paths: name groups in policies with their leading slash')
  }
}

/** The session the browser had at the challenge, when the callback did not carry it (a cross-site POST). */
async function endPreviousSession (app: FastifyInstance, request: FastifyRequest, flow: FlowState | undefined): Promise<void> {
  const sessionId = previousSessionToEnd(flow?.previousSessionId, carriedSessionId(app, request))
  if (sessionId === undefined) return
  await app.session.revokeSession(sessionId).catch((error: unknown) => {
    request.log.warn({ event: 'session.end_failed', errorName: (error as Error).name }, 'previous session not ended')
  })
}

/**
 * `complete`: group overage, claims, one completion per flow (on every instance: the first
 * verified response records it), the sign-in hook, then the session and the redirect.
 */
function completion (app: FastifyInstance, flows: PendingFlows, fail: FastifyInstance['externalSignIn']['fail'], options: ExternalSignInOptions, rootKey: string): FastifyInstance['externalSignIn']['complete'] {
  const reportGroupPaths = groupPathReporter(options.config, rootKey)
  return async function complete (request, reply, result) {
    if (!acceptsGroupOverage(request, result, rootKey)) return fail(request, reply, result.scheme, 'group_overage')
    const claims = applicationClaimsOf(result, options.config.Authentication.ClaimsTransformation)
    if (claims === undefined) return fail(request, reply, result.scheme, 'claims')
    // The response is verified: its identity may be logged with a refusal from here on.
    const identity = identityOfTicket({ scheme: result.scheme, claims })
    const flow = (request as RequestWithFlow)[TAKEN_FLOW]
    if (flow !== undefined && !await flows.markCompleted(flow)) return fail(request, reply, result.scheme, 'replay', undefined, identity)
    const hooked = await applySignInHook(options.signInHook, request, reply, result.scheme, identity, claims)
    if ('refused' in hooked) return hooked.refused
    const session = sessionClaimsOf(result, hooked.claims)
    let principal
    try {
      principal = await reply.signIn({
        scheme: result.scheme,
        claims: session.claims,
        ...(result.tokens === undefined ? {} : { tokens: result.tokens }),
        ...(session.indexKeys === undefined ? {} : { indexKeys: session.indexKeys })
      })
    } catch (error) {
      // More claims than a session record may hold (far beyond hundreds of groups): a failed
      // sign-in, not a 500. Nothing has been written yet. Store failures answer 503.
      if (error instanceof RangeError) return fail(request, reply, result.scheme, 'claims', error, identity)
      throw error
    }
    await endPreviousSession(app, request, flow)
    request.log.info({ event: 'external.sign_in.succeeded', ...auditFieldsOf(principal.ticket) }, 'external sign-in succeeded')
    reportGroupPaths(request, result.scheme, claims)
    return reply.redirect(isLocalUrl(result.returnUrl) ? result.returnUrl : '/', 302)
  }
}

async function externalSignIn (app: FastifyInstance, options: ExternalSignInOptions): Promise<void> {
  const rootKey = options.rootKey ?? ROOT_KEY
  // Over http in Development the cookie drops the __Host- prefix but stays Secure and
  // SameSite=None: browsers treat http://localhost as a secure context, and a cross-site POST
  // callback (SAML, form_post) from a real IdP still carries it (docs/providers.md).
  const flows = new PendingFlows({
    cookiePrefix: cookieName((options.cookieNames ?? COOKIE_NAMES).correlation, !options.insecureCookies),
    keyRing: options.keyRing,
    now: options.now,
    completed: new ReplayCache(app.state, 'sign-in-flow')
  })
  const cookieOptions: CookieSerializeOptions = { httpOnly: true, secure: true, sameSite: 'none', path: '/', maxAge: FLOW_LIFETIME_SECONDS }
  // Startup validation guarantees a valid PublicOrigin outside Development when a provider is enabled.
  const { PublicOrigin } = options.config.Hosting
  const configuredOrigin = PublicOrigin.trim() === '' ? undefined : parsePublicOrigin(PublicOrigin, options.environmentName)
  const publicOrigin = (request: FastifyRequest): string => configuredOrigin ?? `${request.protocol}://${request.host}`
  const fail = failure(rootKey)
  app.decorate('externalSignIn', { ...flowCookies(app, flows, cookieOptions), fail, complete: completion(app, flows, fail, options, rootKey), publicOrigin })
}

export default fp(externalSignIn, { name: 'external-sign-in', dependencies: ['@fastify/cookie', 'session'] })
