/**
 * What every external provider shares: the pending sign-in flow that binds a callback to the
 * browser that started it, and the two ways a flow ends (signed in, or a safe failure).
 *
 * A flow's state (scheme, return URL, PKCE verifier, nonce, SAML request id) lives in the state
 * store under `flow:<flow id>` for 10 minutes, sealed with its own purpose. The browser holds a
 * small correlation cookie, `__Host-ProjectTemplate.Correlation.<flow id>` = `<time>.<binding>`
 * (about 90 bytes: docs/security.md, "Correlation cookies"), HttpOnly, Secure, SameSite=None so a
 * cross-site POST callback (SAML, form_post) carries it. The flow id travels as OAuth `state` or
 * SAML `RelayState`; the callback must bring the cookie whose random binding the stored state
 * names, and the stored state is then marked used, atomically, on every instance: a replayed
 * callback is refused as `replay`. A browser holds at most {@link MAX_FLOWS_PER_BROWSER}
 * correlation cookies: starting another prunes the oldest, so parallel challenges cannot pile
 * cookies up to the header limit.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { CookieSerializeOptions } from '@fastify/cookie'
import { COOKIE_NAMES, cookieName, PURPOSES } from '../application-name.js'
import { openJson, sealBytes } from '../data-protection/authenticated-encryption.js'
import { normalizeClaims } from '../sign-in/claims-normalization.js'
import { isLoopbackHost, parsePublicOrigin } from '../http/host-trust.js'
import type { KeyRing } from '../data-protection/key-ring.js'
import { isLocalUrl } from '../http/local-url.js'
import { ApplicationClaimTypes, type Claim } from '../session/principal.js'
import { outcomeOf, SIGN_IN_OUTCOMES, type SignInFailure } from '../sign-in/sign-in-failure.js'
import type { ApplicationConfiguration } from '../config/schema.js'
import { flowKey } from '../state/keys.js'

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
}

declare module 'fastify' {
  interface FastifyInstance {
    externalSignIn: {
      /**
       * Stores the flow's state and sets its correlation cookie; returns the flow id (use as
       * state/RelayState). Rejects with a 503 error when the store is full or unavailable.
       */
      beginFlow: (reply: FastifyReply, scheme: string, returnUrl: string, data: Readonly<Record<string, string>>) => Promise<string>
      /**
       * Deletes the flow's correlation cookie and, when the cookie's binding matches, marks the
       * stored flow used and returns its state; undefined when missing, foreign, tampered, expired
       * or already used (a following `fail(..., 'correlation')` then logs `replay` for the latter).
       */
      takeFlow: (request: FastifyRequest, reply: FastifyReply, scheme: string, flowId: unknown) => Promise<FlowState | undefined>
      /** Normalizes claims, signs in with Cookies and redirects to the return URL. */
      complete: (request: FastifyRequest, reply: FastifyReply, result: SignInResult) => Promise<FastifyReply>
      /** Logs the failure class (never a code, token or assertion) and shows the login page's safe message. */
      fail: (request: FastifyRequest, reply: FastifyReply, scheme: string, failure: FailureClass, error?: unknown) => FastifyReply
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
}

/**
 * A provider error's `diagnostics`: safe log fields it chose (HTTP status, OAuth error code,
 * network cause code; never a description, token or secret), or nothing.
 */
function diagnosticsOf (error: Error): Record<string, string | number> {
  const diagnostics = (error as { diagnostics?: unknown }).diagnostics
  if (diagnostics === null || typeof diagnostics !== 'object') return {}
  return Object.fromEntries(Object.entries(diagnostics).filter(([, value]) => typeof value === 'string' || typeof value === 'number')) as Record<string, string | number>
}

export const FLOW_LIFETIME_SECONDS = 600
/** Most correlation cookies one browser holds; starting another flow prunes the oldest. */
export const MAX_FLOWS_PER_BROWSER = 4
const PURPOSE = Buffer.from(PURPOSES.correlation)
const FLOW_ID = /^[A-Za-z0-9_-]{22}$/
const COOKIE_VALUE = /^([0-9a-z]{1,11})\.([A-Za-z0-9_-]{22})$/
/** What a taken flow's record becomes: a used flow is told apart from an unknown one. */
const USED = 'used'
const TAKE_FAILURE = Symbol('externalSignIn.takeFailure')
type RequestWithTakeFailure = FastifyRequest & { [TAKE_FAILURE]?: FailureClass }

