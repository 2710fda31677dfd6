/**
 * /Account/Sessions: the signed-in user's own live sessions (HTML page, or JSON by content
 * negotiation), and ending one of them or all others (authenticated + anti-forgery), through the
 * same revocation as "sign out everywhere": the record is deleted and every instance drops its
 * cached copy at once. Ending the current session is a sign-out of this browser.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { singleValue } from '../http/request-input.js'
import { wantsJson } from '../http/responses.js'
import { sessionStoreOf } from '../plugins/session.js'
import type { Principal } from '../session/principal.js'
import type { SessionList, SessionSummary } from '../session/session-store.js'
import { auditFieldsOf, sessionAuditIdOf } from '../session/user-identity.js'
import { sessionsPage } from '../views/sessions-page.js'

const SESSIONS_PATH = '/Account/Sessions'

/** The current session alone, for a principal without a user key (no subject claim: no index). */
function currentOnly (principal: Principal): SessionList {
  const ticket = principal.ticket
  const summary: SessionSummary = {
    sessionAuditId: sessionAuditIdOf(ticket.sessionId),
    provider: ticket.scheme,
    startedAt: ticket.startedAt ?? ticket.issuedAt,
    lastSeenAt: ticket.issuedAt,
    expiresAt: Math.min(ticket.expiresAt, ticket.absoluteExpiresAt),
    device: ticket.device ?? 'Unknown device'
  }
  return { total: 1, complete: true, sessions: [summary] }
}

const iso = (seconds: number): string => new Date(seconds * 1000).toISOString()

export default async function sessionRoutes (app: FastifyInstance): Promise<void> {
  const sessions = sessionStoreOf(app)
  const displayName = (scheme: string): string => app.authentication.providers.get(scheme)?.displayName ?? scheme

  function done (request: FastifyRequest, reply: FastifyReply, ended: number | boolean): FastifyReply {
    if (wantsJson(request)) return reply.header('cache-control', 'no-store').send({ ended })
    return reply.redirect(SESSIONS_PATH, 303)
  }

  app.get(SESSIONS_PATH, { config: { authorize: true } }, async (request, reply) => {
    const principal = request.user as Principal
    const userKey = principal.userKey
    const list = userKey === undefined ? currentOnly(principal) : await app.session.list(userKey)
    const currentId = sessionAuditIdOf(principal.ticket.sessionId)
    reply.header('cache-control', 'no-store')
    if (wantsJson(request)) {
      return reply.send({
        total: list.total,
        complete: list.complete,
        sessions: list.sessions.map((session) => ({
          ...session,
          startedAt: iso(session.startedAt),
          lastSeenAt: iso(session.lastSeenAt),
          expiresAt: iso(session.expiresAt),
          current: session.sessionAuditId === currentId
        }))
      })
    }
    return reply.type('text/html; charset=utf-8').send(sessionsPage(app.pages.layout, {
      userName: principal.name,
      total: list.total,
      csrfToken: reply.generateCsrf({ userInfo: principal.ticket.sessionId }),
      sessions: list.sessions.map((session) => ({
        sessionAuditId: session.sessionAuditId,
        providerName: displayName(session.provider),
        device: session.device,
        startedAt: session.startedAt,
        lastSeenAt: session.lastSeenAt,
        current: session.sessionAuditId === currentId
      }))
    }))
  })

  app.post(`${SESSIONS_PATH}/End`, { config: { authorize: true }, preHandler: app.csrfProtection }, async (request, reply) => {
    const principal = request.user as Principal
    const target = singleValue(request.body, 'sessionAuditId')
    const fields = { ...auditFieldsOf(principal.ticket), endedSessionAuditId: typeof target === 'string' ? target.slice(0, 22) : undefined }
    if (target === sessionAuditIdOf(principal.ticket.sessionId)) {
      await reply.signOut()
      request.log.info({ event: 'session.ended_by_user', ...fields, ended: true, current: true }, 'the user ended a session')
      return wantsJson(request) ? reply.send({ ended: true }) : reply.redirect('/', 303)
    }
    const userKey = principal.userKey
    const ended = typeof target === 'string' && userKey !== undefined && await app.session.revokeByAuditId(userKey, target)
    request.log.info({ event: 'session.ended_by_user', ...fields, ended, current: false }, 'the user ended a session')
    return done(request, reply, ended)
  })

  app.post(`${SESSIONS_PATH}/EndOthers`, { config: { authorize: true }, preHandler: app.csrfProtection }, async (request, reply) => {
    const principal = request.user as Principal
    const userKey = principal.userKey
    const ended = userKey === undefined ? 0 : await sessions.endUserSessionsExcept(userKey, principal.ticket.sessionId)
    request.log.info({ event: 'session.others_ended', sessions: ended, ...auditFieldsOf(principal.ticket) }, 'the user ended their other sessions')
    return done(request, reply, ended)
  })
}
