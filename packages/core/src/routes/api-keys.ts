/**
 * /Account/ApiKeys (issue 42, item 6): the built-in pages over `app.apiKeys`, registered only when
 * an ApiKey scheme is enabled. The list of the signed-in user's keys (and their tenant's, for a
 * user who meets the scheme's TenantAdministratorPolicy), creating a key (the secret shown once,
 * `Cache-Control: no-store`) and revoking one; `scheme` (query or form) picks the scheme, default
 * the first enabled one.
 *
 * - Session only: the routes never accept a bearer token (`config.bearer: false`), and a request
 *   that presents one or an API key (Authorization Bearer/DPoP, X-API-Key) is refused 403 before
 *   anything else (`api_key.management_refused`): a key is never a session and manages no key.
 * - Creating goes through the scheme's creation policy (CreationMaxAgeSeconds): an older sign-in
 *   gets the step-up challenge. The owner comes from the session; a body that names another owner
 *   is refused by the service, which audits it. Bad input re-renders the form (400, 409 for the
 *   per-owner limit) naming the field.
 * - Revoking: anti-forgery protected; another owner's key answers as a missing one (404).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { createRequestOf, formValuesOf } from '../api-keys/create-form.js'
import { API_KEY_MANAGEMENT_REFUSED_EVENT, actorAuditFields } from '../api-keys/api-key-events.js'
import { ApiKeyManagementError, creationPolicyOf, type ApiKeyService, type ApiKeyView, type CreatedApiKey } from '../api-keys/api-key-service.js'
import { decidePolicy } from '../authorization/policies.js'
import { tenantOf } from '../authorization/tenants.js'
import { presentationOf } from '../bearer/presentation.js'
import { ERRORS } from '../errors.js'
import { singleValue } from '../http/request-input.js'
import { sendError } from '../http/responses.js'
import { tenantAdministratorOf, type ApiKeysApi } from '../plugins/api-keys.js'
import type { Principal } from '../session/principal.js'
import { API_KEYS_PATH, apiKeysPage, createdKeyPage, type ApiKeyCreateForm, type ApiKeyFormProblem, type ApiKeyList, type ApiKeyRow } from '../views/api-keys-page.js'

export interface ApiKeyRoutesOptions {
  readonly now: () => number
}

/** What the pages share: the app, its keys, its clock. */
interface PagesContext {
  readonly app: FastifyInstance
  readonly apiKeys: ApiKeysApi
  readonly now: () => number
}

/** A refused creation: the form shown again with the problem, and the answer's status. */
interface Refused extends Pick<ApiKeyCreateForm, 'values' | 'problem'> {
  readonly statusCode: 400 | 409
}

const ROUTE = { config: { authorize: true, bearer: false } } as const
const HTML = 'text/html; charset=utf-8'

const schemeQuery = (service: ApiKeyService): string => `?${new URLSearchParams({ scheme: service.scheme }).toString()}`
const secondsOf = (iso: string): number => Math.floor(Date.parse(iso) / 1000)

/** The service `value` names (undefined or empty: the first enabled scheme), or undefined for a name that is none. */
function serviceNamed (apiKeys: ApiKeysApi, value: string | null | undefined): ApiKeyService | undefined {
  if (value === undefined || value === '') return apiKeys.scheme()
  return typeof value === 'string' && apiKeys.schemes.includes(value) ? apiKeys.scheme(value) : undefined
}

function rowOf (key: ApiKeyView, nowMs: number): ApiKeyRow {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    lastFour: key.lastFour,
    scopes: key.scopes,
    created: secondsOf(key.created),
    lastUsed: key.lastUsed === undefined ? undefined : secondsOf(key.lastUsed),
    expires: secondsOf(key.expires),
    state: key.revoked !== undefined ? 'revoked' : Date.parse(key.expires) <= nowMs ? 'expired' : 'active'
  }
}

