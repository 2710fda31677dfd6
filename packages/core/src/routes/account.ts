/**
 * /Account: the login page (lists registered providers; no credential form ever), logout and
 * "sign out everywhere" (authenticated + anti-forgery) and the access-denied page (403, never
 * redirects).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { outcomeMessage } from '../sign-in/sign-in-failure.js'
import { isRejectedReturnUrl, sendReturnUrlRejected, singleValue } from '../http/request-input.js'
import { auditFieldsOf } from '../session/user-identity.js'
import { sendLoginPage } from './login-page.js'

function rejectReturnUrl (request: FastifyRequest, reply: FastifyReply): FastifyReply {
  request.log.info({ event: 'return_url.rejected' }, 'non-local return URL rejected')
  return sendReturnUrlRejected(request, reply)
}

export default async function accountRoutes (app: FastifyInstance): Promise<void> {
  app.get('/Account/Login', { config: { allowAnonymous: true } }, async (request, reply) => {
    const returnUrl = singleValue(request.query, 'ReturnUrl')
    if (isRejectedReturnUrl(returnUrl)) return rejectReturnUrl(request, reply)
    const failure = singleValue(request.query, 'failure')
    return sendLoginPage(app, reply, {
      returnUrl: returnUrl ?? undefined,
      failureMessage: typeof failure === 'string' ? outcomeMessage(failure) : undefined
    })
  })

  app.post('/Account/Logout', {
    config: { authorize: true, rateLimitBucket: 'sign-out' },
    preHandler: app.csrfProtection
  }, async (request, reply) => {
    const returnUrl = singleValue(request.body, 'returnUrl')
    if (isRejectedReturnUrl(returnUrl)) return rejectReturnUrl(request, reply)
    const principal = request.user
    await reply.signOut()
    request.log.info({ event: 'session.signed_out', ...(principal === undefined ? {} : auditFieldsOf(principal.ticket)) }, 'signed out')
    // Continues at the provider's own logout (OIDC end_session, SAML2 SLO) when it offers one.
    const continued = principal === undefined ? undefined : await app.authentication.continueSignOut(request, reply, { principal, returnUrl: returnUrl ?? '/' })
    return continued ?? reply.redirect(returnUrl ?? '/', 302)
  })

  // Ends every session of the signed-in user (scheme, issuer and subject: never another provider's
  // user with the same subject value), on every instance (other browsers and devices included),
  // then this one. A principal without a subject claim ends only this session.
  app.post('/Account/LogoutEverywhere', {
    config: { authorize: true, rateLimitBucket: 'sign-out' },
    preHandler: app.csrfProtection
  }, async (request, reply) => {
    const principal = request.user
    const identity = principal?.identity
    const ended = identity === undefined ? 0 : await app.session.revokeUser(identity)
    await reply.signOut()
    request.log.info({ event: 'session.signed_out_everywhere', sessions: ended, ...(principal === undefined ? {} : auditFieldsOf(principal.ticket)) }, 'signed out everywhere')
    return reply.redirect('/', 302)
  })

  app.get('/Account/AccessDenied', { config: { allowAnonymous: true } }, async (request, reply) => {
    const principal = await app.session.authenticate(request, reply)
    return reply.code(403).type('text/html; charset=utf-8').send(app.pages.accessDeniedPage(principal?.name))
  })
}
