/**
 * Policies on what an access token grants (issue 35, item 3), beside the role and permission
 * policies: scopes (`scope` / `scp`), a user rather than a machine (a client-credentials token),
 * and named clients. They ask the principal (session/principal.ts): its scopes (the
 * `application:scope` claims of a request credential) and its access facts, which a credential
 * sent with the request sets (bearer/bearer-principal.ts); a session user has neither, so a scope or
 * client policy refuses it and a user policy passes it. A scope is what a client may do on a
 * user's behalf (often consented by the user), not what the user may do: permission policies
 * never read scopes (issue 40, item 2). Plain data: no Fastify types.
 */
import type { Principal } from '../session/principal.js'
import type { AuthorizationPolicy } from './policies.js'

/** The scopes the principal's access token grants (its `application:scope` claims); none for a session user. @public @experimental */
export function scopesOf (principal: Principal): readonly string[] {
  return principal.scopes
}

/** The OAuth client that acts (a bearer call's `client_id` / `azp`), or undefined. @public @experimental */
export function clientOf (principal: Principal): string | undefined {
  return principal.access?.clientId
}

/** Whether the principal is a machine: a client-credentials token, no user. @public @experimental */
export function isMachine (principal: Principal): boolean {
  return principal.access?.machine === true
}

function nonEmpty (values: readonly string[], what: string): readonly string[] {
  if (values.length === 0 || values.some((value) => typeof value !== 'string' || value === '' || value.includes(' '))) {
    throw new TypeError(`${what} needs at least one non-empty ${what === 'scopePolicy' ? 'scope' : 'client id'} without spaces`)
  }
  return values
}

/**
 * A named policy passed by a bearer call whose token grants every one of `scopes`; a refusal
 * answers 403 `insufficient_scope` naming them. `scopePolicy('orders.Read', 'orders.read')`.
 *
 * @public @experimental
 */
export function scopePolicy (name: string, ...scopes: string[]): AuthorizationPolicy {
  const required = nonEmpty(scopes, 'scopePolicy')
  return { name, scopes: required, requirement: (principal) => required.every((scope) => scopesOf(principal).includes(scope)) }
}

/** A named policy passed by a user (a session, or a bearer token on behalf of a user), never by a machine client. @public @experimental */
export function userPolicy (name: string): AuthorizationPolicy {
  return { name, requirement: (principal) => !isMachine(principal) }
}

/**
 * A named policy passed only by machine callers (a client-credentials token, a tenant-owned API
 * key), never by a user, a session or a token acting for a user (issue 40, item 13); with
 * `clientIds`, only those clients. `machinePolicy('jobs.Machines')`,
 * `machinePolicy('billing.Export', 'billing-service')`.
 *
 * @public @experimental
 */
export function machinePolicy (name: string, ...clientIds: string[]): AuthorizationPolicy {
  const allowed = clientIds.length === 0 ? undefined : new Set(nonEmpty(clientIds, 'machinePolicy'))
  return {
    name,
    requirement: (principal) => {
      if (!isMachine(principal)) return false
      const client = clientOf(principal)
      return allowed === undefined || (client !== undefined && allowed.has(client))
    }
  }
}

/** A named policy passed only by bearer calls from one of `clientIds` (machine or on behalf of a user). @public @experimental */
export function clientPolicy (name: string, ...clientIds: string[]): AuthorizationPolicy {
  const allowed = new Set(nonEmpty(clientIds, 'clientPolicy'))
  return { name, requirement: (principal) => { const client = clientOf(principal); return client !== undefined && allowed.has(client) } }
}
