/**
 * The app of the bearer-token tests: the core (createApp) configured with JwtBearer schemes
 * (`Authentication:Schemes:<Name>` with `Type: JwtBearer`), in Development so the issuers may
 * listen on loopback http, and a few API routes registered the way an app's routes are: GET and
 * POST /api/orders (fallback policy; POST behind anti-forgery), GET /api/public (anonymous),
 * GET /api/admin (the administrator role policy), GET /orders (a page, outside the API prefixes)
 * and GET /reports (a page path that opts in with `config: { bearer: true }`).
 */
import assert from 'node:assert/strict'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { BearerTokenError, type BearerFailure } from '../../src/bearer/failures.js'
import type { JwtBearerScheme } from '../../src/bearer/jwt-bearer-scheme.js'
import { createApp, type ApplicationParts } from '../../src/create-app.js'
import { buildTestApp as buildWithTesting, type TestApp, type TestSettings } from '../../src/testing/app.js'
import { APP_ROOT } from './app.js'

export interface BearerAppOptions {
  /** Name -> the scheme's keys (Type JwtBearer is added). */
  readonly schemes: Readonly<Record<string, TestSettings>>
  readonly settings?: TestSettings
  /** `RateLimits:BearerRefusalsPerWindow`. */
  readonly refusalsPerWindow?: number
  readonly policies?: ApplicationParts['policies']
  readonly providerSource?: ApplicationParts['providerSource']
  /** The app root; default the template's (a test that writes under `.state/` gives its own). */
  readonly contentRoot?: string
  /** The environment; default Development. */
  readonly nodeEnv?: string
  /** More routes, registered after the standard ones. */
  readonly routes?: (app: FastifyInstance) => void
}

export interface BearerTestApp extends TestApp {
  /** The registered bearer scheme `name`. */
  scheme: (name: string) => JwtBearerScheme
}

/** What a route answers about its caller. */
export function who (request: FastifyRequest): Record<string, unknown> {
  return {
    subject: request.user?.subject ?? null,
    scheme: request.user?.scheme ?? null,
    machine: request.bearer?.machine ?? null,
    clientId: request.bearer?.clientId ?? null,
    scopes: request.bearer?.scopes ?? null
  }
}

function routes (app: FastifyInstance): void {
  app.get('/api/orders', async (request) => who(request))
  app.post('/api/orders', { preHandler: app.csrfProtection }, async (request) => ({ created: true, ...who(request) }))
  app.get('/api/public', { config: { allowAnonymous: true } }, async (request) => who(request))
  app.get('/api/admin', { config: { authorize: 'application.Role.Administrator' } }, async (request) => who(request))
  app.get('/orders', async (request, reply) => await reply.type('text/html').send(`<p>${String(request.user?.subject)}</p>`))
  app.get('/reports', { config: { bearer: true } }, async (request) => who(request))
}

export async function buildBearerApp (options: BearerAppOptions): Promise<BearerTestApp> {
  const schemes = Object.fromEntries(Object.entries(options.schemes).map(([name, settings]) => [name, { Type: 'JwtBearer', ...settings }]))
  const built = await buildWithTesting({
    contentRoot: options.contentRoot ?? APP_ROOT,
    nodeEnv: options.nodeEnv ?? 'Development',
    ...(options.providerSource === undefined ? {} : { providerSource: options.providerSource }),
    settings: {
      ...options.settings,
      Authentication: { Cookie: { AllowInsecureHttp: true }, Schemes: schemes, ...(options.settings?.Authentication as TestSettings | undefined) },
      ...(options.refusalsPerWindow === undefined ? {} : { RateLimits: { BearerRefusalsPerWindow: options.refusalsPerWindow } })
    },
    buildApp: async (appOptions) => await createApp({
      ...appOptions,
      ...(options.policies === undefined ? {} : { policies: options.policies }),
      routes: async (app) => {
        routes(app)
        options.routes?.(app)
      }
    })
  })
  return {
    ...built,
    scheme: (name) => {
      const scheme = built.app.authentication.providers.get(name)?.credentialScheme as JwtBearerScheme | undefined
      if (scheme === undefined) throw new Error(`no bearer scheme ${name}`)
      return scheme
    }
  }
}

/** The failure class `promise` (a token verification) is refused with; fails the test when it is accepted. */
export async function bearerFailureOf (promise: Promise<unknown>): Promise<BearerFailure> {
  try {
    await promise
  } catch (error) {
    assert.ok(error instanceof BearerTokenError, `a BearerTokenError, got ${String(error)}`)
    return error.failure
  }
  assert.fail('the token was accepted')
}
