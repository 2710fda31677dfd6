/**
 * Minting a development access token (issue 40, item 13): an RFC 9068 JWT (`typ: at+jwt`) signed
 * with the app's development signing key (signing-key.ts) by jose, for one JwtBearer scheme:
 * `iss` the scheme's development issuer, `aud` the audience given (the command passes the
 * scheme's first Audience), `sub`, `client_id`, `scope`, `iat`, `exp` (one hour by default) and a
 * `jti`. Its caller is (scheme, development issuer, subject): never the same identity as a user of
 * the scheme's real issuer.
 */
import { randomUUID } from 'node:crypto'
import { SignJWT } from 'jose'
import { DEVELOPMENT_TOKEN_ALGORITHM, developmentSigningKey, developmentTokenIssuer } from './signing-key.js'

/** The default lifetime of a development token, in seconds. */
export const DEFAULT_DEVELOPMENT_TOKEN_LIFETIME_SECONDS = 3600

/** What a development token says. @public @experimental */
export interface DevelopmentTokenRequest {
  /** The app root: where the signing key lives (`.state/dev-tokens/`). */
  readonly contentRoot: string
  /** The JwtBearer scheme that will accept it (its `DevelopmentTokens` must be true). */
  readonly scheme: string
  /** The `aud`: one of the scheme's Audiences. */
  readonly audience: string
  /** The `sub`; default `developer`. */
  readonly subject?: string
  /** The `client_id`; default `dev-token`. */
  readonly clientId?: string
  readonly scopes?: readonly string[]
  /** Extra claims (roles, names), never `iss`, `aud`, `exp`, `iat`, `sub`. */
  readonly claims?: Readonly<Record<string, unknown>>
  /** Seconds until `exp`; default {@link DEFAULT_DEVELOPMENT_TOKEN_LIFETIME_SECONDS}. */
  readonly lifetimeSeconds?: number
  readonly nowSeconds?: number
}

/** A signed development token (creating the signing key on first use). @public @experimental */
export async function mintDevelopmentToken (request: DevelopmentTokenRequest): Promise<string> {
  const { kid, privateKey } = await developmentSigningKey(request.contentRoot)
  const now = request.nowSeconds ?? Math.floor(Date.now() / 1000)
  const scopes = request.scopes ?? []
  return await new SignJWT({
    ...request.claims,
    client_id: request.clientId ?? 'dev-token',
    ...(scopes.length === 0 ? {} : { scope: scopes.join(' ') })
  })
    .setProtectedHeader({ alg: DEVELOPMENT_TOKEN_ALGORITHM, typ: 'at+jwt', kid })
    .setIssuer(developmentTokenIssuer(request.scheme))
    .setAudience(request.audience)
    .setSubject(request.subject ?? 'developer')
    .setIssuedAt(now)
    .setExpirationTime(now + (request.lifetimeSeconds ?? DEFAULT_DEVELOPMENT_TOKEN_LIFETIME_SECONDS))
    .setJti(randomUUID())
    .sign(privateKey)
}
