/**
 * OpenID Connect Back-Channel Logout 1.0 (section 2.6, "Logout Token Validation"), without
 * Fastify types: the provider POSTs a signed logout token naming a provider session (`sid`) or a
 * subject (`sub`) whose sessions the app must end. openid-client 6 has no logout-token validator,
 * so the JWT is verified with jose (openid-client's own JOSE library) against the provider's
 * `jwks_uri`, with the same pinned algorithm and clock tolerance as ID tokens.
 *
 * Checks, each a failure class the endpoint logs: the token parses as a JWS (`malformed`), its
 * `typ` is absent, `JWT` or `logout+jwt` (`malformed`), the signature verifies with a key of the
 * provider and the pinned algorithm (`signature`), `iss` is the provider's issuer (`issuer`),
 * `aud` holds the client id (`audience`), `iat` is present, not in the future and at most
 * {@link MAX_LOGOUT_TOKEN_AGE_SECONDS} old and `exp`, when present, not past (`expired`), `jti`
 * is present (`claims`), `events` holds the back-channel logout event as an object (`events`),
 * there is no `nonce` (`nonce`: an ID token is never a logout token), and `sid` or `sub` is
 * present (`identifiers`). Replay (`jti` seen before) is checked by the caller against the state
 * store, which every instance shares.
 */
import { createRemoteJWKSet, customFetch, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose'
import { boundedFetch } from '../http/bounded-fetch.js'
import type { Dispatcher } from '../http/outbound-address.js'
import { SignInRefusal } from '../sign-in/refusal.js'

export const BACK_CHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout'
/** A logout token older than this (by `iat`) is refused; the replay record lives as long. */
export const MAX_LOGOUT_TOKEN_AGE_SECONDS = 300
/** Longest accepted logout token (characters); provider tokens are far below 2 KB. */
export const MAX_LOGOUT_TOKEN_LENGTH = 8192
const MAX_IDENTIFIER_LENGTH = 1024

export type LogoutTokenFailure = 'malformed' | 'signature' | 'issuer' | 'audience' | 'expired' | 'claims' | 'events' | 'nonce' | 'identifiers' | 'replay' | 'unavailable'

/** A refused logout token; `code` is a fixed code or jose's error code, never token content. */
export class LogoutTokenError extends SignInRefusal<LogoutTokenFailure> {
  readonly code: string | undefined

  constructor (failure: LogoutTokenFailure, code?: string, options?: ErrorOptions) {
    super(failure, `Logout token refused (${failure})`, options)
    this.name = 'LogoutTokenError'
    this.code = code
  }
}

export interface ValidatedLogoutToken {
  readonly issuer: string
  readonly sid?: string
  readonly sub?: string
  readonly jti: string
  /** Milliseconds since the epoch after which the token can no longer be accepted (replay record lifetime). */
  readonly acceptableUntilMs: number
}

export interface LogoutTokenExpectations {
  readonly issuer: string
  readonly clientId: string
  /** The pinned algorithm (IdTokenSignedResponseAlg). */
  readonly algorithm: string
  readonly keys: ReturnType<typeof createRemoteJWKSet>
  readonly clockToleranceSeconds: number
  readonly nowMs?: number
}

/** The provider's key set, fetched on demand with a timeout and cached by jose. */
export function remoteKeySet (jwksUri: string, timeoutMs: number, dispatcher?: Dispatcher): ReturnType<typeof createRemoteJWKSet> {
  return createRemoteJWKSet(new URL(jwksUri), {
    timeoutDuration: timeoutMs,
    cooldownDuration: 30_000,
    cacheMaxAge: 600_000,
    // Read through the bounded reader (the `jwks` cap), as every outbound response.
    [customFetch]: boundedFetch('jwks', timeoutMs, dispatcher)
  })
}

function classify (error: unknown): LogoutTokenError {
  if (error instanceof LogoutTokenError) return error
  if (error instanceof errors.JWTExpired) return new LogoutTokenError('expired', error.code, { cause: error })
  if (error instanceof errors.JWTClaimValidationFailed) {
    const claim = error.claim
    if (claim === 'iss') return new LogoutTokenError('issuer', error.code, { cause: error })
    if (claim === 'aud') return new LogoutTokenError('audience', error.code, { cause: error })
    if (claim === 'iat' || claim === 'exp' || claim === 'nbf') return new LogoutTokenError('expired', error.code, { cause: error })
    if (claim === 'events') return new LogoutTokenError('events', error.code, { cause: error })
    return new LogoutTokenError('claims', error.code, { cause: error })
  }
  if (error instanceof errors.JWKSTimeout) return new LogoutTokenError('unavailable', error.code, { cause: error })
  if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JOSEAlgNotAllowed ||
    error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) {
    return new LogoutTokenError('signature', error.code, { cause: error })
  }
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid || error instanceof errors.JOSENotSupported) {
    return new LogoutTokenError('malformed', error.code, { cause: error })
  }
  // The key set could not be fetched or read (network error, non-200, not a JWKS).
  return new LogoutTokenError('unavailable', (error as { code?: unknown } | null)?.code as string | undefined, { cause: error })
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value)

