/**
 * Infrastructure probes, anonymous in the application (restrict them at the network boundary in
 * production). live: the process answers. ready: configuration is valid, the instance is not
 * shutting down, the state store answers and vouches for its invalidations, and every enabled
 * provider's metadata is usable; 503 with Retry-After naming the failing check otherwise (a
 * rolling restart waits for it; a draining instance is taken out of rotation by it).
 *
 * The providers check is an aggregate that names no scheme: runtime providers are customers, and
 * an anonymous answer must not list them (issue 33, item 4). Which provider is down is in the
 * `external.metadata.failed` / `saml2.metadata.failed` log lines and in the `app.provider.available`
 * gauge on the metrics endpoint (docs/telemetry.md), which is not anonymous on the app's port.
 */
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { AuthenticationProvider } from '../providers/provider.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Set by server.ts on SIGTERM: from then on readiness answers 503 (draining). */
    lifecycle: { draining: boolean }
  }
}

/** Seconds a client (or proxy) should wait before asking a not-ready instance again. */
export const READINESS_RETRY_AFTER_SECONDS = 5

/**
 * The providers check of an anonymous health answer: how many enabled providers are unavailable,
 * configured ones apart from runtime ones, and their failure classes (sorted, each once), never
 * a scheme. Unhealthy: a configured provider is down (the app is not ready). Degraded: only
 * runtime providers are down (one customer's IdP does not make the app unready).
 */
export interface ProvidersCheck {
  readonly status: 'Healthy' | 'Degraded' | 'Unhealthy'
  readonly unavailable: { readonly configured: number, readonly runtime: number }
  /** Present while any provider is unavailable: the failure classes (`metadata_unreachable`). */
  readonly reasons?: readonly string[]
}

export function providersCheck (providers: Iterable<Pick<AuthenticationProvider, 'runtime' | 'status'>>): ProvidersCheck {
  let configured = 0
  let runtime = 0
  const reasons = new Set<string>()
  for (const provider of providers) {
    const status = provider.status()
    if (status.available) continue
    if (provider.runtime === true) runtime++
    else configured++
    if (status.reason !== undefined) reasons.add(status.reason)
  }
  const status = configured > 0 ? 'Unhealthy' : runtime > 0 ? 'Degraded' : 'Healthy'
  return { status, unavailable: { configured, runtime }, ...(reasons.size === 0 ? {} : { reasons: [...reasons].sort() }) }
}

export default async function healthRoutes (app: FastifyInstance): Promise<void> {
  const live = JSON.stringify({ status: 'Healthy' })

  function readiness (): { healthy: boolean, body: Record<string, unknown> } {
    const store = app.state.status()
    const draining = app.lifecycle.draining
    const providers = providersCheck(app.authentication.providers.values())
    const healthy = store.available && !draining && providers.status !== 'Unhealthy'
    const state = store.available
      ? { status: 'Healthy', provider: app.state.provider }
      : { status: 'Unhealthy', provider: app.state.provider, ...(store.reason === undefined ? {} : { reason: store.reason }) }
    // The hosting check appears only while draining (the shape of a healthy answer is unchanged).
    const hosting = draining ? { hosting: { status: 'Unhealthy', reason: 'draining' } } : {}
    return { healthy, body: { status: healthy ? 'Healthy' : 'Unhealthy', checks: { configuration: { status: 'Healthy' }, ...hosting, state, providers } } }
  }

  function answer (reply: FastifyReply): FastifyReply {
    const { healthy, body } = readiness()
    if (!healthy) reply.code(503).header('retry-after', String(READINESS_RETRY_AFTER_SECONDS))
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(body))
  }

  app.get('/health', { config: { allowAnonymous: true } }, async (_request, reply) => answer(reply))
  app.get('/health/live', { config: { allowAnonymous: true } }, async (_request, reply) => {
    return reply.type('application/json; charset=utf-8').send(live)
  })
  app.get('/health/ready', { config: { allowAnonymous: true } }, async (_request, reply) => answer(reply))
}
