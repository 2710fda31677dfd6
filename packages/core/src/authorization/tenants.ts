/**
 * Tenant-aware authorization (issue 28): a user signed in through a provider from the app's
 * provider source carries the tenant key its definition attached, as the `application:tenant`
 * claim issued by that scheme (sign-in/completion.ts `sessionClaimsOf` sets it, in the sign-in
 * pipeline's tenant step, and drops any claim of that type from the provider or the sign-in hook). A policy for one customer's data requires that
 * customer's tenant, so a user of customer A's IdP never passes a policy for customer B. Plain
 * data: no Fastify types.
 */
import type { Principal } from '../session/principal.js'
import type { AuthorizationPolicy } from './policies.js'

/** The claim type of the tenant key (equals the core's `TENANT_CLAIM_TYPE`). */
const TENANT = 'application:tenant'

/**
 * The principal's tenant key: the one `application:tenant` claim issued by the scheme it signed in
 * with, or undefined (not signed in through a provider with a tenant, or the claim is ambiguous).
 *
 * @public @experimental
 */
export function tenantOf (principal: Principal): string | undefined {
  const claims = principal.claims.filter((claim) => claim.type === TENANT)
  const only = claims.length === 1 ? claims[0] : undefined
  return only !== undefined && only.issuer === principal.scheme && only.value !== '' ? only.value : undefined
}

/** A requirement passed only by users of `tenant` (for `AuthorizationPolicy.requirement`). @public @experimental */
export function requireTenant (tenant: string): (principal: Principal) => boolean {
  if (tenant === '') throw new TypeError('requireTenant needs a tenant key')
  return (principal) => tenantOf(principal) === tenant
}

/** A named policy passed only by users of `tenant`: `tenantPolicy('contoso.Orders', 'tenant-contoso')`. @public @experimental */
export function tenantPolicy (name: string, tenant: string): AuthorizationPolicy {
  return { name, requirement: requireTenant(tenant) }
}
