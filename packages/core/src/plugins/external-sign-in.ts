/**
 * What every external provider shares: the pending sign-in flow that binds a callback to the
 * browser that started it, and the two ways a flow ends (signed in, or a safe failure).
 *
 * A flow's state (scheme, return URL, PKCE verifier, nonce, SAML request id, expiry, the session
 * the browser had) is sealed into the browser's correlation cookie with its own purpose, as
 * ASP.NET Core's remote authentication handlers do: starting a sign-in writes nothing on the
 * server, so anonymous traffic cannot fill the state store (docs/security.md, "Resource
 * exhaustion"). The cookie, `__Host-ProjectTemplate.Correlation.<slot 0-3>` = `<issued at (ms),
 * base 36>.<sealed state>`, is HttpOnly, Secure, SameSite=None so a cross-site POST callback
 * (SAML, form_post) carries it; about 300 bytes, never more than 984 (a return URL that would
 * not fit is shortened: sign-in/correlation-slots.ts). The flow id travels as OAuth `state`
 * or SAML `RelayState` and must equal the id sealed in one of the browser's slots. Only after the
 * provider's response has been verified is the flow recorded as used (a `replay:sign-in-flow:`
 * record until the flow's expiry), so a replayed callback is refused as `replay` on every
 * instance. A browser holds at most {@link MAX_FLOWS_PER_BROWSER} correlation cookies, by
 * construction: their names are fixed slots, and a new flow overwrites a free or the oldest one.
 */
import { randomBytes } from 'node:crypto'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { CookieSerializeOptions } from '@fastify/cookie'
import { COOKIE_NAMES, cookieName, rerootKeyPaths, type CookieNames } from '../application-name.js'
import { openJson, sealBytes } from '../data-protection/authenticated-encryption.js'
import { normalizeClaims } from '../sign-in/claims-normalization.js'
import { findGroupPathMismatch } from '../sign-in/group-paths.js'
import { isLoopbackHost, parsePublicOrigin } from '../http/host-trust.js'
import { purposesOf, type KeyRing } from '../data-protection/key-ring.js'
import { isLocalUrl } from '../http/local-url.js'
import { ReplayCache } from '../state/replay-cache.js'
import { ApplicationClaimTypes, type Claim } from '../session/principal.js'
import { providerIndexKeyOf } from '../session/session-store.js'
import { outcomeOf, SIGN_IN_OUTCOMES, type SignInFailure } from '../sign-in/sign-in-failure.js'
import { SignInRefusal } from '../sign-in/refusal.js'
import { auditFieldsOf, identityAuditFields, identityOfTicket, type UserIdentity } from '../session/user-identity.js'
import type { GroupOverageIndicator } from '../sign-in/group-overage.js'
import { ROOT_KEY, type ApplicationConfiguration } from '../config/schema.js'
import { chooseSlot, CORRELATION_SLOTS, fitFlowState, MAX_SEALED_FLOW_LENGTH, slotOfCookieName } from '../sign-in/correlation-slots.js'
import { previousSessionToEnd } from '../sign-in/previous-session.js'
import { sessionStoreOf } from './session.js'
import { applySignInHook, type SignInHookSettings } from './sign-in-hook.js'
import { sectionKeyOf } from '../config/provider-instances.js'

/** Correlation state of one flow, as sealed in its cookie. */
export interface FlowState {
  readonly scheme: string
  readonly flowId: string
  /** Validated local return URL. */
  readonly returnUrl: string
  /** Seconds since the epoch. */
  readonly expiresAt: number
  /** Protocol values: PKCE verifier, nonce, SAML request id... */
  readonly data: Readonly<Record<string, string>>
  /** The session the browser had at the challenge (ended on completion: a cross-site POST callback does not carry it). */
  readonly previousSessionId?: string
}

/** The closed set of failure classes `fail()` logs as `failure` (auth/sign-in-failure.ts maps each to its login-page outcome). */
export type FailureClass = SignInFailure

export interface SignInResult {
  readonly scheme: string
  /** Provider claims before normalization. */
  readonly claims: readonly Claim[]
  /** Stored in the ticket; pass only when the provider's SaveTokens is true. */
  readonly tokens?: Readonly<Record<string, string>>
  /** Extra session index keys (back-channel logout by provider sid/sub). */
  readonly indexKeys?: readonly string[]
  readonly returnUrl: string
  /** The provider's ClaimMappings and provider-specific defaults. */
  readonly claimMappings?: Readonly<Record<string, string>>
  readonly providerDefaults?: Readonly<Record<string, string>>
  /**
   * The provider's answer says the groups were left out (sign-in/group-overage.ts): the sign-in
   * is refused (`group_overage`) unless {@link acceptGroupOverage}; logged either way.
   */
  readonly groupOverage?: GroupOverageIndicator
  /** The provider's `AcceptGroupOverage`. */
  readonly acceptGroupOverage?: boolean
  /**
   * Set for a provider from the app's provider source: the tenant key its definition attached
   * becomes the `application:tenant` claim (issuer: the scheme), and any claim of that type from
   * the provider or the hook is dropped; the session joins the provider's index (revocation on
   * removal).
   */
  readonly runtime?: { readonly tenant?: string }
}

