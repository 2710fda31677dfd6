/**
 * Endpoint authorization. A route's `config` is its authorization metadata:
 *   `{ allowAnonymous: true }`       public (bypasses the fallback policy)
 *   `{ authorize: true }`            the default policy: an authenticated user
 *   `{ authorize: '<policy name>' }` a named policy
 *   nothing                          the fallback policy (authenticated user while
 *                                    Authorization:RequireAuthenticatedUserByDefault is true)
 * The requirement is attached when the route is registered (onRoute); an unknown policy name
 * fails `ready()`. Requests matching no route get the fallback too, so anonymous callers cannot
 * tell missing routes from protected ones. The governance seam runs only after all of this.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import type { Principal } from '../session/principal.js'
import {
  ApplicationAuthorizationPolicyNames, applicationPolicies, evaluatePolicy, type AuthorizationPolicy
} from '../authorization/policies.js'
import type { ApplicationConfiguration } from '../config/schema.js'
import { createError } from '../errors.js'
import { sendError, sendProblem, wantsJson } from '../http/responses.js'

/** Context a governance evaluator receives; the request has already passed authorization. */
export interface GovernanceContext {
  readonly action: string
  readonly principal: Principal | undefined
  readonly request: FastifyRequest
}

/** Decides whether an authorized caller may perform a governed action. */
export type GovernanceEvaluator = (context: GovernanceContext) => boolean | Promise<boolean>

/**
 * A route's authorization metadata, as it goes in the route's `config` (auth-contract.md,
 * "Authorization"): `allowAnonymous: true` (public), `authorize: true` (the default policy),
 * `authorize: '<policy name>'`, `governance: { action }`; none of them: the fallback policy.
 */
export interface RouteAuthorization {
  /** Explicit anonymous metadata: the route is public. */
  allowAnonymous?: boolean
  /** `true`: default policy (authenticated user); a string: that named policy. */
  authorize?: boolean | string
  /** Governed action, evaluated after authorization by a registered evaluator. */
  governance?: { action: string }
}

/** `app.authorization`: named policies, the governance seam and the reviewed public surface. */
export interface AuthorizationApi {
  /** Adds a named policy; call before `ready()`. */
  addPolicy: (policy: AuthorizationPolicy) => void
  /** Sets the governance evaluator; without one, the seam does nothing. */
  useGovernanceEvaluator: (evaluator: GovernanceEvaluator) => void
  /** `METHOD path` of every anonymous route, sorted (the reviewed public surface). */
  anonymousRoutes: () => string[]
}

declare module 'fastify' {
  // The route `config` members of RouteAuthorization.
  interface FastifyContextConfig extends RouteAuthorization {}
  interface FastifyInstance {
    authorization: AuthorizationApi
  }
}

export interface AuthorizationPluginOptions {
  readonly config: ApplicationConfiguration
  readonly environmentName: string
}

type RouteAccess = { kind: 'anonymous' } | { kind: 'policy', name: string }

