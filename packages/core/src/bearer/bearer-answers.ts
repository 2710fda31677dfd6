/**
 * The answers of a protected API route, as the bearer handler gives them (RFC 6750 section 3,
 * RFC 9449 section 7.1, RFC 9470 section 3): the 401 of a missing or refused credential with its
 * `WWW-Authenticate` challenges, the 403 `insufficient_scope` of a caller a policy refuses, and
 * the 401 `insufficient_user_authentication` of a step-up policy. Every challenge of a request
 * names the same `resource_metadata` (where metadata is published; the path-suffixed document for
 * a route that is a resource of its own, resource-metadata.ts) and, on a 401, the configured
 * scopes (issue 40, items 15 to 17). An answer is plain data: status, error code and header
 * values; plugins apply it to the reply. No Fastify types.
 */
import type { ErrorCode } from '../errors.js'
import type { AuthenticationRequirement } from '../session/authentication-proof.js'
import { bearerChallenge, dpopChallenge, type ChallengeParameters } from './challenge.js'
import { isProofFailure, type BearerFailure } from './failures.js'
import type { Presentation } from './presentation.js'
import { RESOURCE_METADATA_PATH, resourceOf } from './resource-metadata.js'

/** What a route's challenges name besides their error (set on each bearer route's config by plugins/bearer.ts). */
export interface ChallengeSettings {
  /** The configured PublicOrigin ('' for the request's own) while protected-resource metadata is published. */
  readonly resourceMetadataOrigin?: string
  /** The route's own metadata document, when its path is a resource of its own. */
  readonly resourceMetadataPath?: { readonly path: string, readonly origins: readonly string[] }
  /** `Authentication:Bearer:ScopesSupported`, space-separated, for the 401 `scope`. */
  readonly bearerScope?: string
  /** The proof algorithms a 401 without a token names in a `DPoP` challenge (a scheme has RequireDPoP). */
  readonly dpopAlgorithms?: readonly string[]
}

/** A response of the handler: status, the problem's code, and the `WWW-Authenticate` value(s). */
export interface BearerAnswer {
  readonly status: 401 | 403
  readonly code: ErrorCode
  readonly wwwAuthenticate: string | readonly string[]
}

/** The absolute URL of the protected-resource metadata the challenge names, or undefined where none is published. */
export function resourceMetadataUrlOf (settings: ChallengeSettings, requestOrigin: string): string | undefined {
  if (settings.resourceMetadataOrigin === undefined) return undefined
  const origin = resourceOf(settings.resourceMetadataOrigin, requestOrigin)
  const own = settings.resourceMetadataPath
  return `${origin}${own !== undefined && own.origins.includes(new URL(origin).origin) ? own.path : RESOURCE_METADATA_PATH}`
}

/** The parameters a challenge carries besides its error: `resource_metadata` where published, and `scope`. */
function parametersOf (settings: ChallengeSettings, requestOrigin: string, scope: string | undefined): ChallengeParameters {
  const resourceMetadata = resourceMetadataUrlOf(settings, requestOrigin)
  return { ...(resourceMetadata === undefined ? {} : { resourceMetadata }), ...(scope === undefined ? {} : { scope }) }
}

/**
 * The 401 of a missing (`error` undefined) or refused bearer token: `Bearer` with the route's
 * parameters, and beside it, when no token came and a scheme requires DPoP, a `DPoP` challenge.
 */
export function challengeAnswer (settings: ChallengeSettings, requestOrigin: string, error?: 'invalid_token'): BearerAnswer {
  const parameters = parametersOf(settings, requestOrigin, settings.bearerScope)
  const bearer = bearerChallenge({ ...(error === undefined ? {} : { error }), ...parameters })
  const dpopAlgorithms = settings.dpopAlgorithms
  return {
    status: 401,
    code: error === undefined ? 'APP_ERR_AUTH_REQUIRED' : 'APP_ERR_BEARER_INVALID',
    wwwAuthenticate: error === undefined && dpopAlgorithms !== undefined ? [bearer, dpopChallenge(dpopAlgorithms, parameters)] : bearer
  }
}

/**
 * The 401 of a refused credential: a DPoP request's (or a plain token's where DPoP is required)
 * names the proof or the token as its `error` with the proof algorithms `algorithms`; any other,
 * `Bearer error="invalid_token"`.
 */
export function refusalAnswer (failure: BearerFailure, presentation: Presentation, settings: ChallengeSettings, requestOrigin: string, algorithms: () => readonly string[]): BearerAnswer {
  if (presentation !== 'DPoP' && failure !== 'dpop_required') return challengeAnswer(settings, requestOrigin, 'invalid_token')
  const error = isProofFailure(failure) ? 'invalid_dpop_proof' : 'invalid_token'
  return { status: 401, code: 'APP_ERR_BEARER_INVALID', wwwAuthenticate: dpopChallenge(algorithms(), { error, ...parametersOf(settings, requestOrigin, settings.bearerScope) }) }
}

/**
 * The 403 of a caller that does not meet the route's policy (RFC 6750 `insufficient_scope`): the
 * policy's `scope` (none when it asks for no scope) and the same `resource_metadata` as the
 * route's 401, which a client's scope step-up reads.
 */
export function insufficientScopeAnswer (settings: ChallengeSettings, requestOrigin: string, scope: string | undefined): BearerAnswer {
  return { status: 403, code: 'APP_ERR_BEARER_SCOPE', wwwAuthenticate: bearerChallenge({ error: 'insufficient_scope', ...parametersOf(settings, requestOrigin, scope) }) }
}

/**
 * The 401 of a caller whose user authenticated too weakly or too long ago for the route's step-up
 * policy (RFC 9470 section 3: `insufficient_user_authentication` with the policy's `acr_values` and
 * `max_age`, never anything from the token).
 */
export function insufficientUserAuthenticationAnswer (requirement: AuthenticationRequirement): BearerAnswer {
  return {
    status: 401,
    code: 'APP_ERR_AUTH_STEP_UP_REQUIRED',
    wwwAuthenticate: bearerChallenge({
      error: 'insufficient_user_authentication',
      ...(requirement.acrValues === undefined || requirement.acrValues.length === 0 ? {} : { acrValues: requirement.acrValues.join(' ') }),
      ...(requirement.maxAgeSeconds === undefined ? {} : { maxAge: requirement.maxAgeSeconds })
    })
  }
}