/** The claim type of the tenant key a runtime provider's definition attaches (issue 28). */
export const TENANT_CLAIM_TYPE = 'application:tenant'

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

export const FLOW_LIFETIME_SECONDS = 600
/** Most correlation cookies one browser holds (fixed slots); starting another flow overwrites a free or the oldest one. */
export const MAX_FLOWS_PER_BROWSER = CORRELATION_SLOTS
const FLOW_ID = /^[A-Za-z0-9_-]{22}$/
const COOKIE_VALUE = /^([0-9a-z]{1,11})\.(.+)$/s
const TAKEN_FLOW = Symbol('externalSignIn.takenFlow')
const TAKE_FAILURE = Symbol('externalSignIn.takeFailure')
type RequestWithFlow = FastifyRequest & { [TAKE_FAILURE]?: FailureClass, [TAKEN_FLOW]?: FlowState }

/** The state as sealed in the cookie: short names keep the cookie small. */
interface SealedFlow {
  readonly s: string
  readonly f: string
  readonly r: string
  readonly e: number
  readonly d: Readonly<Record<string, string>>
  /** The previous session's id, when the challenge carried a session cookie. */
  readonly p?: string
}

function isStringRecord (value: unknown): value is Readonly<Record<string, string>> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) &&
    Object.values(value).every((item) => typeof item === 'string')
}

