/**
 * Infrastructure probes, anonymous in the application (restrict them at the network boundary in
 * production). live: the process answers. ready: configuration is valid, the state store answers
 * and vouches for its invalidations, and every enabled provider's metadata is usable; 503 naming
 * the failing check otherwise (a rolling restart waits for it).
 */
import type { FastifyInstance } from 'fastify'

export default async function healthRoutes (app: FastifyInstance): Promise<void> {
  const live = JSON.stringify({ status: 'Healthy' })

  function readiness (): { healthy: boolean, body: Record<string, unknown> } {
    const providers: Record<string, { status: string, reason?: string }> = {}
    const store = app.state.status()
    let healthy = store.available
    const state = store.available
      ? { status: 'Healthy', provider: app.state.provider }
      : { status: 'Unhealthy', provider: app.state.provider, ...(store.reason === undefined ? {} : { reason: store.reason }) }
    for (const provider of app.authentication.providers.values()) {
      const status = provider.status()
      if (!status.available) healthy = false
      providers[provider.scheme] = status.available ? { status: 'Healthy' } : { status: 'Unhealthy', ...(status.reason === undefined ? {} : { reason: status.reason }) }
    }
    return { healthy, body: { status: healthy ? 'Healthy' : 'Unhealthy', checks: { configuration: { status: 'Healthy' }, state, providers } } }
  }

  app.get('/health', { config: { allowAnonymous: true } }, async (_request, reply) => {
    const { healthy, body } = readiness()
    return reply.code(healthy ? 200 : 503).type('application/json; charset=utf-8').send(JSON.stringify(body))
  })
  app.get('/health/live', { config: { allowAnonymous: true } }, async (_request, reply) => {
    return reply.type('application/json; charset=utf-8').send(live)
  })
  app.get('/health/ready', { config: { allowAnonymous: true } }, async (_request, reply) => {
    const { healthy, body } = readiness()
    return reply.code(healthy ? 200 : 503).type('application/json; charset=utf-8').send(JSON.stringify(body))
  })
}
