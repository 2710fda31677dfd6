/**
 * Telemetry's Fastify glue (`<Root>:Telemetry`, docs/telemetry.md), loaded by createApp through a
 * dynamic import only when Telemetry:Enabled is true. {@link startTelemetry} starts the SDK and
 * returns what createApp wires in, each in one line: the observed logger (log events count into
 * metrics, telemetry/names.ts), the observed state store, the instrumentation plugin (request
 * spans, request durations, sign-ins started, sign-in step spans, authorization refusals,
 * provider availability) registered before any route, and the metrics endpoint registered after authorization so the route gets its policy.
 */
import fp from 'fastify-plugin'
import { trace, SpanStatusCode, type Tracer } from '@opentelemetry/api'
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { ApplicationAuthorizationPolicyNames } from '../authorization/policies.js'
import type { TelemetryConfiguration } from '../config/telemetry-schema.js'
import type { StateStore } from '../state/state-store.js'
import { createEventRecorder, createInstruments, type Instruments } from '../telemetry/event-metrics.js'
import { observeLogger } from '../telemetry/observed-logger.js'
import { observeStore } from '../telemetry/observed-store.js'
import { metricsRouteAccess, metricsRouteWarning } from '../telemetry/metrics-route.js'
import { observeProviders } from '../telemetry/provider-gauge.js'
import type { RequestTally } from '../telemetry/request-tally.js'
import { startSdk, type TelemetrySdk } from '../telemetry/sdk.js'

export interface Telemetry {
  /** The logger Fastify gets: level calls count their events first. */
  readonly observeLogger: <L extends FastifyBaseLogger>(logger: L) => L
  /** The state store with every operation measured. */
  readonly observeStore: (store: StateStore) => StateStore
  /** Register right after creating the app, before any route. */
  readonly instrumentation: (app: FastifyInstance) => Promise<void>
  /**
   * Register after the authorization plugin: the metrics route (Prometheus:Enabled, Port 0), only
   * when Policy or AllowAnonymous opens it; otherwise a warning naming Prometheus:Policy.
   */
  readonly endpoint: (app: FastifyInstance) => Promise<void>
}

/** The tracer of the sign-in step spans (a no-op tracer unless Traces:Enabled registered a provider). */
const TRACER_NAME = '@project-template/core'

/** The policy a refused request's route required, for the `policy` label. */
function policyOf (request: FastifyRequest): string {
  const authorize = request.routeOptions.config?.authorize
  return typeof authorize === 'string' ? authorize : ApplicationAuthorizationPolicyNames.AuthenticatedUser
}

/** `fn` inside an active child span named `name` (ended, with an error status when it throws). */
async function inSpan<R> (tracer: Tracer, name: string, attributes: Record<string, string>, fn: () => Promise<R>): Promise<R> {
  return await tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn()
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error | null)?.name ?? 'Error' })
      throw error
    } finally {
      span.end()
    }
  })
}

/**
 * Counts sign-ins started and authorization refusals, and makes each step of the external sign-in
 * (begin, take the flow, complete, fail) a child span of the request, by wrapping the decorated
 * APIs once every plugin is registered: the protocol code is not touched.
 */
