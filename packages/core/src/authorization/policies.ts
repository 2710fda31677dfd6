/**
 * Authorization policies as plain data: the contract's named policies (auth-contract.md,
 * "Authorization policies"), the default policy and the fallback policy. Role and permission
 * policies read the normalized claim types from configuration, so they behave the same whichever
 * provider signed the user in. A policy may also require how and how recently the user
 * authenticated (`authentication`: step-up, issue 36 item 3); a principal that meets the rest of
 * the policy but not that is sent back to its provider (`step_up`), never forbidden.
 */
import type { AuthorizationConfiguration } from '../config/schema.js'
import type { Principal } from '../session/principal.js'
import { requirementProblem, requiresAuthentication, unmetAuthentication, type AuthenticationRequirement } from '../session/authentication-proof.js'

/**
 * A policy's step-up requirement: accepted `acr` values, required `amr` methods and a maximum
 * authentication age, for every scheme; `schemes` replaces, for the sessions one scheme signed in,
 * the fields it sets (acr values differ between providers: Entra's, Okta's, Keycloak's, a SAML2
 * IdP's `AuthnContextClassRef`). docs/guides/enterprise.md, "Step-up authentication".
 *
 * @public @experimental
 */
export interface PolicyAuthentication extends AuthenticationRequirement {
  readonly schemes?: Readonly<Record<string, AuthenticationRequirement>>
}

/**
 * The contract's policy names, as the members of a class named ApplicationAuthorizationPolicyNames
 * (auth-contract.md, "Authorization policies"). Name a policy on a route with
 * `{ config: { authorize: ApplicationAuthorizationPolicyNames.AdministratorRole } }`.
 *
 * @public
 */
export class ApplicationAuthorizationPolicyNames {
  static readonly AuthenticatedUser = 'application.AuthenticatedUser'
  static readonly AdministratorRole = 'application.Role.Administrator'
  static readonly ManageApplicationPermission = 'application.Permission.ManageApplication'
}

/** @public */
export interface AuthorizationPolicy {
  readonly name: string
  /** Extra requirement on an authenticated principal; absent = authenticated user is enough. */
  readonly requirement?: (principal: Principal) => boolean
  /**
   * The access-token scopes the requirement asks for (authorization/scopes.ts `scopePolicy`): a
   * bearer call refused by it is answered 403 `insufficient_scope` naming them (RFC 6750).
   */
  readonly scopes?: readonly string[]
  /**
   * How and how recently the user must have authenticated at the provider (step-up); a session
   * that does not satisfy it is sent back to the provider that signed it in, a bearer call gets
   * RFC 9470's `insufficient_user_authentication`.
   */
  readonly authentication?: PolicyAuthentication
}

/**
 * Result of evaluating a policy: allowed, or which response the caller gets. `step_up`: the
 * principal meets the policy except how or when it authenticated.
 *
 * @public
 */
export type PolicyOutcome = 'allow' | 'challenge' | 'forbid' | 'step_up'

/** A policy's decision for one request; a step-up carries the requirement the provider is asked for. */
export type PolicyDecision =
  | { readonly outcome: 'allow' | 'challenge' | 'forbid' }
  | { readonly outcome: 'step_up', readonly requirement: AuthenticationRequirement }

/** The policy's step-up requirement for a principal of `scheme`, or undefined when it has none. */
export function authenticationRequirementOf (policy: AuthorizationPolicy, scheme: string): AuthenticationRequirement | undefined {
  const authentication = policy.authentication
  if (authentication === undefined) return undefined
  const { schemes, ...common } = authentication
  const own = schemes !== undefined && Object.hasOwn(schemes, scheme) ? schemes[scheme] : undefined
  const requirement: AuthenticationRequirement = { ...common, ...own }
  return requiresAuthentication(requirement) ? requirement : undefined
}

// One object each: an authorized request allocates no decision.
const ALLOW: PolicyDecision = { outcome: 'allow' }
const CHALLENGE: PolicyDecision = { outcome: 'challenge' }
const FORBID: PolicyDecision = { outcome: 'forbid' }

/**
 * The policy's decision for `principal` (undefined: anonymous): the one place a request's step-up
 * requirement is computed; the step-up answer and the provider's request take it from here.
 */
export function decidePolicy (policy: AuthorizationPolicy, principal: Principal | undefined, nowSeconds: number = Math.floor(Date.now() / 1000)): PolicyDecision {
  if (principal === undefined) return CHALLENGE
  if (policy.requirement !== undefined && !policy.requirement(principal)) return FORBID
  const requirement = authenticationRequirementOf(policy, principal.ticket.scheme)
  if (requirement !== undefined && unmetAuthentication(principal.ticket.authentication, requirement, nowSeconds) !== undefined) return { outcome: 'step_up', requirement }
  return ALLOW
}

/** The outcome alone of {@link decidePolicy}. */
export function evaluatePolicy (policy: AuthorizationPolicy, principal: Principal | undefined, nowSeconds?: number): PolicyOutcome {
  return decidePolicy(policy, principal, nowSeconds).outcome
}

/** Throws a TypeError naming the field when a policy's `authentication` is not well formed (`addPolicy` calls it). */
export function assertPolicyAuthentication (policy: AuthorizationPolicy): void {
  const authentication = policy.authentication
  if (authentication === undefined) return
  const where = `policy ${policy.name}: authentication`
  const check = (requirement: AuthenticationRequirement, at: string): void => {
    const problem = requirementProblem(requirement)
    if (problem !== undefined) throw new TypeError(`${at}.${problem}`)
  }
  check(authentication, where)
  for (const [scheme, own] of Object.entries(authentication.schemes ?? {})) check(own, `${where}.schemes.${scheme}`)
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
