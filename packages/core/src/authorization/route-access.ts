/**
 * What a route's authorization metadata means (auth-contract.md, "Authorization"): public, the
 * default policy, a named policy, or the fallback policy. Decided once, when the route is
 * registered (plugins/authorization.ts attaches the hook); no Fastify types.
 */
import { ApplicationAuthorizationPolicyNames } from './policies.js'
import { createError } from '../errors.js'

/**
 * A route's authorization metadata, as it goes in the route's `config` (auth-contract.md,
 * "Authorization"): `allowAnonymous: true` (public), `authorize: true` (the default policy),
 * `authorize: '<policy name>'`, `governance: { action }`; none of them: the fallback policy.
 *
 * @public
 */
export interface RouteAuthorization {
  /** Explicit anonymous metadata: the route is public. */
  allowAnonymous?: boolean
  /** `true`: default policy (authenticated user); a string: that named policy. */
  authorize?: boolean | string
  /** Governed action, evaluated after authorization by a registered evaluator. */
  governance?: { action: string }
}

/** Who may reach a route: anyone, or whoever the named policy allows. */
export type RouteAccess = { readonly kind: 'anonymous' } | { readonly kind: 'policy', readonly name: string }

/**
 * The access a route's metadata asks for. `where` (`METHOD path`) names the route in the error
 * a contradictory declaration raises (`allowAnonymous` with `authorize`).
 */
export function routeAccessOf (config: RouteAuthorization, where: string, fallbackRequiresUser: boolean): RouteAccess {
  if (config.allowAnonymous === true && config.authorize !== undefined && config.authorize !== false) {
    throw createError('APP_ERR_ROUTE_ACCESS_CONFLICT', where)
  }
  if (config.allowAnonymous === true) return { kind: 'anonymous' }
  if (config.authorize === true) return { kind: 'policy', name: ApplicationAuthorizationPolicyNames.AuthenticatedUser }
  if (typeof config.authorize === 'string') return { kind: 'policy', name: config.authorize }
  return fallbackRequiresUser ? { kind: 'policy', name: ApplicationAuthorizationPolicyNames.AuthenticatedUser } : { kind: 'anonymous' }
}