function wrapDecoratedApis (app: FastifyInstance, instruments: Instruments): void {
  const { counters } = instruments
  const tracer = trace.getTracer(TRACER_NAME)
  const authentication = app.authentication
  const { challenge, forbid } = authentication
  authentication.challenge = (request: FastifyRequest, reply: FastifyReply) => {
    counters.authorizationRefused.add(1, { policy: policyOf(request), outcome: 'challenge' })
    return challenge(request, reply)
  }
  authentication.forbid = (request: FastifyRequest, reply: FastifyReply) => {
    counters.authorizationRefused.add(1, { policy: policyOf(request), outcome: 'forbid' })
    return forbid(request, reply)
  }
  if (!app.hasDecorator('externalSignIn')) return
  const signIn = app.externalSignIn
  const { beginFlow, takeFlow, complete, fail } = signIn
  signIn.beginFlow = async (reply, scheme, returnUrl, data) => await inSpan(tracer, 'sign_in.begin', { 'app.provider': scheme }, async () => {
    const flowId = await beginFlow(reply, scheme, returnUrl, data)
    counters.signInStarted.add(1, { provider: scheme })
    return flowId
  })
  signIn.takeFlow = async (request, reply, scheme, flowId) => await inSpan(tracer, 'sign_in.take_flow', { 'app.provider': scheme }, async () => await takeFlow(request, reply, scheme, flowId))
  signIn.complete = async (request, reply, taken, completion) => await inSpan(tracer, 'sign_in.complete', { 'app.provider': completion.scheme }, async () => await complete(request, reply, taken, completion))
  signIn.fail = (...args: Parameters<typeof fail>) => tracer.startActiveSpan('sign_in.fail', { attributes: { 'app.provider': args[2], 'app.failure': args[3] } }, (span) => {
    try {
      return fail(...args)
    } finally {
      span.end()
    }
  })
}

type ResponseHook = (request: FastifyRequest, reply: FastifyReply, done: () => void) => void

/**
 * `http.server.request.duration`: each route gets its own onResponse hook as it is registered,
 * holding its template's tally (telemetry/request-tally.ts), so a response is recorded without
 * reading `request.routeOptions` (a getter that builds an object). Requests that match no route
 * are recorded by one app-wide hook that acts only for them. The metrics route (`otel: false`)
 * is not measured, as it is not traced.
 */
function recordRequests (app: FastifyInstance, requests: RequestTally): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.config?.otel === false) return
    const tally = requests.route(route.url)
    const hook: ResponseHook = (request, reply, done) => { tally.record(request.method, reply.statusCode, reply.elapsedTime); done() }
    const existing = route.onResponse
    route.onResponse = [...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]), hook] as never
  })
  const unmatched = requests.route(undefined)
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) unmatched.record(request.method, reply.statusCode, reply.elapsedTime)
    done()
  })
}

/** Starts the SDK (startup fails naming Telemetry:Enabled when it is not installed) and returns the wiring. */
export async function startTelemetry (settings: TelemetryConfiguration, rootKey: string): Promise<Telemetry> {
  const serviceName = settings.ServiceName.trim() === '' ? rootKey : settings.ServiceName.trim()
  const sdk: TelemetrySdk = await startSdk(settings, serviceName, rootKey)
  const instruments = createInstruments(sdk.meter, sdk.tally)
  const record = createEventRecorder(instruments)
  const prometheus = settings.Prometheus

  return {
    observeLogger: (logger) => observeLogger(logger, record),
    observeStore: (store) => observeStore(store, instruments),
    instrumentation: fp(async (app: FastifyInstance) => {
      if (sdk.requestSpans !== undefined) await app.register(sdk.requestSpans)
      recordRequests(app, sdk.requests)
      app.addHook('onReady', async () => {
        wrapDecoratedApis(app, instruments)
        observeProviders(sdk.meter, () => app.authentication.providers.values())
      })
      app.addHook('onClose', async () => { await sdk.shutdown() })
    }, { name: 'telemetry-instrumentation' }),
    endpoint: fp(async (app: FastifyInstance) => {
      const scrape = sdk.scrape
      if (scrape === undefined) return
      const access = metricsRouteAccess(prometheus)
      if (access === undefined) {
        const warning = metricsRouteWarning(settings, rootKey)
        if (warning !== undefined) app.log.warn({ event: warning.event, key: warning.key }, warning.message)
        return
      }
      app.get(prometheus.Path, { config: { ...access, otel: false } }, async (_request, reply) => {
        const body = await scrape()
        return reply.header('cache-control', 'no-store').type('text/plain; version=0.0.4; charset=utf-8').send(body)
      })
    }, { name: 'telemetry-endpoint' })
  }
}
