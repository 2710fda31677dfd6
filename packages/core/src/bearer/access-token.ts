/**
 * Validation of one JWT access token (RFC 9068 and the common non-`at+jwt` shapes; issue 35,
 * item 1), in the order that spends nothing on a token that fails early: size and shape
 * (token-shape.ts), RFC 9068's `typ` when the scheme says its issuer sets it
 * (RequireAccessTokenType; issue 40, item 3), the signature with a key of the issuer's set
 * (oidc/provider-keys.ts, which refetches the set at most once per interval for an unknown
 * `kid`), then `iss`, `aud`, no ID-token claim, `exp`, `nbf`, `iat` and the lifetime
 * (token-claims.ts). Every refusal is a {@link BearerTokenError} naming its failure class.
 * Plain inputs, no Fastify types.
 */
import { errors } from 'jose'
import { KeySetUnavailableError, UnknownSigningKeyError, type ProviderKeys } from '../oidc/provider-keys.js'
import { BearerTokenError } from './failures.js'
import { isJwtAccessTokenType, shapeOf } from './token-shape.js'
import { accessTokenFactsOf, checkAudience, checkIssuer, checkLifetime, checkNotIdToken, type AccessTokenFacts, type ExpectedClaims } from './token-claims.js'

export interface AccessTokenExpectations extends ExpectedClaims {
  /** ValidAlgorithms: asymmetric only (settings-rules.ts). */
  readonly algorithms: ReadonlySet<string>
  /** RequireAccessTokenType: the header's `typ` must be `at+jwt` (RFC 9068 section 4, step 1). */
  readonly requireAccessTokenType: boolean
}

/** A token that passed every check: its verified payload and who acts with it. */
export interface VerifiedAccessToken extends AccessTokenFacts {
  readonly payload: Readonly<Record<string, unknown>>
}

async function verifySignature (token: string, keys: Pick<ProviderKeys, 'verify'>, algorithms: ReadonlySet<string>): Promise<void> {
  try {
    await keys.verify(token, [...algorithms])
  } catch (error) {
    if (error instanceof UnknownSigningKeyError) throw new BearerTokenError('unknown_key', { cause: error })
    if (error instanceof KeySetUnavailableError) throw new BearerTokenError('keys_unavailable', { cause: error })
    if (error instanceof errors.JOSEAlgNotAllowed) throw new BearerTokenError('algorithm', { cause: error })
    if (error instanceof errors.JWSInvalid || error instanceof errors.JOSENotSupported) throw new BearerTokenError('malformed', { cause: error })
    throw new BearerTokenError('signature', { cause: error })
  }
}

/** Validates `token` for a scheme; throws {@link BearerTokenError}. */
export async function validateAccessToken (token: string, keys: Pick<ProviderKeys, 'verify'>, expected: AccessTokenExpectations, nowSeconds: number): Promise<VerifiedAccessToken> {
  const { header, payload } = shapeOf(token, expected.algorithms)
  if (expected.requireAccessTokenType && !isJwtAccessTokenType(header.typ)) throw new BearerTokenError('type')
  await verifySignature(token, keys, expected.algorithms)
  checkIssuer(payload, expected.issuer)
  checkAudience(payload, expected.audiences)
  checkNotIdToken(payload, expected.allowIdTokenMarkers)
  checkLifetime(payload, nowSeconds, expected)
  return { ...accessTokenFactsOf(payload), payload }
}