const identifier = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' && value.length <= MAX_IDENTIFIER_LENGTH ? value : undefined

/** Validates a logout token (everything but replay). Throws {@link LogoutTokenError}. */
export async function validateLogoutToken (token: string, expected: LogoutTokenExpectations): Promise<ValidatedLogoutToken> {
  if (token.length === 0 || token.length > MAX_LOGOUT_TOKEN_LENGTH) throw new LogoutTokenError('malformed', 'LOGOUT_TOKEN_LENGTH')
  let header: ReturnType<typeof decodeProtectedHeader>
  try {
    header = decodeProtectedHeader(token)
  } catch {
    throw new LogoutTokenError('malformed', 'LOGOUT_TOKEN_NOT_A_JWS')
  }
  const typ = typeof header.typ === 'string' ? header.typ.toLowerCase().replace(/^application\//, '') : undefined
  if (header.typ !== undefined && typ !== 'jwt' && typ !== 'logout+jwt') throw new LogoutTokenError('malformed', 'LOGOUT_TOKEN_TYP')
  let payload: JWTPayload
  try {
    const nowMs = expected.nowMs ?? Date.now()
    ;({ payload } = await jwtVerify(token, expected.keys, {
      issuer: expected.issuer,
      audience: expected.clientId,
      algorithms: [expected.algorithm],
      clockTolerance: expected.clockToleranceSeconds,
      maxTokenAge: MAX_LOGOUT_TOKEN_AGE_SECONDS,
      requiredClaims: ['iat', 'jti', 'events'],
      currentDate: new Date(nowMs)
    }))
  } catch (error) {
    throw classify(error)
  }
  const nowSeconds = Math.floor((expected.nowMs ?? Date.now()) / 1000)
  const iat = payload.iat as number
  // jose's maxTokenAge does not refuse an iat in the future.
  if (iat > nowSeconds + expected.clockToleranceSeconds) throw new LogoutTokenError('expired', 'LOGOUT_TOKEN_IAT_IN_FUTURE')
  const jti = identifier(payload.jti)
  if (jti === undefined) throw new LogoutTokenError('claims', 'LOGOUT_TOKEN_JTI')
  const events = payload.events
  if (!isObject(events) || !isObject(events[BACK_CHANNEL_LOGOUT_EVENT])) throw new LogoutTokenError('events', 'LOGOUT_TOKEN_EVENTS')
  if (Object.hasOwn(payload, 'nonce')) throw new LogoutTokenError('nonce', 'LOGOUT_TOKEN_NONCE')
  const sid = identifier(payload.sid)
  const sub = identifier(payload.sub)
  if ((payload.sid !== undefined && sid === undefined) || (payload.sub !== undefined && sub === undefined) || (sid === undefined && sub === undefined)) {
    throw new LogoutTokenError('identifiers', 'LOGOUT_TOKEN_SID_SUB')
  }
  const exp = typeof payload.exp === 'number' ? payload.exp : 0
  const acceptableUntilMs = (Math.max(exp, iat + MAX_LOGOUT_TOKEN_AGE_SECONDS) + expected.clockToleranceSeconds) * 1000
  return {
    issuer: payload.iss as string,
    jti,
    acceptableUntilMs,
    ...(sid === undefined ? {} : { sid }),
    ...(sub === undefined ? {} : { sub })
  }
}
