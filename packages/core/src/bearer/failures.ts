/**
 * Why a bearer token was refused (issue 35, "Bad input"): one failure class per check, logged as
 * the `failure` field of `bearer.refused` and never sent to the client, which learns only
 * `error="invalid_token"` (RFC 6750 section 3.1: no detail that helps an attacker). Plain data.
 */
import { CoreError, type LogCode } from '../errors.js'

/** The failure classes, in the order the checks run (shape and size before any cryptography). */
export const BEARER_FAILURES = [
  /** Longer than {@link MAX_BEARER_TOKEN_BYTES} (token-shape.ts). */
  'oversized',
  /** Not three base64url segments, a header or payload that is not a JSON object, or a required claim of the wrong type. */
  'malformed',
  /**
   * `typ` other than `at+jwt` or `JWT` (a logout token used as an access token); with
   * RequireAccessTokenType, anything but `at+jwt` (RFC 9068 section 2.1), so an ID token's `JWT` too.
   */
  'type',
  /** A `crit` header parameter (the core understands no JWS extension: RFC 7515 section 4.1.11), or `b64` other than true (RFC 7797's unencoded payload). */
  'unsupported_header',
  /** `alg` outside the scheme's ValidAlgorithms: `none`, HMAC, or an algorithm the scheme does not accept. */
  'algorithm',
  /** No key of the issuer's key set matches the header, even after the one refetch it may cause. */
  'unknown_key',
  /** The issuer's key set could not be loaded. */
  'keys_unavailable',
  /** The signature does not verify. */
  'signature',
  /** `iss` is not the scheme's issuer, or no scheme the request's path selects may receive the token (scheme-routing.ts): refused without an outbound call. */
  'issuer',
  /** No `aud` value is one of the scheme's Audiences. */
  'audience',
  /**
   * The token carries a claim only an ID token has (`nonce`, `at_hash`, `c_hash`, `s_hash`): an ID
   * token presented as an access token, refused unless the scheme sets DangerouslyAllowIdTokenMarkers.
   */
  'id_token',
  /** `exp` (with the clock skew) has passed, or the token has no `exp`. */
  'expired',
  /** `nbf` (with the clock skew) is still ahead. */
  'not_yet_valid',
  /** `iat` (with the clock skew) is still ahead: the issuer's clock or the token is wrong. */
  'issued_in_future',
  /** The token lives longer than MaxTokenLifetimeSeconds: `exp - iat`, or `exp - now` (with the clock skew) without `iat`. */
  'lifetime',
  /** The token is valid but names no subject (`sub`, `client_id` or `azp`). */
  'no_subject',
  /** An opaque token the issuer's introspection endpoint calls inactive (unknown, expired, revoked; RFC 7662 section 2.2). */
  'inactive',
  /** The introspection endpoint could not answer (unreachable, timed out, not 200 JSON, over 64 KB): answered 503, not 401. */
  'introspection_unavailable',
  /** A token-validated hook (`app.requestCredentials.onTokenValidated`, token-validated-hook.ts) refused the token it was just given. */
  'hook',
  /** A credential in `Authorization` and in a type's own header (`X-API-Key`) at once: neither is used. */
  'ambiguous',
  /** A key in a type's own header (`X-API-Key`) whose scheme does not read that header (AllowXApiKeyHeader false). */
  'header',
  /** A valid credential whose caller a deny check refuses (session/deny-checks.ts: deprovisioned, revoked), served from the cache or verified now. */
  'denied',
  // DPoP (RFC 9449, dpop.ts): the proof's failures (challenge error="invalid_dpop_proof") ...
  /** The `DPoP` header is longer than MAX_DPOP_PROOF_BYTES. */
  'dpop_oversized',
  /** Not a compact JWS, header or payload not a JSON object, `typ` not `dpop+jwt`, no `jwk`, no usable `jti`. */
  'dpop_malformed',
  /** `Authorization: DPoP` without a `DPoP` header. */
  'dpop_missing',
  /** More than one `DPoP` header. */
  'dpop_multiple',
  /** `alg` outside the scheme's ValidAlgorithms. */
  'dpop_algorithm',
  /** The embedded `jwk` carries private key material. */
  'dpop_private_key',
  /** The proof's signature does not verify with its embedded key. */
  'dpop_signature',
  /** `htm` is not the request's method. */
  'dpop_method',
  /** `htu` is not the request's external URL (without query and fragment). */
  'dpop_url',
  /** `iat` outside the acceptance window. */
  'dpop_stale',
  /** `ath` is not the hash of the access token sent. */
  'dpop_ath',
  /** The proof's `jti` was already used with this key (shared replay cache). */
  'dpop_replay',
  // ... and the token's (challenge error="invalid_token").
  /** The token's `cnf.jkt` is not the proof key's thumbprint. */
  'dpop_binding',
  /** A token without `cnf.jkt` sent with `Authorization: DPoP`. */
  'dpop_unbound',
  /** A DPoP-bound token (`cnf.jkt`) sent as `Authorization: Bearer`. */
  'dpop_bound_as_bearer',
  /** A plain bearer token for a scheme with RequireDPoP. */
  'dpop_required'
] as const