/** The page's words for a refused creation, naming the field, and the answer's status. */
function refusedForm (error: ApiKeyManagementError, service: ApiKeyService, body: unknown): Refused {
  const values = formValuesOf(body)
  const settings = service.settings
  if (error.code === 'APP_ERR_API_KEY_LIMIT') {
    return { statusCode: 409, values, problem: { message: `This owner already holds the most active keys allowed (${settings.MaxKeysPerOwner}). Revoke one that is no longer used first.` } }
  }
  const problem = ((): ApiKeyFormProblem => {
    switch (error.field) {
      case 'name': return { field: 'name', message: 'Name: enter 1 to 100 characters, without control characters.' }
      case 'scopes': return { field: 'scopes', message: 'Scopes: choose at least one of the scopes listed (a key for yourself can only have scopes you have).' }
      case 'lifetimeDays': return { field: 'lifetimeDays', message: `Lifetime in days: enter a whole number from 1 to ${settings.MaxLifetimeDays}.` }
      case 'owner': return { field: 'owner', message: 'Owner: choose one of the owners listed.' }
      default: return { message: `The request has a field the form does not have (${error.field ?? 'request'}). No key was created.` }
    }
  })()
  return { statusCode: 400, values, problem }
}

/** Whether the caller administers their tenant's keys in this scheme (its TenantAdministratorPolicy). */
function administersTenant (ctx: PagesContext, service: ApiKeyService, principal: Principal): boolean {
  const policy = tenantAdministratorOf(ctx.app, service.settings)
  return policy !== undefined && tenantOf(principal) !== undefined && decidePolicy(policy, principal, Math.floor(ctx.now() / 1000)).outcome === 'allow'
}

/** The key lists the caller sees, newest first: their own, and their tenant's as its administrator. */
async function listsOf (ctx: PagesContext, service: ApiKeyService, principal: Principal, tenant: boolean): Promise<ApiKeyList[]> {
  const now = ctx.now()
  const rows = async (owner: 'user' | 'tenant'): Promise<ApiKeyRow[]> => (await service.list(principal, owner)).reverse().map((key) => rowOf(key, now))
  const lists: ApiKeyList[] = [{ owner: 'user', heading: 'Your keys', keys: await rows('user') }]
  if (tenant) lists.push({ owner: 'tenant', heading: 'Your organisation\'s keys', keys: await rows('tenant') })
  return lists
}

async function sendListPage (ctx: PagesContext, request: FastifyRequest, reply: FastifyReply, service: ApiKeyService, refused?: Refused): Promise<FastifyReply> {
  const principal = request.user as Principal
  const settings = service.settings
  const tenant = administersTenant(ctx, service, principal)
  const page = apiKeysPage(ctx.app.pages.layout, {
    userName: principal.name,
    csrfToken: reply.generateCsrf({ userInfo: principal.ticket.sessionId }),
    schemes: ctx.apiKeys.schemes.map((scheme) => ({ scheme, displayName: ctx.apiKeys.scheme(scheme).settings.DisplayName || scheme })),
    scheme: service.scheme,
    lists: await listsOf(ctx, service, principal, tenant),
    form: {
      scopes: settings.Scopes,
      defaultLifetimeDays: settings.DefaultLifetimeDays,
      maxLifetimeDays: settings.MaxLifetimeDays,
      owners: [...(settings.Owners.includes('User') ? ['user' as const] : []), ...(tenant ? ['tenant' as const] : [])],
      recentSignIn: decidePolicy(creationPolicyOf(service.scheme, settings), principal, Math.floor(ctx.now() / 1000)).outcome === 'allow',
      maxAgeSeconds: settings.CreationMaxAgeSeconds,
      confirmUrl: `${API_KEYS_PATH}/Confirm${schemeQuery(service)}`,
      values: refused?.values,
      problem: refused?.problem
    }
  })
  return reply.code(refused?.statusCode ?? 200).header('cache-control', 'no-store').type(HTML).send(page)
}

/** A key or bearer token is never a session: refused before the session is read, and audited. */
async function refuseRequestCredentials (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const presented = presentationOf(request.headers.authorization) !== undefined || request.headers['x-api-key'] !== undefined
  if (!presented) return undefined
  const action = request.method === 'GET' ? 'list' : request.url.startsWith(`${API_KEYS_PATH}/Revoke`) ? 'revoke' : 'create'
  request.log.warn({ event: API_KEY_MANAGEMENT_REFUSED_EVENT, action, code: 'APP_ERR_API_KEY_SESSION_REQUIRED' }, 'API key management refused')
  return sendError(request, reply, 403, { code: 'APP_ERR_API_KEY_SESSION_REQUIRED' })
}

