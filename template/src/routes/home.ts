/**
 * The starter page `/`: it declares no authorization metadata, so the fallback policy
 * authenticates it (an anonymous browser is sent to /Account/Login).
 */
import type { FastifyInstance } from 'fastify'
import { homePage, publicHomePage } from '../views/home.js'

export default async function homeRoutes (app: FastifyInstance): Promise<void> {
  app.get('/', async (request, reply) => {
    const principal = await app.session.authenticate(request, reply)
    if (principal === undefined) {
      // Only reachable when the fallback is off (the --authProvider none posture).
      return reply.type('text/html; charset=utf-8').send(publicHomePage(app.pages.layout))
    }
    const csrfToken = reply.generateCsrf({ userInfo: principal.ticket.sessionId })
    const scheme = principal.ticket.scheme
    return reply.type('text/html; charset=utf-8').send(homePage(app.pages.layout, {
      userName: principal.name,
      // A ticket from a provider since disabled still names its scheme.
      providerName: app.authentication.providers.get(scheme)?.displayName ?? scheme,
      claims: principal.claims,
      csrfToken
    }))
  })
}
