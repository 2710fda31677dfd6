/**
 * Authorization policies as plain data: the contract's named policies (auth-contract.md,
 * "Authorization policies"), the default policy and the fallback policy. Role and permission
 * policies read the normalized claim types from configuration, so they behave the same whichever
 * provider signed the user in.
 */
import type { AuthorizationConfiguration } from '../config/schema.js'
import type { Principal } from '../session/principal.js'

/**
 * The contract's policy names, as the members of a class named ApplicationAuthorizationPolicyNames
 * (auth-contract.md, "Authorization policies"). Name a policy on a route with
 * `{ config: { authorize: ApplicationAuthorizationPolicyNames.AdministratorRole } }`.
 */
export class ApplicationAuthorizationPolicyNames {
  static readonly AuthenticatedUser = 'application.AuthenticatedUser'
  static readonly AdministratorRole = 'application.Role.Administrator'
  static readonly ManageApplicationPermission = 'application.Permission.ManageApplication'
}

export interface AuthorizationPolicy {
  readonly name: string
  /** Extra requirement on an authenticated principal; absent = authenticated user is enough. */
  readonly requirement?: (principal: Principal) => boolean
  /**
   * The access-token scopes the requirement asks for (authorization/scopes.ts `scopePolicy`): a
   * bearer call refused by it is answered 403 `insufficient_scope` naming them (RFC 6750).
   */
  readonly scopes?: readonly string[]
}

/** Result of evaluating a policy: allowed, or which response the caller gets. */
export type PolicyOutcome = 'allow' | 'challenge' | 'forbid'

export function evaluatePolicy (policy: AuthorizationPolicy, principal: Principal | undefined): PolicyOutcome {
  if (principal === undefined) return 'challenge'
  if (policy.requirement === undefined || policy.requirement(principal)) return 'allow'
  return 'forbid'
}

function nonEmptySet (values: readonly string[]): ReadonlySet<string> {
  return new Set(values.map((value) => value.trim()).filter((value) => value !== ''))
}

/** The three named policies built from `ProjectTemplate:Authorization`. */
export function applicationPolicies (authorization: AuthorizationConfiguration): AuthorizationPolicy[] {
  const roles = nonEmptySet(authorization.AdministratorRoles)
  const permissions = nonEmptySet(authorization.ManageApplicationPermissions)
  return [
    { name: ApplicationAuthorizationPolicyNames.AuthenticatedUser },
    {
      name: ApplicationAuthorizationPolicyNames.AdministratorRole,
      requirement: (principal) => principal.hasAnyValue(authorization.RoleClaimType, roles)
    },
    {
      name: ApplicationAuthorizationPolicyNames.ManageApplicationPermission,
      requirement: (principal) => principal.hasAnyValue(authorization.PermissionClaimType, permissions)
    }
  ]
}