/** Why a request credential was refused: the `failure` of a `bearer.refused` line, never sent to the client. @public @experimental */
export type BearerFailure = (typeof BEARER_FAILURES)[number]

const PROOF_FAILURES: ReadonlySet<BearerFailure> = new Set(['dpop_oversized', 'dpop_malformed', 'dpop_missing', 'dpop_multiple', 'dpop_algorithm', 'dpop_private_key', 'dpop_signature', 'dpop_method', 'dpop_url', 'dpop_stale', 'dpop_ath', 'dpop_replay'])

/** Whether `failure` is the DPoP proof's (RFC 9449 section 7.1: `error="invalid_dpop_proof"`) rather than the token's. */
export function isProofFailure (failure: BearerFailure): boolean {
  return PROOF_FAILURES.has(failure)
}

/** A refused bearer token; `failure` is for the log, never for the response. */
export class BearerTokenError extends CoreError {
  readonly code = 'BEARER_TOKEN_INVALID' satisfies LogCode
  readonly failure: BearerFailure
  /**
   * An issuer from the provider source could not answer (`keys_unavailable`,
   * `introspection_unavailable`): answered as a refused token (401), as an unknown issuer is, not
   * 503, so a response does not tell which customers' issuers exist (issue 40, item 5).
   */
  readonly concealed: boolean

  constructor (failure: BearerFailure, options?: ErrorOptions & { readonly concealed?: boolean }) {
    super(`bearer token refused: ${failure}`, options)
    this.name = 'BearerTokenError'
    this.failure = failure
    this.concealed = options?.concealed === true
  }
}

/** What held a request back: a limit of the handler or of a credential type (the `limit` of a `bearer.refused` line). @public @experimental */
export type HeldLimit = 'refusals' | 'dpop_proofs' | 'api_key_requests' | 'api_key_failures'

/**
 * A credential type holds a request back (429 with `Retry-After`): a limit of its own counted in
 * the state store (API keys: requests per key, failed look-ups per address). Not a refusal: the
 * handler does not count it as one. @public @experimental
 */
export class CredentialHeldError extends CoreError {
  readonly retryAfterSeconds: number
  readonly limit: HeldLimit

  constructor (limit: HeldLimit, retryAfterSeconds: number) {
    super(`request held back: ${limit}`)
    this.name = 'CredentialHeldError'
    this.limit = limit
    this.retryAfterSeconds = Math.max(1, Math.ceil(retryAfterSeconds))
  }
}

/** Whether `error` is answered 503 (an issuer that could not answer), not 401: not when {@link BearerTokenError.concealed}. */
export function isIssuerUnavailable (error: BearerTokenError): boolean {
  return !error.concealed && (error.failure === 'keys_unavailable' || error.failure === 'introspection_unavailable')
}
