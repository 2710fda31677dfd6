/**
 * A verified access token as the same principal a sign-in gives (issue 35, item 1): the token's
 * claims flattened as the OpenID Connect callback flattens an ID token (sign-in/claim-flattening.ts), nested
 * ClaimMappings paths read (`realm_access.roles`), and normalized with the scheme's ClaimMappings
 * (sign-in/claims-normalization.ts), so `application:subject` carries the issuer and policies on
 * roles, permissions and groups read the same claim types whichever way the caller came in. The
 * ticket's scheme is the bearer scheme; its identity is (scheme, issuer, subject) as for a
 * session. A client-credentials token (a machine) is a client's identity, `kind: 'client'`
 * (session/user-identity.ts, issue 40 item 6), never a user's: a token without `sub` gets its
 * client as the subject, and a client id equal to a user's subject still names another caller.
 * The token's scopes are `application:scope` claims, which scope policies read; they are never
 * permissions unless the scheme's ClaimMappings says `scp` -> `permission` (issue 40, item 2).
 * Plain inputs, no Fastify types.
 */
import { ApplicationClaimTypes, Principal, type AccessFacts, type Claim } from '../session/principal.js'

export type { AccessFacts } from '../session/principal.js'
import { proofOfTokenClaims } from '../session/authentication-proof.js'
import { flattenClaims } from '../sign-in/claim-flattening.js'
import { pathClaims } from '../sign-in/claim-paths.js'
import { normalizeClaims } from '../sign-in/claims-normalization.js'
import { auditFieldsOf } from '../session/user-identity.js'
import { withSourceTenant, type ClaimsTransformation } from '../sign-in/completion.js'
import type { VerifiedAccessToken } from './access-token.js'
import { sha256Base64url } from '../sha256.js'

/**
 * The principal of a bearer call: the same claims and identity as a signed-in user's, plus the
 * token's scopes and client, which scope and client policies read (authorization/scopes.ts).
 *
 * @public @experimental
 */
export class BearerPrincipal extends Principal {
  override readonly access: AccessFacts

  constructor (ticket: ConstructorParameters<typeof Principal>[0], access: AccessFacts) {
    super(ticket)
    this.access = access
  }

  /** A machine has no user name: its display name is its client. */
  override get name (): string {
    return this.access.machine ? `client ${this.access.clientId ?? this.subject ?? ''}` : super.name
  }
}

/** Claims that describe the token, not the caller (and RFC 7662's `active` and `token_type`): not kept as claims of the principal. */
const TOKEN_CLAIMS = new Set(['iss', 'aud', 'exp', 'iat', 'nbf', 'jti', 'cnf', 'nonce', 'at_hash', 'c_hash', 'auth_time', 'sid', 'typ', 'uti', 'rh', 'xms_tcdt', 'active', 'token_type'])

export interface PrincipalSettings {
  readonly scheme: string
  readonly issuer: string
  /** The scheme's ClaimMappings (claim or nested path -> application claim type). */
  readonly claimMappings: Readonly<Record<string, string>>
  readonly transformation: ClaimsTransformation
  /** A scheme from the provider source: its tenant is the only tenant claim. */
  readonly runtime?: { readonly tenant?: string }
}

/**
 * The ticket's `sessionId` of a bearer principal: `bearer.` and 22 characters of a hash of the
 * token. No session exists, so no anti-forgery token or revocation can name it; it keeps audit
 * lines of one token together without carrying the token.
 */
export function bearerSessionIdOf (token: string): string {
  return `bearer.${sha256Base64url(`bearer-session\u0000${token}`).slice(0, 22)}`
}

/**
 * `claims` with what the token itself asserts, whatever ClaimMappings and the transformation say:
 * an `application:subject` (the identity exists for every bearer principal, even with a mapping
 * that removes `sub`; a token without `sub` names its client) and one `application:scope` per
 * scope granted. A client-credentials token without `sub` gets no made-up `sub` claim.
 */
function withAccessClaims (claims: readonly Claim[], verified: VerifiedAccessToken, issuer: string): Claim[] {
  const subject = claims.some((claim) => claim.type === ApplicationClaimTypes.Subject)
    ? []
    : [{ type: ApplicationClaimTypes.Subject, value: verified.subject, issuer }]
  const scopes = verified.scopes.map((scope) => ({ type: ApplicationClaimTypes.Scope, value: scope, issuer }))
  return [...subject, ...claims, ...scopes]
}

/** The principal of a verified token. */
export function principalOf (token: string, verified: VerifiedAccessToken, settings: PrincipalSettings, nowSeconds: number): BearerPrincipal {
  const { issuer } = settings
  const claims: Claim[] = [
    ...flattenClaims(verified.payload, issuer, TOKEN_CLAIMS),
    ...pathClaims([verified.payload], Object.keys(settings.claimMappings), issuer)
  ]
  const normalized = normalizeClaims(claims, {
    enabled: settings.transformation.Enabled,
    removeOriginalClaims: settings.transformation.RemoveOriginalClaims,
    overrides: settings.claimMappings
  })
  // acr, amr, auth_time: what step-up policies read (RFC 9470).
  const authentication = proofOfTokenClaims(verified.payload)
  return new BearerPrincipal({
    sessionId: bearerSessionIdOf(token),
    scheme: settings.scheme,
    claims: withAccessClaims(settings.runtime === undefined ? normalized : withSourceTenant({ scheme: settings.scheme, claims: [], returnUrl: '', runtime: settings.runtime }, normalized), verified, issuer),
    issuedAt: nowSeconds,
    expiresAt: verified.expiresAt,
    absoluteExpiresAt: verified.expiresAt,
    ...(authentication === undefined ? {} : { authentication }),
    ...(verified.machine ? { kind: 'client' as const } : {})
  }, { scopes: verified.scopes, machine: verified.machine, ...(verified.clientId === undefined ? {} : { clientId: verified.clientId }) })
}

/**
 * The audit fields of a principal (issue 35, item 3; docs/audit-events.md): the identity fields a
 * session's lines carry; for a caller a request credential authenticated (`provider` is its
 * scheme, `sessionAuditId` the hash of the token's pseudo-session id, never the token), the acting
 * client too: `clientId` (the token's `client_id`, `azp` or `appid`) and `machine` (a
 * client-credentials token: no user).
 */
export function principalAuditFields (principal: Principal): Record<string, string | boolean> {
  const access = principal.access
  if (access === undefined) return auditFieldsOf(principal.ticket)
  return { ...auditFieldsOf(principal.ticket), ...(access.clientId === undefined ? {} : { clientId: access.clientId }), machine: access.machine }
}
