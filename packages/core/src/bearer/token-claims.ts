/**
 * The claim checks of a verified access token (RFC 9068 section 4; issue 35, item 1), each a named
 * function run in order by access-token.ts: `iss` is the scheme's issuer, one `aud` value is one of
 * its Audiences, `exp` present and not passed, `nbf` not ahead (both with the clock skew). Then
 * what the token says about who acts ({@link accessTokenFactsOf}): the subject, the client, the
 * scopes and whether the subject is the client itself (a client-credentials token, a machine).
 * Plain inputs, no Fastify types.
 */
import { BearerTokenError } from './failures.js'

type Payload = Readonly<Record<string, unknown>>

export interface ExpectedClaims {
  readonly issuer: string
  readonly audiences: ReadonlySet<string>
  readonly clockSkewSeconds: number
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

/** `exp` is required (an access token without one would be valid for ever); `nbf` and `iat` are numbers when present. */
export function checkLifetime (payload: Payload, nowSeconds: number, clockSkewSeconds: number): void {
  const { exp, nbf, iat } = payload
  if (exp === undefined) throw new BearerTokenError('expired')
  if (typeof exp !== 'number' || (nbf !== undefined && typeof nbf !== 'number') || (iat !== undefined && typeof iat !== 'number')) {
    throw new BearerTokenError('malformed')
  }
  if (nowSeconds >= exp + clockSkewSeconds) throw new BearerTokenError('expired')
  if (typeof nbf === 'number' && nbf > nowSeconds + clockSkewSeconds) throw new BearerTokenError('not_yet_valid')
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
