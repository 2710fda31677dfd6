/**
 * The SCIM 2.0 endpoints (issue 41; RFC 7644), registered only when `Provisioning:Enabled`:
 * `/scim/v2/<connection>/` with `ServiceProviderConfig`, `ResourceTypes`, `Schemas`, `Users`,
 * `Groups`; `Bulk` and `Me` answer 501. Thin glue over scim/: the routes are declared
 * `allowAnonymous` (no session, no cookie, no anti-forgery token: they are not session routes)
 * and `bearer: false` (no JwtBearer scheme reads their header); each request is authenticated by
 * its connection's own token in an onRequest hook, before its body is read. Every refusal is a
 * SCIM error (`application/scim+json`, scim/scim-errors.ts), the same 401 for every credential
 * that is not this connection's active token and for an unknown connection. It also registers the
 * bearer deny check that refuses a deprovisioned person's bearer tokens (scim/deprovisioned-identities.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import type { ApplicationConfiguration } from '../providers/application-schema.js'
import { authenticateConnection } from '../scim/connection-tokens.js'
import { deprovisioningEffects } from '../scim/deprovisioning.js'
import { listResponse, resourceTypes, schemas, serviceProviderConfig } from '../scim/discovery.js'
import type { ScimDialect } from '../scim/document.js'
import type { ScimAnswer, ScimContext, ScimQuery } from '../scim/endpoint-context.js'
import { askProvisioningHooks, type ProvisioningGrant } from '../scim/provisioning-hook.js'
import * as groups from '../scim/groups-endpoint.js'
import { parseScimBody, SCIM_BODY_LIMITS } from '../scim/request-body.js'
import { notFound, SCIM_CONTENT_TYPE, scimErrorBody, ScimError, toScimError, unauthenticated } from '../scim/scim-errors.js'
import * as users from '../scim/users-endpoint.js'
import { rateLimitKey } from '../state/keys.js'
import { provisioningRuntimeOf, type ProvisioningRuntime } from './directory.js'
import { sha256Base64url } from '../sha256.js'

export const SCIM_PREFIX = '/scim/v2/:connection'

export interface ScimPluginOptions {
  readonly config: ApplicationConfiguration
}

type Params = { connection: string, id?: string }
type Handler = (context: ScimContext, request: FastifyRequest<{ Params: Params }>) => Promise<ScimAnswer>

const CONTEXT = Symbol('scim.context')
type ScimRequest = FastifyRequest & { [CONTEXT]?: ScimContext }

const ROUTE_CONFIG = { allowAnonymous: true, bearer: false } as const

function send (reply: FastifyReply, answer: ScimAnswer): FastifyReply {
  reply.code(answer.status).header('cache-control', 'no-store')
  if (answer.body === undefined) return reply.send()
  return reply.type(SCIM_CONTENT_TYPE).send(JSON.stringify(answer.body))
}

/** Fastify's own refusals (body too large, media type, empty body) as SCIM errors. */
function scimErrorOf (error: unknown): ScimError {
  const code = (error as { code?: unknown }).code
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new ScimError(413, `The request body is larger than ${SCIM_BODY_LIMITS.maxBytes} bytes.`)
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new ScimError(415, 'The request body must be application/scim+json.')
  if (code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH') return new ScimError(400, 'The request body is not valid JSON.', 'invalidSyntax')
  return toScimError(error)
}

/** The connection's request budget (`RateLimits:ProvisioningPerWindow`, counted in the state store for every instance). */
async function checkRateLimit (app: FastifyInstance, config: ApplicationConfiguration, connection: string): Promise<void> {
  const limits = config.RateLimits
  if (!limits.Enabled || app.state.increment === undefined) return
  const windowMs = limits.WindowSeconds * 1000
  const { count, ttlMs } = await app.state.increment(rateLimitKey('provisioning', sha256Base64url(connection)), windowMs)
  if (count > limits.ProvisioningPerWindow) {
    throw new ScimError(429, 'Too many requests for this connection; try again later.', undefined, { 'retry-after': String(Math.max(1, Math.ceil(ttlMs / 1000))) })
  }
}

/** The onRequest hook: the connection and its token, before anything else is read. */
function authenticate (app: FastifyInstance, runtime: ProvisioningRuntime, config: ApplicationConfiguration) {
  return async function authenticateScim (request: FastifyRequest): Promise<void> {
    const name = (request.params as Params).connection
    const connection = runtime.connections.get(name)
    if (connection === undefined) throw unauthenticated()
    await checkRateLimit(app, config, connection.name)
    const token = await authenticateConnection(runtime.store, connection.name, request.headers.authorization)
    if (token === undefined) {
      request.log.info({ event: 'provisioning.request.unauthenticated', connection: connection.name }, 'SCIM request without a valid connection token')
      throw unauthenticated()
    }
    const base = `${app.externalSignIn.publicOrigin(request)}/scim/v2/${connection.name}`
    const apiKeys = app.apiKeys
    const effects = deprovisioningEffects({
      revokeUser: app.session.revokeUser,
      ...(apiKeys === undefined ? {} : { revokeApiKeys: async (identity) => await apiKeys.revokeAllOf({ kind: 'user', identity }, 'deprovisioned') }),
      deprovisioned: runtime.deprovisioned,
      audit: (fields, message) => { request.log.info({ ...fields, tokenId: token.id }, message) }
    })
    const hooks = runtime.hooks
    const checkGrant = hooks.length === 0 ? undefined : async (grant: ProvisioningGrant) => { await askProvisioningHooks(hooks, grant, request.log) }
    ;(request as ScimRequest)[CONTEXT] = { store: runtime.store, connection, base, effects, notes: new Set(), ...(checkGrant === undefined ? {} : { checkGrant }) }
  }
}

/** Logs each non-standard form a connection's client uses, once per connection and process. */
function dialectLog (): (request: FastifyRequest, context: ScimContext) => void {
  const logged = new Set<string>()
  return (request, context) => {
    for (const dialect of context.notes) {
      const key = `${context.connection.name}\n${dialect}`
      if (logged.has(key)) continue
      logged.add(key)
      request.log.info({ event: 'provisioning.dialect', connection: context.connection.name, dialect: dialect satisfies ScimDialect }, 'a SCIM client used a non-standard form; accepted')
    }
  }
}

/** The discovery endpoints: GET only, 405 for anything else. */
function discoveryRoutes (app: FastifyInstance): void {
  const documents: Record<string, (context: ScimContext) => Record<string, unknown>> = {
    '/ServiceProviderConfig': (context) => serviceProviderConfig(context.base),
    '/ResourceTypes': (context) => listResponse(resourceTypes(context.base), 2, 1),
    '/Schemas': (context) => listResponse(schemas(context.base), 3, 1)
  }
  for (const [path, document] of Object.entries(documents)) {
    app.get(path, { config: ROUTE_CONFIG }, async (request, reply) => send(reply, { status: 200, body: document(contextOf(request)) }))
    app.route({ method: ['POST', 'PUT', 'PATCH', 'DELETE'], url: path, config: ROUTE_CONFIG, handler: async () => { throw new ScimError(405, 'This endpoint is read only.', undefined, { allow: 'GET' }) } })
  }
  const single = (list: (base: string) => Array<Record<string, unknown>>, type: string) => async (request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) => {
    const found = list(contextOf(request).base).find((entry) => entry.id === request.params.id)
    if (found === undefined) throw notFound(type)
    return send(reply, { status: 200, body: found })
  }
  app.get('/ResourceTypes/:id', { config: ROUTE_CONFIG }, single(resourceTypes, 'ResourceType'))
  app.get('/Schemas/:id', { config: ROUTE_CONFIG }, single(schemas, 'Schema'))
  app.route({ method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], url: '/Bulk', config: ROUTE_CONFIG, handler: async () => { throw new ScimError(501, 'Bulk operations are not supported.') } })
  app.route({ method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], url: '/Me', config: ROUTE_CONFIG, handler: async () => { throw new ScimError(501, '/Me is not supported.') } })
}

