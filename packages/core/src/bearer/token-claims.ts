/**
 * The claim checks of a verified access token (RFC 9068 section 4; issue 35, item 1), each a named
 * function run in order by access-token.ts: `iss` is the scheme's issuer, one `aud` value is one of
 * its Audiences, no claim only an ID token carries (issue 40, item 3), `exp` present and not
 * passed, `nbf` and `iat` not ahead (with the clock skew), a lifetime within the scheme's bound
 * (issue 40, item 6; introspection answers pass the same lifetime checks). Then
 * what the token says about who acts ({@link accessTokenFactsOf}): the subject, the client, the
 * scopes and whether the subject is the client itself (a client-credentials token, a machine).
 * Plain inputs, no Fastify types.
 */
import { BearerTokenError } from './failures.js'

type Payload = Readonly<Record<string, unknown>>

/** How long a token may live, and the clock skew its times are read with. */
export interface LifetimeLimits {
  readonly clockSkewSeconds: number
  /** MaxTokenLifetimeSeconds; absent: no upper bound (an introspection answer without `exp`). */
  readonly maxLifetimeSeconds?: number
}

export interface ExpectedClaims extends LifetimeLimits {
  readonly issuer: string
  readonly audiences: ReadonlySet<string>
  readonly maxLifetimeSeconds: number
  /** DangerouslyAllowIdTokenMarkers: accept tokens carrying {@link ID_TOKEN_MARKERS}. */
  readonly allowIdTokenMarkers: boolean
}

export function checkIssuer (payload: Payload, issuer: string): void {
  if (typeof payload.iss !== 'string') throw new BearerTokenError('malformed')
  if (payload.iss !== issuer) throw new BearerTokenError('issuer')
}

export function checkAudience (payload: Payload, audiences: ReadonlySet<string>): void {
  const aud = payload.aud
  const values = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : undefined
  if (values === undefined || values.some((value) => typeof value !== 'string')) throw new BearerTokenError(aud === undefined ? 'audience' : 'malformed')
  if (!values.some((value) => audiences.has(value as string))) throw new BearerTokenError('audience')
}

/**
 * Claims an ID token carries and an access token never should (OpenID Connect Core 1.0 sections
 * 2, 3.1.3.6 and 3.3.2.11; FAPI 1.0 section 5.1 for `s_hash`). An ID token's `aud` is the sign-in
 * client's id: accepted as an access token by an API whose Audiences lists that id, it would let
 * any holder of a user's ID token (the browser, the sign-in app's logs) call the API as the user.
 */
export const ID_TOKEN_MARKERS: readonly string[] = ['nonce', 'at_hash', 'c_hash', 's_hash']

/** Refuses a token carrying an {@link ID_TOKEN_MARKERS} claim (`id_token`), unless the scheme allows them. */
export function checkNotIdToken (payload: Payload, allowIdTokenMarkers: boolean): void {
  if (allowIdTokenMarkers) return
  if (ID_TOKEN_MARKERS.some((claim) => Object.hasOwn(payload, claim))) throw new BearerTokenError('id_token')
}

/**
 * `exp` is required (an access token without one would be valid for ever); `nbf` and `iat` are
 * numbers when present, neither ahead of now by more than the clock skew. The lifetime is
 * `exp - iat` (both the issuer's clock), or `exp - now` without `iat`, allowing the clock skew.
 */
export function checkLifetime (payload: Payload, nowSeconds: number, limits: LifetimeLimits): void {
  const { exp, nbf, iat } = payload
  const { clockSkewSeconds, maxLifetimeSeconds } = limits
  if (exp === undefined) throw new BearerTokenError('expired')
  if (typeof exp !== 'number' || (nbf !== undefined && typeof nbf !== 'number') || (iat !== undefined && typeof iat !== 'number')) {
    throw new BearerTokenError('malformed')
  }
  if (nowSeconds >= exp + clockSkewSeconds) throw new BearerTokenError('expired')
  if (typeof nbf === 'number' && nbf > nowSeconds + clockSkewSeconds) throw new BearerTokenError('not_yet_valid')
  if (typeof iat === 'number' && iat > nowSeconds + clockSkewSeconds) throw new BearerTokenError('issued_in_future')
  if (maxLifetimeSeconds === undefined) return
  const tooLong = typeof iat === 'number' ? exp - iat > maxLifetimeSeconds : exp - nowSeconds > maxLifetimeSeconds + clockSkewSeconds
  if (tooLong) throw new BearerTokenError('lifetime')
}

/** Who acts with the token. */
export interface AccessTokenFacts {
  /** `sub`; a token without one names its client (`client_id`, `azp`) as the subject. */
  readonly subject: string
  /** The OAuth client the token was issued to: `client_id` (RFC 9068), `azp` (Okta, Keycloak, Entra v2) or `appid` (Entra v1). */
  readonly clientId?: string
  /** `scope` or `scp`, space-separated or an array; empty when neither. */
  readonly scopes: readonly string[]
  /**
   * A client-credentials token: the subject is the client itself (`sub` equals the client id, no
   * `sub` at all) or Entra ID says so (`idtyp: app`). Such a principal has no user.
   */
  readonly machine: boolean
  /** `exp`, seconds since the epoch. */
  readonly expiresAt: number
}

const nonEmpty = (value: unknown): string | undefined => typeof value === 'string' && value !== '' ? value : undefined

function scopesOf (payload: Payload): string[] {
  const scopes: string[] = []
  for (const value of [payload.scope, payload.scp]) {
    const items = typeof value === 'string' ? value.split(' ') : Array.isArray(value) ? value : []
    for (const item of items) if (typeof item === 'string' && item !== '' && !scopes.includes(item)) scopes.push(item)
  }
  return scopes
}

/** The facts of a token whose claims passed the checks; `no_subject` when it names neither a subject nor a client. */
export function accessTokenFactsOf (payload: Payload): AccessTokenFacts {
  const clientId = nonEmpty(payload.client_id) ?? nonEmpty(payload.azp) ?? nonEmpty(payload.appid)
  const sub = nonEmpty(payload.sub)
  const subject = sub ?? clientId
  if (subject === undefined) throw new BearerTokenError('no_subject')
  return {
    subject,
    ...(clientId === undefined ? {} : { clientId }),
    scopes: scopesOf(payload),
    machine: payload.idtyp === 'app' || (clientId !== undefined && subject === clientId),
    expiresAt: payload.exp as number
  }
}