/** "Sign in again to create a key": the creation policy's step-up, which returns here, then the form. */
async function confirmSignIn (ctx: PagesContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const service = serviceNamed(ctx.apiKeys, singleValue(request.query, 'scheme'))
  if (service === undefined) return sendError(request, reply, 404)
  const principal = request.user as Principal
  const policy = creationPolicyOf(service.scheme, service.settings)
  const decision = decidePolicy(policy, principal, Math.floor(ctx.now() / 1000))
  if (decision.outcome === 'step_up') return await ctx.app.authentication.stepUp(request, reply, policy, principal, decision.requirement)
  return reply.redirect(`${API_KEYS_PATH}${schemeQuery(service)}#create-heading`, 303)
}

async function createKey (ctx: PagesContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const service = serviceNamed(ctx.apiKeys, singleValue(request.body, 'scheme'))
  if (service === undefined) return sendError(request, reply, 404)
  const principal = request.user as Principal
  let created: CreatedApiKey
  try {
    created = await service.create(principal, createRequestOf(request.body))
  } catch (error) {
    if (!(error instanceof ApiKeyManagementError)) throw error
    switch (error.code) {
      case 'APP_ERR_AUTH_STEP_UP_REQUIRED': return await ctx.app.authentication.stepUp(request, reply, creationPolicyOf(service.scheme, service.settings), principal, error.requirement)
      case 'APP_ERR_API_KEY_REQUEST_INVALID':
      case 'APP_ERR_API_KEY_LIMIT': return await sendListPage(ctx, request, reply, service, refusedForm(error, service, request.body))
      case 'APP_ERR_AUTH_FORBIDDEN': return ctx.app.authentication.forbid(request, reply)
      default: return sendError(request, reply, ERRORS[error.code].status, { code: error.code })
    }
  }
  // The key is on this answer only: never stored by a cache, never logged.
  return reply.code(201).header('cache-control', 'no-store').type(HTML).send(createdKeyPage(ctx.app.pages.layout, {
    userName: principal.name,
    scheme: service.scheme,
    name: created.apiKey.name,
    secret: created.secret.reveal(),
    scopes: created.apiKey.scopes,
    expires: secondsOf(created.apiKey.expires)
  }))
}

async function revokeKey (ctx: PagesContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const service = serviceNamed(ctx.apiKeys, singleValue(request.body, 'scheme'))
  if (service === undefined) return sendError(request, reply, 404)
  const principal = request.user as Principal
  const keyId = singleValue(request.body, 'keyId')
  const revoked = typeof keyId === 'string' && keyId.length <= 64 && await service.revoke(principal, keyId)
  if (revoked) return reply.redirect(`${API_KEYS_PATH}${schemeQuery(service)}`, 303)
  // Another owner's key, a revoked one and none at all answer alike; the attempt is audited.
  const named = typeof keyId === 'string' && /^[0-9A-Za-z]{16}$/.test(keyId) ? { keyId } : {}
  request.log.warn({ event: API_KEY_MANAGEMENT_REFUSED_EVENT, scheme: service.scheme, action: 'revoke', reason: 'not_found', ...named, ...actorAuditFields(principal) }, 'API key management refused')
  return sendError(request, reply, 404)
}

/** The pages, when an ApiKey scheme is enabled (else no route: /Account/ApiKeys is then 404 like any path). */
export default async function apiKeyRoutes (app: FastifyInstance, options: ApiKeyRoutesOptions): Promise<void> {
  const apiKeys = app.apiKeys
  if (apiKeys === undefined) return
  const ctx: PagesContext = { app, apiKeys, now: options.now }
  // This plugin's own hook: it runs before each route's authorization hook, on these routes only.
  app.addHook('onRequest', refuseRequestCredentials)
  app.get(API_KEYS_PATH, ROUTE, async (request, reply) => {
    const service = serviceNamed(apiKeys, singleValue(request.query, 'scheme'))
    return service === undefined ? sendError(request, reply, 404) : await sendListPage(ctx, request, reply, service)
  })
  app.get(`${API_KEYS_PATH}/Confirm`, ROUTE, async (request, reply) => await confirmSignIn(ctx, request, reply))
  app.post(`${API_KEYS_PATH}/Create`, { ...ROUTE, preHandler: app.csrfProtection }, async (request, reply) => await createKey(ctx, request, reply))
  app.post(`${API_KEYS_PATH}/Revoke`, { ...ROUTE, preHandler: app.csrfProtection }, async (request, reply) => await revokeKey(ctx, request, reply))
}