function contextOf (request: FastifyRequest): ScimContext {
  const context = (request as ScimRequest)[CONTEXT]
  if (context === undefined) throw unauthenticated()
  return context
}

const body = (request: FastifyRequest): Record<string, unknown> | undefined => request.body as Record<string, unknown> | undefined
const query = (request: FastifyRequest): ScimQuery => request.query as ScimQuery

/** `/Users` and `/Groups`. */
function resourceRoutes (app: FastifyInstance, logDialects: (request: FastifyRequest, context: ScimContext) => void): void {
  const routes: Array<[method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, handler: Handler]> = [
    ['GET', '/Users', async (c, r) => await users.listUsers(c, query(r))],
    ['POST', '/Users', async (c, r) => await users.createUser(c, body(r), query(r))],
    ['GET', '/Users/:id', async (c, r) => await users.getUser(c, r.params.id ?? '', query(r))],
    ['PUT', '/Users/:id', async (c, r) => await users.replaceUser(c, r.params.id ?? '', body(r), query(r))],
    ['PATCH', '/Users/:id', async (c, r) => await users.patchUser(c, r.params.id ?? '', body(r), query(r))],
    ['DELETE', '/Users/:id', async (c, r) => await users.deleteUser(c, r.params.id ?? '')],
    ['GET', '/Groups', async (c, r) => await groups.listGroups(c, query(r))],
    ['POST', '/Groups', async (c, r) => await groups.createGroup(c, body(r), query(r))],
    ['GET', '/Groups/:id', async (c, r) => await groups.getGroup(c, r.params.id ?? '', query(r))],
    ['PUT', '/Groups/:id', async (c, r) => await groups.replaceGroup(c, r.params.id ?? '', body(r), query(r))],
    ['PATCH', '/Groups/:id', async (c, r) => await groups.patchGroup(c, r.params.id ?? '', body(r), query(r))],
    ['DELETE', '/Groups/:id', async (c, r) => await groups.deleteGroup(c, r.params.id ?? '')]
  ]
  for (const [method, url, handler] of routes) {
    app.route<{ Params: Params }>({
      method,
      url,
      config: ROUTE_CONFIG,
      handler: async (request, reply) => {
        const context = contextOf(request)
        const answer = await handler(context, request)
        logDialects(request, context)
        if (method !== 'GET') request.log.info({ event: 'provisioning.change', connection: context.connection.name, method, resource: url.split('/')[1], id: request.params.id ?? (answer.body?.id as string | undefined), status: answer.status }, 'SCIM change')
        return send(reply, answer)
      }
    })
  }
}

