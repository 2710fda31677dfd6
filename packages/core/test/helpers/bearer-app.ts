/**
 * The app of the bearer-token tests: the core (createApp) with the bearer plugin and a few API
 * routes registered the way an app's routes are, and bearer schemes built from JwtBearer settings.
 * Routes: GET and POST /api/orders (fallback policy; POST behind anti-forgery), GET /api/public
 * (anonymous), GET /api/admin (the administrator role policy), GET /orders (a page, outside the
 * API prefixes) and GET /reports (a page path that opts in with `config: { bearer: true }`).
 */
import type { FastifyInstance } from 'fastify'
import { BearerSchemes } from '../../src/bearer/bearer-schemes.js'
import { JwtBearerScheme, type JwtBearerSettings } from '../../src/bearer/jwt-bearer-scheme.js'
import { RefusalLimit } from '../../src/bearer/refusal-limit.js'
import { createApp } from '../../src/create-app.js'
import bearer from '../../src/plugins/bearer.js'
import { buildTestApp as buildWithTesting, type TestApp } from '../../src/testing/app.js'
import type { TestSettings } from '../../src/testing/app.js'
import { APP_ROOT } from './app.js'

export interface BearerAppOptions {
  readonly schemes: Readonly<Record<string, Partial<JwtBearerSettings>>>
  readonly settings?: TestSettings
  /** Refused tokens per client and minute; default unlimited. */
  readonly refusalsPerWindow?: number
}

const DEFAULTS: JwtBearerSettings = { Authority: '', Issuer: '', JwksUri: '', Audiences: [], ValidAlgorithms: [], ClockSkewSeconds: 60, ClaimMappings: {} }

export interface BearerTestApp extends TestApp {
  readonly schemes: BearerSchemes
}

function routes (app: FastifyInstance): void {
  const who = (request: { user?: { subject?: string, scheme: string } | undefined, bearer?: { machine: boolean, clientId?: string, scopes: readonly string[] } | undefined }): Record<string, unknown> => ({
    subject: request.user?.subject ?? null,
    scheme: request.user?.scheme ?? null,
    machine: request.bearer?.machine ?? null,
    clientId: request.bearer?.clientId ?? null,
    scopes: request.bearer?.scopes ?? null
  })
  app.get('/api/orders', async (request) => who(request))
  app.post('/api/orders', { preHandler: app.csrfProtection }, async (request) => ({ created: true, ...who(request) }))
  app.get('/api/public', { config: { allowAnonymous: true } }, async (request) => who(request))
  app.get('/api/admin', { config: { authorize: 'application.Role.Administrator' } }, async (request) => who(request))
  app.get('/orders', async (request, reply) => await reply.type('text/html').send(`<p>${String(request.user?.subject)}</p>`))
  app.get('/reports', { config: { bearer: true } }, async (request) => who(request))
}

export async function buildBearerApp (options: BearerAppOptions): Promise<BearerTestApp> {
  let schemes: BearerSchemes | undefined
  const built = await buildWithTesting({
    contentRoot: APP_ROOT,
    settings: { Authentication: { Cookie: { AllowInsecureHttp: true } }, ...options.settings },
    nodeEnv: 'Development',
    buildApp: async (appOptions) => await createApp({
      ...appOptions,
      routes: async (app) => {
        schemes = new BearerSchemes(Object.entries(options.schemes).map(([scheme, settings]) => new JwtBearerScheme({
          scheme,
          settings: { ...DEFAULTS, ...settings },
          transformation: appOptions.config.Authentication.ClaimsTransformation,
          allowInsecureRequests: true,
          timeoutMs: 5000
        })))
        const perWindow = options.refusalsPerWindow
        await app.register(bearer, {
          schemes,
          pathPrefixes: ['/api/'],
          fallbackRequiresUser: true,
          ...(perWindow === undefined ? {} : { refusals: new RefusalLimit({ increment: app.state.increment!.bind(app.state), perWindow, windowMs: 60_000 }) })
        })
        routes(app)
      }
    })
  })
  return { ...built, schemes: schemes! }
}