async function authorizationPlugin (app: FastifyInstance, options: AuthorizationPluginOptions): Promise<void> {
  const fallbackRequiresUser = options.config.Authorization.RequireAuthenticatedUserByDefault
  const policies = new Map<string, AuthorizationPolicy>()
  for (const policy of applicationPolicies(options.config.Authorization)) policies.set(policy.name, policy)
  const referencedPolicies = new Map<string, string>()
  const anonymous = new Set<string>()
  let evaluator: GovernanceEvaluator | undefined

  app.decorate('authorization', {
    addPolicy (policy: AuthorizationPolicy) {
      if (policies.has(policy.name)) throw createError('APP_ERR_POLICY_DUPLICATE', policy.name)
      policies.set(policy.name, policy)
    },
    useGovernanceEvaluator (next: GovernanceEvaluator) {
      evaluator = next
    },
    anonymousRoutes: () => [...anonymous].sort()
  })

  function accessOf (route: RouteOptions): RouteAccess {
    const config = route.config ?? {}
    const where = `${String(route.method)} ${route.url}`
    if (config.allowAnonymous === true && config.authorize !== undefined && config.authorize !== false) {
      throw createError('APP_ERR_ROUTE_ACCESS_CONFLICT', where)
    }
    if (config.allowAnonymous === true) return { kind: 'anonymous' }
    if (config.authorize === true) return { kind: 'policy', name: ApplicationAuthorizationPolicyNames.AuthenticatedUser }
    if (typeof config.authorize === 'string') return { kind: 'policy', name: config.authorize }
    return fallbackRequiresUser ? { kind: 'policy', name: ApplicationAuthorizationPolicyNames.AuthenticatedUser } : { kind: 'anonymous' }
  }

  type Hook = ((request: FastifyRequest, reply: FastifyReply) => Promise<unknown>) |
  ((request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void)

  function addHook (route: RouteOptions, name: 'onRequest' | 'preHandler', hook: Hook): void {
    const existing = route[name]
    const list = existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]
    route[name] = [hook, ...list] as never
  }

  app.addHook('onRoute', (route) => {
    const access = accessOf(route)
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    if (access.kind === 'anonymous') {
      for (const method of methods) if (method !== 'HEAD') anonymous.add(`${method} ${route.url}`)
    } else {
      // Name the first route that uses the policy (not the HEAD route Fastify adds for a GET).
      if (!referencedPolicies.has(access.name)) referencedPolicies.set(access.name, `${methods.join(',')} ${route.url}`)
      const policyName = access.name
      const policy = () => policies.get(policyName) as AuthorizationPolicy // resolved at ready(): every referenced name exists
      // Callback style: an authorized request passes synchronously, with no promise per request.
      addHook(route, 'onRequest', function authorize (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) {
        app.session.resolve(request, reply, (sessionError, principal) => {
          // A session the store cannot verify fails closed: the error handler answers 503.
          if (sessionError !== null) {
            done(sessionError)
            return
          }
          const outcome = evaluatePolicy(policy(), principal)
          if (outcome === 'allow') {
            done()
            return
          }
          // The challenge or forbid sends the answer and ends the request: done is never called
          // without an error, so the route handler cannot run.
          const fail = (error: unknown): void => { done(error instanceof Error ? error : new Error(String(error))) }
          try {
            const answer = outcome === 'challenge' ? app.authentication.challenge(request, reply) : app.authentication.forbid(request, reply)
            if (answer instanceof Promise) answer.then(undefined, fail)
          } catch (error) {
            fail(error)
          }
        })
      })
    }
    const action = route.config?.governance?.action
    if (action !== undefined) {
      addHook(route, 'preHandler', async function governance (request: FastifyRequest, reply: FastifyReply) {
        if (evaluator === undefined) return undefined
        const permitted = await evaluator({ action, principal: await app.session.authenticate(request, reply), request })
        if (permitted) return undefined
        request.log.info({ event: 'governance.denied', action }, 'governed action denied')
        return wantsJson(request)
          ? sendProblem(request, reply, 403, { code: 'APP_ERR_GOVERNANCE_DENIED' })
          : sendError(request, reply, 403, { code: 'APP_ERR_GOVERNANCE_DENIED' })
      })
    }
  })

  app.addHook('onReady', async () => {
    for (const [name, route] of referencedPolicies) {
      if (!policies.has(name)) throw createError('APP_ERR_POLICY_UNKNOWN', route, name)
    }
  })

  app.setNotFoundHandler(async (request, reply) => {
    if (fallbackRequiresUser && await app.session.authenticate(request, reply) === undefined) {
      return await app.authentication.challenge(request, reply)
    }
    return sendError(request, reply, 404, { code: 'APP_ERR_NOT_FOUND' })
  })
}

export default fp(authorizationPlugin, { name: 'authorization', dependencies: ['session', 'authentication'] })