async function externalSignIn (app: FastifyInstance, options: ExternalSignInOptions): Promise<void> {
  const { config, keyRing, now } = options
  const rootKey = options.rootKey ?? ROOT_KEY
  // Over http in Development the cookie drops the __Host- prefix but stays Secure and
  // SameSite=None: browsers treat http://localhost as a secure context, and a cross-site POST
  // callback (SAML, form_post) from a real IdP still carries it (docs/providers.md).
  const prefix = cookieName((options.cookieNames ?? COOKIE_NAMES).correlation, !options.insecureCookies)
  // The ring's application's purpose (data-protection/key-ring.ts).
  const PURPOSE = Buffer.from(purposesOf(keyRing).correlation)
  const cookieOptions: CookieSerializeOptions = { httpOnly: true, secure: true, sameSite: 'none', path: '/', maxAge: FLOW_LIFETIME_SECONDS }
  const deleteOptions: CookieSerializeOptions = { ...cookieOptions, maxAge: 0, expires: new Date(0) }
  const transformation = config.Authentication.ClaimsTransformation
  const completedFlows = new ReplayCache(app.state, 'sign-in-flow')

  /** The correlation slots this request carries: slot → [issued at in ms (0 when unreadable), value]. */
  function presentSlots (request: FastifyRequest): Map<number, [number, string]> {
    const slots = new Map<number, [number, string]>()
    for (const [name, value] of Object.entries(request.cookies)) {
      const slot = slotOfCookieName(name, prefix)
      if (slot === undefined || value === undefined || value === '') continue
      const match = COOKIE_VALUE.exec(value)
      slots.set(slot, [match === null ? 0 : Number.parseInt(match[1] ?? '0', 36), value])
    }
    return slots
  }

  async function beginFlow (reply: FastifyReply, scheme: string, returnUrl: string, data: Readonly<Record<string, string>>): Promise<string> {
    const request = reply.request
    const issuedAt = Math.floor(now() / 1000)
    const flowId = randomBytes(16).toString('base64url')
    const previous = request.cookies[app.session.cookie.name]
    const previousId = previous === undefined || previous === '' ? undefined : sessionStoreOf(app).sessionIdOf(previous)
    const sealed = fitFlowState((r) => JSON.stringify({ s: scheme, f: flowId, r, e: issuedAt + FLOW_LIFETIME_SECONDS, d: { ...data }, ...(previousId === undefined ? {} : { p: previousId }) } satisfies SealedFlow), returnUrl)
    if (sealed.shortened) request.log.info({ event: 'external.flow.return_url_shortened', length: returnUrl.length, kept: sealed.returnUrl.length }, 'the return URL is too long for the correlation cookie: the sign-in returns to a shorter one')
    const slots = new Map([...presentSlots(request)].map(([slot, [at]]) => [slot, at]))
    // Milliseconds in the cookie's clear prefix: which slot is the oldest, even within one second.
    const issuedAtMs = now()
    const slot = chooseSlot(slots, issuedAtMs, FLOW_LIFETIME_SECONDS * 1000, (count) => randomBytes(1)[0]! % count)
    if (slots.has(slot)) request.log.debug({ event: 'external.flow.pruned', count: 1 }, 'an older sign-in flow of this browser abandoned')
    reply.setCookie(`${prefix}${slot}`, `${issuedAtMs.toString(36)}.${sealBytes(sealed.json, keyRing, PURPOSE)}`, cookieOptions)
    return flowId
  }

  async function takeFlow (request: FastifyRequest, reply: FastifyReply, scheme: string, flowId: unknown): Promise<FlowState | undefined> {
    if (typeof flowId !== 'string' || !FLOW_ID.test(flowId)) return undefined
    const slots = presentSlots(request)
    if (slots.size === 0) {
      if (request.protocol === 'http' && !isLoopbackHost(request.hostname)) {
        // Browsers drop Secure cookies over plain http to anything but localhost.
        request.log.warn({ event: 'external.correlation.insecure_transport' }, 'a sign-in callback arrived over http without its correlation cookie: browsers keep Secure cookies only over https (or http://localhost). Serve the app over https, or behind a TLS proxy set ForwardedHeaders:Enabled with its address in ForwardedHeaders:KnownProxies')
      }
      return undefined
    }
    // The slot whose sealed flow id is the callback's state (at most four opens); only it is deleted.
    let state: Partial<SealedFlow> | undefined
    for (const [slot, [, value]] of slots) {
      const sealed = COOKIE_VALUE.exec(value)?.[2]
      const opened = sealed === undefined ? undefined : openJson<SealedFlow>(sealed, keyRing, PURPOSE, MAX_SEALED_FLOW_LENGTH)
      if (opened?.f !== flowId) continue
      reply.setCookie(`${prefix}${slot}`, '', deleteOptions)
      state = opened
      break
    }
    if (state === undefined) return undefined
    if (state.s !== scheme || state.f !== flowId || typeof state.e !== 'number' ||
      state.e <= Math.floor(now() / 1000) || !isLocalUrl(state.r) || !isStringRecord(state.d) ||
      (state.p !== undefined && typeof state.p !== 'string')) return undefined
    // A completed flow stays completed on every instance (a read; the record is written by complete()).
    if (await completedFlows.seen(flowId)) {
      (request as RequestWithFlow)[TAKE_FAILURE] = 'replay'
      return undefined
    }
    const flow: FlowState = { scheme: state.s, flowId: state.f, returnUrl: state.r, expiresAt: state.e, data: state.d, ...(state.p === undefined ? {} : { previousSessionId: state.p }) }
    ;(request as RequestWithFlow)[TAKEN_FLOW] = flow
    return flow
  }

  function fail (request: FastifyRequest, reply: FastifyReply, scheme: string, reported: FailureClass, error?: unknown, identity?: UserIdentity): FastifyReply {
    const takeFailure = (request as RequestWithFlow)[TAKE_FAILURE]
    const failure = reported === 'correlation' && takeFailure !== undefined ? takeFailure : reported
    const details = error instanceof Error ? { errorName: error.name, errorCode: (error as { code?: unknown }).code, ...diagnosticsOf(error, rootKey) } : {}
    const outcome = outcomeOf(failure)
    request.log.warn({ event: 'external.sign_in.failed', ...(identity === undefined ? {} : identityAuditFields(identity)), provider: scheme, failure, code: SIGN_IN_OUTCOMES[outcome].code, ...details }, 'external sign-in failed')
    return reply.redirect(`/Account/Login?failure=${outcome}`, 302)
  }

  // Once per process: group claims that arrive as paths (/admins) while policies name bare groups.
  let groupPathsReported = false
  function reportGroupPaths (request: FastifyRequest, provider: string, claims: readonly Claim[]): void {
    const mismatch = findGroupPathMismatch(claims, config.Authorization)
    if (mismatch === undefined) return
    groupPathsReported = true
    const entry = { event: 'authorization.group_path_mismatch', provider, keys: mismatch.keys.map((key) => rerootKeyPaths(key, rootKey)) }
    if (mismatch.keys.length > 0) request.log.warn(entry, 'a policy names a group without the leading slash of the group paths the provider sends')
    else request.log.info(entry, 'the provider sends group paths: name groups in policies with their leading slash')
  }

  /** The session the browser had at the challenge, when the callback did not carry it (a cross-site POST). */
  async function endPreviousSession (request: FastifyRequest, flow: FlowState | undefined): Promise<void> {
    const carried = request.cookies[app.session.cookie.name]
    const sessionId = previousSessionToEnd(flow?.previousSessionId, carried === undefined || carried === '' ? undefined : sessionStoreOf(app).sessionIdOf(carried))
    if (sessionId === undefined) return
    await app.session.revokeSession(sessionId).catch((error: unknown) => {
      request.log.warn({ event: 'session.end_failed', errorName: (error as Error).name }, 'previous session not ended')
    })
  }

  async function complete (request: FastifyRequest, reply: FastifyReply, result: SignInResult): Promise<FastifyReply> {
    if (result.groupOverage !== undefined) {
      // Without its groups the user would pass every group-based deny rule: refused by default.
      const accepted = result.acceptGroupOverage === true
      request.log[accepted ? 'info' : 'warn']({
        event: 'external.sign_in.group_overage',
        provider: result.scheme,
        indicator: result.groupOverage,
        accepted,
        setting: `${sectionKeyOf(result.scheme, options.rootKey ?? ROOT_KEY)}:AcceptGroupOverage`
      }, accepted ? 'group overage accepted: the user has no group claims' : 'group overage: the provider left the groups out; sign-in refused')
      if (!accepted) return fail(request, reply, result.scheme, 'group_overage')
    }
    const claims = normalizeClaims(result.claims, {
      enabled: transformation.Enabled,
      removeOriginalClaims: transformation.RemoveOriginalClaims,
      ...(result.providerDefaults === undefined ? {} : { providerDefaults: result.providerDefaults }),
      ...(result.claimMappings === undefined ? {} : { overrides: result.claimMappings })
    })
    const hasSubject = claims.some((claim) => claim.type === ApplicationClaimTypes.Subject && claim.value !== '') ||
      (!transformation.Enabled && claims.length > 0)
    if (!hasSubject) return fail(request, reply, result.scheme, 'claims')
    // The response is verified: its identity may be logged with a refusal from here on.
    const identity = identityOfTicket({ scheme: result.scheme, claims })
    // One completion per flow, on every instance: the first verified response records it.
    const flow = (request as RequestWithFlow)[TAKEN_FLOW]
    if (flow !== undefined && !await completedFlows.remember(flow.flowId, flow.expiresAt * 1000, now())) {
      return fail(request, reply, result.scheme, 'replay', undefined, identity)
    }
    const hooked = await applySignInHook(options.signInHook, request, reply, result.scheme, identity, claims)
    if ('refused' in hooked) return hooked.refused
    // Only the provider source speaks for the tenant: never the provider's response or the hook.
    const tenant = result.runtime?.tenant
    const signedInClaims = result.runtime === undefined
      ? hooked.claims
      : [...hooked.claims.filter((claim) => claim.type !== TENANT_CLAIM_TYPE), ...(tenant === undefined ? [] : [{ type: TENANT_CLAIM_TYPE, value: tenant, issuer: result.scheme }])]
    const indexKeys = result.runtime === undefined ? result.indexKeys : [...(result.indexKeys ?? []), providerIndexKeyOf(result.scheme)]
    let principal
    try {
      principal = await reply.signIn({
        scheme: result.scheme,
        claims: signedInClaims,
        ...(result.tokens === undefined ? {} : { tokens: result.tokens }),
        ...(indexKeys === undefined ? {} : { indexKeys })
      })
    } catch (error) {
      // More claims than a session record may hold (far beyond hundreds of groups): a failed
      // sign-in, not a 500. Nothing has been written yet. Store failures answer 503.
      if (error instanceof RangeError) return fail(request, reply, result.scheme, 'claims', error, identity)
      throw error
    }
    await endPreviousSession(request, flow)
    request.log.info({ event: 'external.sign_in.succeeded', ...auditFieldsOf(principal.ticket) }, 'external sign-in succeeded')
    if (!groupPathsReported) reportGroupPaths(request, result.scheme, claims)
    return reply.redirect(isLocalUrl(result.returnUrl) ? result.returnUrl : '/', 302)
  }

  // Startup validation guarantees a valid PublicOrigin outside Development when a provider is enabled.
  const configuredOrigin = config.Hosting.PublicOrigin.trim() === '' ? undefined : parsePublicOrigin(config.Hosting.PublicOrigin, options.environmentName)
  function publicOrigin (request: FastifyRequest): string {
    return configuredOrigin ?? `${request.protocol}://${request.host}`
  }

  const holdsFlow = (request: FastifyRequest): boolean => Object.keys(request.cookies).some((name) => name.startsWith(prefix))

  app.decorate('externalSignIn', { beginFlow, takeFlow, holdsFlow, complete, fail, publicOrigin })
}

export default fp(externalSignIn, { name: 'external-sign-in', dependencies: ['@fastify/cookie', 'session'] })
