/**
 * What a verified provider response becomes before it is a session: the claims normalized (and
 * refused without a subject), the tenant claim that only the provider source may set, and the
 * session index keys (docs/providers/saml2.md and oauth.md, "Claims"; issue 28 for the tenant claim). Plain inputs
 * and results: no Fastify types here (sign-in/pipeline.ts `complete` runs the steps in order,
 * with the replay record and the application's sign-in hook between them).
 */
import { ApplicationClaimTypes, type Claim } from '../session/principal.js'
import type { AuthenticationProof } from '../session/authentication-proof.js'
import { providerIndexKeyOf } from '../session/session-store.js'
import { normalizeClaims } from './claims-normalization.js'
import type { GroupOverageIndicator } from './group-overage.js'

/** The protocols whose handlers say which they are (sign-in/provisioning-admission.ts reads it). */
export type SignInProtocol = 'OpenIdConnect' | 'Saml2'

export interface SignInResult {
  readonly scheme: string
  /** The protocol that verified the response (OpenID Connect's `email_verified` means something only there). */
  readonly protocol?: SignInProtocol
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
  /**
   * The provider's answer says the groups were left out (sign-in/group-overage.ts): the sign-in
   * is refused (`group_overage`) unless {@link acceptGroupOverage}; logged either way.
   */
  readonly groupOverage?: GroupOverageIndicator
  /** The provider's `AcceptGroupOverage`. */
  readonly acceptGroupOverage?: boolean
  /**
   * Set for a provider from the app's provider source: the tenant key its definition attached
   * becomes the `application:tenant` claim (issuer: the scheme), and any claim of that type from
   * the provider or the hook is dropped; the session joins the provider's index (revocation on
   * removal).
   */
  readonly runtime?: { readonly tenant?: string }
  /**
   * Set when the protocol established the tenant from the provider's allow-list (OpenID Connect
   * `AllowedTenants`, oidc/tenant-issuer.ts): like a runtime provider's, its `value` (the app's
   * tenant the allowed tenant maps to) is the only `application:tenant` claim, and none when the
   * tenant maps to none. Only for a configured provider: for a provider from the source the
   * definition's tenant is the only one, whatever the allow-list maps (issue 40, items 19 and 20).
   */
  readonly tenant?: { readonly value?: string }
  /**
   * What the verified response proved about the authentication (OpenID Connect `acr`, `amr`,
   * `auth_time`; SAML2 `AuthnContextClassRef`, `AuthnInstant`): recorded in the session, read by
   * step-up policies (session/authentication-proof.ts).
   */
  readonly authentication?: AuthenticationProof
}

/** The claim type of the tenant key a runtime provider's definition attaches (issue 28). @public @experimental */
export const TENANT_CLAIM_TYPE = 'application:tenant'

/** `Authentication:ClaimsTransformation`. @public @experimental */
export interface ClaimsTransformation {
  readonly Enabled: boolean
  readonly RemoveOriginalClaims: boolean
}

/**
 * The result's claims as the application sees them (the provider's mappings and defaults
 * applied), or undefined when they name no user: no non-empty subject (or, with the
 * transformation off, no claim at all). Such a sign-in is refused as `claims`.
 */
export function applicationClaimsOf (result: SignInResult, transformation: ClaimsTransformation): Claim[] | undefined {
  const claims = normalizeClaims(result.claims, {
    enabled: transformation.Enabled,
    removeOriginalClaims: transformation.RemoveOriginalClaims,
    ...(result.providerDefaults === undefined ? {} : { providerDefaults: result.providerDefaults }),
    ...(result.claimMappings === undefined ? {} : { overrides: result.claimMappings })
  })
  const hasSubject = claims.some((claim) => claim.type === ApplicationClaimTypes.Subject && claim.value !== '') ||
    (!transformation.Enabled && claims.length > 0)
  return hasSubject ? claims : undefined
}

/**
 * What the session holds: the claims after the sign-in hook and, for a provider from the provider
 * source, its tenant claim (only the source speaks for the tenant: a claim of that type from the
 * provider or the hook is dropped) and the provider's index key (revocation on removal).
 */
export function sessionClaimsOf (result: SignInResult, hookedClaims: readonly Claim[]): { readonly claims: readonly Claim[], readonly indexKeys?: readonly string[] } {
  if (result.runtime === undefined) return { claims: withSourceTenant(result, hookedClaims), ...(result.indexKeys === undefined ? {} : { indexKeys: result.indexKeys }) }
  return {
    claims: withSourceTenant(result, hookedClaims),
    indexKeys: [...(result.indexKeys ?? []), providerIndexKeyOf(result.scheme)]
  }
}

/**
 * `claims` with the tenant of a provider from the provider source as the only tenant claim: any
 * `application:tenant` claim the provider's response carried is dropped (a customer's IdP cannot
 * speak for the tenant). Applied before the sign-in hook, so the hook sees the source's tenant and
 * never the IdP's (issue 33, item 5), and again after it ({@link sessionClaimsOf}). Likewise, for a
 * configured provider, the tenant an allow-list established ({@link SignInResult.tenant}). A configured provider's claims
 * are otherwise returned as they are.
 */
export function withSourceTenant (result: SignInResult, claims: readonly Claim[]): readonly Claim[] {
  if (result.runtime === undefined && result.tenant === undefined) return claims
  // A runtime definition's tenant speaks for its users; an allow-list's mapping never overrides it.
  const tenant = result.runtime !== undefined ? result.runtime.tenant : result.tenant?.value
  return [...claims.filter((claim) => claim.type !== TENANT_CLAIM_TYPE), ...(tenant === undefined ? [] : [{ type: TENANT_CLAIM_TYPE, value: tenant, issuer: result.scheme }])]
}
