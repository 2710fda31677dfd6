/**
 * Endpoint authorization. A route's `config` is its authorization metadata:
 *   `{ allowAnonymous: true }`       public (bypasses the fallback policy)
 *   `{ authorize: true }`            the default policy: an authenticated user
 *   `{ authorize: '<policy name>' }` a named policy
 *   nothing                          the fallback policy (authenticated user while
 *                                    Authorization:RequireAuthenticatedUserByDefault is true)
 * The requirement is attached when the route is registered (onRoute); an unknown policy name
 * fails `ready()`. Requests matching no route get the fallback too (plugins/not-found.ts), so
 * anonymous callers cannot tell missing routes from protected ones. The governance seam runs only
 * after all of this.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import type { Principal } from '../session/principal.js'
import { principalAuditFields } from '../bearer/bearer-principal.js'
import { applicationPolicies, assertPolicyAuthentication, decidePolicy, type AuthorizationPolicy } from '../authorization/policies.js'
import { routeAccessOf, type RouteAuthorization } from '../authorization/route-access.js'
import type { ApplicationConfiguration } from '../providers/application-schema.js'
import { createError } from '../errors.js'
import { sendError, sendProblem, wantsJson } from '../http/responses.js'

export type { RouteAuthorization } from '../authorization/route-access.js'

/** Context a governance evaluator receives; the request has already passed authorization. @public */
export interface GovernanceContext {
  readonly action: string
  readonly principal: Principal | undefined
  readonly request: FastifyRequest
}

/** Decides whether an authorized caller may perform a governed action. @public */
export type GovernanceEvaluator = (context: GovernanceContext) => boolean | Promise<boolean>

/** `app.authorization`: named policies, the governance seam and the reviewed public surface. @public */
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

/** The named policies of each app's `app.authorization`, for {@link namedPolicyOf}. */
const namedPolicies = new WeakMap<AuthorizationApi, ReadonlyMap<string, AuthorizationPolicy>>()

/**
 * The named policy `name` (the contract's or one the app added), or undefined: for a plugin that
 * applies a policy a setting names (an ApiKey scheme's TenantAdministratorPolicy). Not public.
 */
export function namedPolicyOf (api: AuthorizationApi, name: string): AuthorizationPolicy | undefined {
  return namedPolicies.get(api)?.get(name)
}

type Hook = ((request: FastifyRequest, reply: FastifyReply) => Promise<unknown>) |
((request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void)

/** Puts `hook` first in the route's own hooks of that name. */
function addHook (route: RouteOptions, name: 'onRequest' | 'preHandler', hook: Hook): void {
  const existing = route[name]
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]
  route[name] = [hook, ...list] as never
}

/**
 * The onRequest hook of a protected route: resolves the session, evaluates the policy and, when
 * it does not allow, answers with the challenge or forbid. Callback style: an authorized request
 * passes synchronously, with no promise per request.
 */
function authorizeHook (app: FastifyInstance, policy: () => AuthorizationPolicy): Hook {
  return function authorize (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) {
    app.session.resolve(request, reply, (sessionError, principal) => {
      // A session the store cannot verify fails closed: the error handler answers 503.
      if (sessionError !== null) {
        done(sessionError)
        return
      }
      const required = policy()
      const decision = decidePolicy(required, principal)
      if (decision.outcome === 'allow') {
        done()
        return
      }
      // The challenge or forbid sends the answer and ends the request: done is never called
      // without an error, so the route handler cannot run.
      const fail = (error: unknown): void => { done(error instanceof Error ? error : new Error(String(error))) }
      try {
        const answer = decision.outcome === 'challenge'
          ? app.authentication.challenge(request, reply)
          : decision.outcome === 'step_up' && principal !== undefined
            ? app.authentication.stepUp(request, reply, required, principal, decision.requirement)
            : app.authentication.forbid(request, reply, required)
        if (answer instanceof Promise) answer.then(undefined, fail)
      } catch (error) {
        fail(error)
      }
    })
  }
}

/** The preHandler of a governed route: the evaluator set by then decides; without one, nothing. */
function governanceHook (app: FastifyInstance, action: string, evaluator: () => GovernanceEvaluator | undefined): Hook {
  return async function governance (request: FastifyRequest, reply: FastifyReply) {
    const evaluate = evaluator()
    if (evaluate === undefined) return undefined
    const principal = await app.session.authenticate(request, reply)
    const permitted = await evaluate({ action, principal, request })
    if (permitted) return undefined
    request.log.info({ event: 'governance.denied', action, ...(principal === undefined ? {} : principalAuditFields(principal)) }, 'governed action denied')
    return wantsJson(request)
      ? sendProblem(request, reply, 403, { code: 'APP_ERR_GOVERNANCE_DENIED' })
      : sendError(request, reply, 403, { code: 'APP_ERR_GOVERNANCE_DENIED' })
  }
}

async function authorizationPlugin (app: FastifyInstance, options: AuthorizationPluginOptions): Promise<void> {
  const fallbackRequiresUser = options.config.Authorization.RequireAuthenticatedUserByDefault
  const policies = new Map<string, AuthorizationPolicy>()
  for (const policy of applicationPolicies(options.config.Authorization)) policies.set(policy.name, policy)
  const referencedPolicies = new Map<string, string>()
  const anonymous = new Set<string>()
  let evaluator: GovernanceEvaluator | undefined

  const api: AuthorizationApi = {
    addPolicy (policy: AuthorizationPolicy) {
      if (policies.has(policy.name)) throw createError('APP_ERR_POLICY_DUPLICATE', policy.name)
      assertPolicyAuthentication(policy)
      policies.set(policy.name, policy)
    },
    useGovernanceEvaluator (next: GovernanceEvaluator) {
      evaluator = next
    },
    anonymousRoutes: () => [...anonymous].sort()
  }
  namedPolicies.set(api, policies)
  app.decorate('authorization', api)

  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    const access = routeAccessOf(route.config ?? {}, `${String(route.method)} ${route.url}`, fallbackRequiresUser)
    if (access.kind === 'anonymous') {
      for (const method of methods) if (method !== 'HEAD') anonymous.add(`${method} ${route.url}`)
    } else {
      // Name the first route that uses the policy (not the HEAD route Fastify adds for a GET).
      if (!referencedPolicies.has(access.name)) referencedPolicies.set(access.name, `${methods.join(',')} ${route.url}`)
      // Resolved at ready(): every referenced name exists.
      addHook(route, 'onRequest', authorizeHook(app, () => policies.get(access.name) as AuthorizationPolicy))
    }
    const action = route.config?.governance?.action
    if (action !== undefined) addHook(route, 'preHandler', governanceHook(app, action, () => evaluator))
  })

  app.addHook('onReady', async () => {
    for (const [name, route] of referencedPolicies) {
      if (!policies.has(name)) throw createError('APP_ERR_POLICY_UNKNOWN', route, name)
    }
  })
}

export default fp(authorizationPlugin, { name: 'authorization', dependencies: ['session', 'authentication'] })