/** The operation a route's method performs (a GET of a collection lists, of one resource reads; HEAD as GET). */
function operationOf (method: string, url: string): string {
  if (method === 'GET' || method === 'HEAD') return url.endsWith('/Users') || url.endsWith('/Groups') ? 'list' : 'read'
  return ({ POST: 'create', PUT: 'replace', PATCH: 'patch', DELETE: 'delete' } as Record<string, string>)[method] ?? 'other'
}

/** The name a request is counted under: its connection when that is one in use, else `unknown` (a bounded label). */
const countedConnection = (runtime: ProvisioningRuntime, request: FastifyRequest): string => {
  const name = (request.params as Partial<Params>).connection
  return name !== undefined && runtime.connections.has(name) ? name : 'unknown'
}

/**
 * Counts every SCIM request, answered or refused (telemetry/names.ts `app.provisioning.requests`):
 * each route gets, as it is registered, a response hook holding its resource and operation, which
 * logs one debug line with bounded fields (the telemetry counts it whatever the log level).
 */
function countRequests (app: FastifyInstance, runtime: ProvisioningRuntime): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const resource = route.url.slice(SCIM_PREFIX.length + 1).split('/')[0] ?? ''
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    const operations = new Map(methods.map((method) => [method, operationOf(method, route.url)]))
    const hook = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
      request.log.debug({ event: 'provisioning.request', connection: countedConnection(runtime, request), resource, operation: operations.get(request.method) ?? 'other', statusClass: `${Math.floor(reply.statusCode / 100)}xx` }, 'SCIM request')
      done()
    }
    const existing = route.onResponse
    route.onResponse = [...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]), hook] as never
  })
}

async function scimRoutes (app: FastifyInstance, options: ScimPluginOptions & { readonly runtime: ProvisioningRuntime }): Promise<void> {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser(['application/scim+json', 'application/json'], { parseAs: 'string', bodyLimit: SCIM_BODY_LIMITS.maxBytes }, (_request, text, done) => {
    try {
      done(null, parseScimBody(text as string))
    } catch (error) {
      done(error as Error, undefined)
    }
  })
  app.setErrorHandler((error, request, reply) => {
    const scim = scimErrorOf(error)
    if (scim.status >= 500 && scim.status !== 501 && scim.status !== 503) request.log.error({ event: 'provisioning.request.failed', errorName: (error as Error).name }, 'SCIM request failed')
    for (const [name, value] of Object.entries(scim.headers)) reply.header(name, value)
    return reply.code(scim.status).header('cache-control', 'no-store').type(SCIM_CONTENT_TYPE).send(JSON.stringify(scimErrorBody(scim)))
  })
  app.addHook('onRequest', authenticate(app, options.runtime, options.config))
  countRequests(app, options.runtime)
  discoveryRoutes(app)
  resourceRoutes(app, dialectLog())
}

/** Registers the endpoints under {@link SCIM_PREFIX} when provisioning is on (plugins/directory.ts opened the store). */
export default async function scim (app: FastifyInstance, options: ScimPluginOptions): Promise<void> {
  const runtime = provisioningRuntimeOf(app)
  if (runtime === undefined) return
  // A deprovisioned person's bearer tokens (JWT or introspected, cached or not) are refused from the next request on every instance.
  const { deprovisioned } = runtime
  app.requestCredentials.addDenyCheck((principal) => {
    const identity = principal.identity
    return identity === undefined ? false : deprovisioned.denies(identity)
  })
  await app.register(scimRoutes, { ...options, runtime, prefix: SCIM_PREFIX })
}
