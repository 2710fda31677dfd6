/**
 * Infrastructure probes, anonymous in the application (restrict them at the network boundary in
 * production). live: the process answers. ready: configuration is valid, the instance is not
 * shutting down, the state store answers and vouches for its invalidations, and every enabled
 * provider's metadata is usable; 503 with Retry-After naming the failing check otherwise (a
 * rolling restart waits for it; a draining instance is taken out of rotation by it).
 */
import type { FastifyInstance, FastifyReply } from 'fastify'

declare module 'fastify' {
  interface FastifyInstance {
    /** Set by server.ts on SIGTERM: from then on readiness answers 503 (draining). */
    lifecycle: { draining: boolean }
  }
}

/** Seconds a client (or proxy) should wait before asking a not-ready instance again. */
export const READINESS_RETRY_AFTER_SECONDS = 5

export default async function healthRoutes (app: FastifyInstance): Promise<void> {
  const live = JSON.stringify({ status: 'Healthy' })

  function readiness (): { healthy: boolean, body: Record<string, unknown> } {
    const providers: Record<string, { status: string, reason?: string }> = {}
    const store = app.state.status()
    const draining = app.lifecycle.draining
    let healthy = store.available && !draining
    const state = store.available
      ? { status: 'Healthy', provider: app.state.provider }
      : { status: 'Unhealthy', provider: app.state.provider, ...(store.reason === undefined ? {} : { reason: store.reason }) }
    for (const provider of app.authentication.providers.values()) {
      const status = provider.status()
      // One customer's IdP (a provider from the app's provider source) being down does not make the app unready.
      if (!status.available && provider.runtime !== true) healthy = false
      providers[provider.scheme] = status.available ? { status: 'Healthy' } : { status: 'Unhealthy', ...(status.reason === undefined ? {} : { reason: status.reason }) }
    }
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
