/**
 * What every external provider shares: the correlation cookie that binds a callback to the flow
 * that started it, and the two ways a flow ends (signed in, or a safe failure).
 *
 * Correlation: `__Host-ProjectTemplate.Correlation.<flow id>`, sealed (AES-256-GCM, its own
 * purpose), 10 minutes, HttpOnly, Secure, SameSite=None so that a cross-site POST callback
 * (SAML) carries it; deleted when the callback reads it. The flow id travels as OAuth `state` or
 * SAML `RelayState`; the sealed content repeats the scheme and flow id, so a cookie from another
 * flow or provider never matches.
 */
import { randomBytes } from 'node:crypto'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { CookieSerializeOptions } from '@fastify/cookie'
import { openBytes, sealBytes } from '../auth/authenticated-encryption.js'
import { normalizeClaims } from '../auth/claims-normalization.js'
import { parsePublicOrigin } from '../auth/host-trust.js'
import type { KeyRing } from '../auth/key-ring.js'
import { isLocalUrl } from '../auth/local-url.js'
import { ApplicationClaimTypes, type Claim } from '../auth/principal.js'
import type { ApplicationConfiguration } from '../config/schema.js'
import { sessionCookieSettings } from './session.js'

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

/**
 * Failure classes logged as `failure` and mapped to a fixed login-page message. Providers may use
 * more specific classes (`id_token`, `signature`, `audience`, `expired`...); unknown ones show the
 * generic message.
 */
export type FailureClass = 'cancelled' | 'correlation' | 'replay' | 'unavailable' | 'provider_error' | 'token' | 'claims' | string

const PAGE_MESSAGE_OF: Readonly<Record<string, string>> = { cancelled: 'cancelled', correlation: 'correlation', replay: 'correlation', unavailable: 'unavailable' }

export interface SignInResult {
  readonly scheme: string
  /** Provider claims before normalization. */
  readonly claims: readonly Claim[]
  /** Stored in the ticket; pass only when the provider's SaveTokens is true. */
  readonly tokens?: Readonly<Record<string, string>>
  readonly returnUrl: string
  /** The provider's ClaimMappings and provider-specific defaults. */
  readonly claimMappings?: Readonly<Record<string, string>>
  readonly providerDefaults?: Readonly<Record<string, string>>
}

declare module 'fastify' {
  interface FastifyInstance {
    externalSignIn: {
      /** Seals the flow's state into its correlation cookie; returns the flow id (use as state/RelayState). */
      beginFlow: (reply: FastifyReply, scheme: string, returnUrl: string, data: Readonly<Record<string, string>>) => string
      /** Reads and deletes the flow's correlation cookie; undefined when missing, foreign, tampered or expired. */
      takeFlow: (request: FastifyRequest, reply: FastifyReply, scheme: string, flowId: unknown) => FlowState | undefined
      /** Normalizes claims, signs in with Cookies and redirects to the return URL. */
      complete: (request: FastifyRequest, reply: FastifyReply, result: SignInResult) => FastifyReply
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
  readonly environmentName: string
  readonly keyRing: KeyRing
}

export const FLOW_LIFETIME_SECONDS = 600
const PURPOSE = Buffer.from('ProjectTemplate.Web.Correlation.v1')
const FLOW_ID = /^[A-Za-z0-9_-]{22}$/

async function externalSignIn (app: FastifyInstance, options: ExternalSignInOptions): Promise<void> {
  const { config, keyRing } = options
  // The session cookie's Development override decides for the correlation cookie too.
  const insecure = sessionCookieSettings(config, options.environmentName).options.secure !== true
  const prefix = insecure ? '.ProjectTemplate.Correlation.' : '__Host-ProjectTemplate.Correlation.'
  const cookieOptions: CookieSerializeOptions = insecure
    ? { httpOnly: true, secure: false, sameSite: 'lax', path: '/', maxAge: FLOW_LIFETIME_SECONDS }
    : { httpOnly: true, secure: true, sameSite: 'none', path: '/', maxAge: FLOW_LIFETIME_SECONDS }
  const deleteOptions: CookieSerializeOptions = { ...cookieOptions, maxAge: 0, expires: new Date(0) }
  const transformation = config.Authentication.ClaimsTransformation

  function beginFlow (reply: FastifyReply, scheme: string, returnUrl: string, data: Readonly<Record<string, string>>): string {
    const flowId = randomBytes(16).toString('base64url')
    const state: FlowState = { scheme, flowId, returnUrl, expiresAt: Math.floor(Date.now() / 1000) + FLOW_LIFETIME_SECONDS, data: { ...data } }
    reply.setCookie(`${prefix}${flowId}`, sealBytes(JSON.stringify(state), keyRing, PURPOSE), cookieOptions)
    return flowId
  }

  function takeFlow (request: FastifyRequest, reply: FastifyReply, scheme: string, flowId: unknown): FlowState | undefined {
    if (typeof flowId !== 'string' || !FLOW_ID.test(flowId)) return undefined
    const name = `${prefix}${flowId}`
    const sealed = request.cookies[name]
    if (sealed === undefined) return undefined
    reply.setCookie(name, '', deleteOptions)
    const plain = openBytes(sealed, keyRing, PURPOSE, 8192)
    if (plain === undefined) return undefined
    let state: Partial<FlowState>
    try {
      state = JSON.parse(plain.toString('utf8')) as Partial<FlowState>
    } catch {
      return undefined
    }
    if (state.scheme !== scheme || state.flowId !== flowId || typeof state.expiresAt !== 'number' ||
      state.expiresAt <= Math.floor(Date.now() / 1000) || !isLocalUrl(state.returnUrl) ||
      state.data === null || typeof state.data !== 'object') return undefined
    return state as FlowState
  }

  function fail (request: FastifyRequest, reply: FastifyReply, scheme: string, failure: FailureClass, error?: unknown): FastifyReply {
    const details = error instanceof Error ? { errorName: error.name, errorCode: (error as { code?: unknown }).code } : {}
    request.log.warn({ event: 'external.sign_in.failed', provider: scheme, failure, ...details }, 'external sign-in failed')
    const page = PAGE_MESSAGE_OF[failure] ?? 'failed'
    return reply.redirect(`/Account/Login?failure=${page}`, 302)
  }

  function complete (request: FastifyRequest, reply: FastifyReply, result: SignInResult): FastifyReply {
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
      reply.signIn({ scheme: result.scheme, claims, ...(result.tokens === undefined ? {} : { tokens: result.tokens }) })
    } catch (error) {
      // More claims than the chunked session cookie can carry (a user in hundreds of groups):
      // a failed sign-in, not a 500. Nothing has been written yet.
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
