/**
 * The starter page `/` (authenticated by the fallback policy: it declares no metadata) and the
 * terminal error page `/Home/Error/{statusCode?}`.
 */
import type { FastifyInstance } from 'fastify'
import { sendError } from '../http/responses.js'
import { homePage, publicHomePage } from '../views/pages.js'

/** `/Home/Error/<n>` answers with n for 400-599, 500 when absent, 400 for anything else. */
export function errorStatusFrom (segment: string | undefined): number {
  if (segment === undefined || segment === '') return 500
  if (!/^\d{3}$/.test(segment)) return 400
  const status = Number(segment)
  return status >= 400 && status <= 599 ? status : 400
}

export default async function homeRoutes (app: FastifyInstance): Promise<void> {
  app.get('/', async (request, reply) => {
    const principal = await app.session.authenticate(request, reply)
    if (principal === undefined) {
      // Only reachable when the fallback is off (the --authProvider none posture).
      return reply.type('text/html; charset=utf-8').send(publicHomePage())
    }
    const csrfToken = reply.generateCsrf({ userInfo: principal.ticket.sessionId })
    const scheme = principal.ticket.scheme
    return reply.type('text/html; charset=utf-8').send(homePage({
      userName: principal.name,
      // A ticket from a provider since disabled still names its scheme.
      providerName: app.authentication.providers.get(scheme)?.displayName ?? scheme,
      claims: principal.claims,
      csrfToken
    }))
  })

  app.get<{ Params: { statusCode?: string } }>('/Home/Error/:statusCode?', { config: { allowAnonymous: true } }, async (request, reply) => {
    return sendError(request, reply, errorStatusFrom(request.params.statusCode))
  })
}