interface StoredFlow extends FlowState {
  readonly binding: string
}

function sameText (a: string, b: string): boolean {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

async function externalSignIn (app: FastifyInstance, options: ExternalSignInOptions): Promise<void> {
  const { config, keyRing, now } = options
  // Over http in Development the cookie drops the __Host- prefix but stays Secure and
  // SameSite=None: browsers treat http://localhost as a secure context, and a cross-site POST
  // callback (SAML, form_post) from a real IdP still carries it (docs/providers.md).
  const prefix = cookieName(COOKIE_NAMES.correlation, !options.insecureCookies)
  const cookieOptions: CookieSerializeOptions = { httpOnly: true, secure: true, sameSite: 'none', path: '/', maxAge: FLOW_LIFETIME_SECONDS }
  const deleteOptions: CookieSerializeOptions = { ...cookieOptions, maxAge: 0, expires: new Date(0) }
  const transformation = config.Authentication.ClaimsTransformation

  /** Correlation cookies this request carries, oldest first: [flow id, issued at]. */
  function presentFlows (request: FastifyRequest): Array<[string, number]> {
    const flows: Array<[string, number]> = []
    for (const [name, value] of Object.entries(request.cookies)) {
      if (!name.startsWith(prefix) || value === undefined) continue
      const match = COOKIE_VALUE.exec(value)
      flows.push([name.slice(prefix.length), match === null ? 0 : Number.parseInt(match[1] ?? '0', 36)])
    }
    return flows.sort((a, b) => a[1] - b[1])
  }

  async function beginFlow (reply: FastifyReply, scheme: string, returnUrl: string, data: Readonly<Record<string, string>>): Promise<string> {
    const request = reply.request
    const issuedAt = Math.floor(now() / 1000)
    const flowId = randomBytes(16).toString('base64url')
    const binding = randomBytes(16).toString('base64url')
    const state: StoredFlow = { scheme, flowId, returnUrl, expiresAt: issuedAt + FLOW_LIFETIME_SECONDS, data: { ...data }, binding }
    await app.state.add(flowKey(flowId), sealBytes(JSON.stringify(state), keyRing, PURPOSE), FLOW_LIFETIME_SECONDS * 1000)
    const present = presentFlows(request)
    const pruned = present.slice(0, Math.max(0, present.length - (MAX_FLOWS_PER_BROWSER - 1)))
    for (const [oldFlowId] of pruned) reply.setCookie(`${prefix}${oldFlowId}`, '', deleteOptions)
    if (pruned.length > 0) {
      request.log.debug({ event: 'external.flow.pruned', count: pruned.length }, 'older sign-in flows of this browser abandoned')
      const stale = pruned.map(([id]) => id).filter((id) => FLOW_ID.test(id)).map(flowKey)
      app.state.delete(stale).catch(() => { /* they expire by themselves */ })
    }
    reply.setCookie(`${prefix}${flowId}`, `${issuedAt.toString(36)}.${binding}`, cookieOptions)
    return flowId
  }

  async function takeFlow (request: FastifyRequest, reply: FastifyReply, scheme: string, flowId: unknown): Promise<FlowState | undefined> {
    if (typeof flowId !== 'string' || !FLOW_ID.test(flowId)) return undefined
    const name = `${prefix}${flowId}`
    const cookie = request.cookies[name]
    if (cookie === undefined) {
      if (request.protocol === 'http' && !isLoopbackHost(request.hostname)) {
        // Browsers drop Secure cookies over plain http to anything but localhost.
        request.log.warn({ event: 'external.correlation.insecure_transport' }, 'a sign-in callback arrived over http without its correlation cookie: browsers keep Secure cookies only over https (or http://localhost). Serve the app over https, or behind a TLS proxy set ForwardedHeaders:Enabled with its address in ForwardedHeaders:KnownProxies')
      }
      return undefined
    }
    reply.setCookie(name, '', deleteOptions)
    const binding = COOKIE_VALUE.exec(cookie)?.[2]
    if (binding === undefined) return undefined
    const sealed = await app.state.get(flowKey(flowId))
    if (sealed === undefined) return undefined
    if (sealed === USED) {
      (request as RequestWithTakeFailure)[TAKE_FAILURE] = 'replay'
      return undefined
    }
    const state = openJson<StoredFlow>(sealed, keyRing, PURPOSE, 16_384)
    if (state === undefined) return undefined
    if (typeof state.binding !== 'string' || !sameText(state.binding, binding)) return undefined
    if (state.scheme !== scheme || state.flowId !== flowId || typeof state.expiresAt !== 'number' ||
      state.expiresAt <= Math.floor(now() / 1000) || !isLocalUrl(state.returnUrl) ||
      state.data === null || typeof state.data !== 'object') return undefined
    // One use, on every instance: whoever swaps the record for the marker first owns the flow.
    if (await app.state.replace(flowKey(flowId), USED) !== sealed) {
      (request as RequestWithTakeFailure)[TAKE_FAILURE] = 'replay'
      return undefined
    }
    return { scheme: state.scheme, flowId: state.flowId, returnUrl: state.returnUrl, expiresAt: state.expiresAt, data: state.data }
  }

  function fail (request: FastifyRequest, reply: FastifyReply, scheme: string, reported: FailureClass, error?: unknown): FastifyReply {
    const takeFailure = (request as RequestWithTakeFailure)[TAKE_FAILURE]
    const failure = reported === 'correlation' && takeFailure !== undefined ? takeFailure : reported
    const details = error instanceof Error ? { errorName: error.name, errorCode: (error as { code?: unknown }).code, ...diagnosticsOf(error) } : {}
    const outcome = outcomeOf(failure)
    request.log.warn({ event: 'external.sign_in.failed', provider: scheme, failure, code: SIGN_IN_OUTCOMES[outcome].code, ...details }, 'external sign-in failed')
    return reply.redirect(`/Account/Login?failure=${outcome}`, 302)
  }

  async function complete (request: FastifyRequest, reply: FastifyReply, result: SignInResult): Promise<FastifyReply> {
    const claims = normalizeClaims(result.claims, {
      enabled: transformation.Enabled,
      removeOriginalClaims: transformation.RemoveOriginalClaims,
      ...(result.providerDefaults === undefined ? {} : { providerDefaults: result.providerDefaults }),
      ...(result.claimMappings === undefined ? {} : { overrides: result.claimMappings })
    })
    const hasSubject = claims.some((claim) => claim.type === ApplicationClaimTypes.Subject && claim.value !== '') ||
      (!transformation.Enabled && claims.length > 0)
    if (!hasSubject) return fail(request, reply, result.scheme, 'claims')
    try {
      await reply.signIn({
        scheme: result.scheme,
        claims,
        ...(result.tokens === undefined ? {} : { tokens: result.tokens }),
        ...(result.indexKeys === undefined ? {} : { indexKeys: result.indexKeys })
      })
    } catch (error) {
      // More claims than a session record may hold (far beyond hundreds of groups): a failed
      // sign-in, not a 500. Nothing has been written yet. Store failures answer 503.
      if (error instanceof RangeError) return fail(request, reply, result.scheme, 'claims', error)
      throw error
    }
    request.log.info({ event: 'external.sign_in.succeeded', provider: result.scheme }, 'external sign-in succeeded')
    return reply.redirect(isLocalUrl(result.returnUrl) ? result.returnUrl : '/', 302)
  }

  // Startup validation guarantees a valid PublicOrigin outside Development when a provider is enabled.
  const configuredOrigin = config.Hosting.PublicOrigin.trim() === '' ? undefined : parsePublicOrigin(config.Hosting.PublicOrigin, options.environmentName)
  function publicOrigin (request: FastifyRequest): string {
    return configuredOrigin ?? `${request.protocol}://${request.host}`
  }

  app.decorate('externalSignIn', { beginFlow, takeFlow, complete, fail, publicOrigin })
}

export default fp(externalSignIn, { name: 'external-sign-in', dependencies: ['@fastify/cookie', 'session'] })
