/**
 * /Account: the login page (lists registered providers; no credential form ever), logout
 * (authenticated + anti-forgery) and the access-denied page (403, never redirects).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { isLocalUrl } from '../auth/local-url.js'
import { sendError } from '../plugins/responses.js'
import { accessDeniedPage, loginPage } from '../views/pages.js'

/** Fixed texts for `?failure=<class>` after a failed sign-in flow; nothing from the request is echoed. */
export const SIGN_IN_FAILURE_MESSAGES: Readonly<Record<string, string>> = {
  cancelled: 'Sign-in was cancelled.',
  correlation: 'Sign-in could not be completed because the sign-in request could not be matched. Please try again.',
  unavailable: 'The sign-in provider is unavailable right now. Please try again later.',
  failed: 'Sign-in failed. Please try again or contact your administrator.'
}

/** Reads an optional single-valued query or form field, with case-insensitive name matching. */
export function singleValue (source: unknown, name: string): string | undefined | null {
  if (source === null || typeof source !== 'object') return undefined
  const lower = name.toLowerCase()
  let found: unknown
  for (const [key, value] of Object.entries(source)) {
    if (key.toLowerCase() !== lower) continue
    if (found !== undefined) return null
    found = value
  }
  if (found === undefined) return undefined
  return typeof found === 'string' ? found : null
}

/** A return URL given more than once (`null` from {@link singleValue}) or not local. Absent is fine. */
export function isRejectedReturnUrl (value: string | null | undefined): boolean {
  return value === null || (value !== undefined && !isLocalUrl(value))
}

/** The safe 400 answer to a rejected return URL: no redirect, the value never echoed. */
export function sendReturnUrlRejected (request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendError(request, reply, 400, { code: 'APP_ERR_RETURN_URL_INVALID', detail: 'The return URL must be a local path such as /orders?id=1.' })
}

function rejectReturnUrl (request: FastifyRequest, reply: FastifyReply): FastifyReply {
  request.log.info({ event: 'return_url.rejected' }, 'non-local return URL rejected')
  return sendReturnUrlRejected(request, reply)
}

export default async function accountRoutes (app: FastifyInstance): Promise<void> {
  app.get('/Account/Login', { config: { allowAnonymous: true } }, async (request, reply) => {
    const returnUrl = singleValue(request.query, 'ReturnUrl')
    if (isRejectedReturnUrl(returnUrl)) return rejectReturnUrl(request, reply)
    const failure = singleValue(request.query, 'failure')
    const providers = [...app.authentication.providers.values()]
      .map((provider) => ({ scheme: provider.scheme, displayName: provider.displayName, available: provider.status().available }))
      .sort((a, b) => a.displayName.localeCompare(b.displayName, 'en'))
    return reply.type('text/html; charset=utf-8').send(loginPage({
      providers,
      returnUrl: returnUrl ?? undefined,
      failureMessage: typeof failure === 'string' ? SIGN_IN_FAILURE_MESSAGES[failure] ?? SIGN_IN_FAILURE_MESSAGES.failed : undefined
    }))
  })

  app.post('/Account/Logout', {
    config: { authorize: true },
    preHandler: app.csrfProtection
  }, async (request, reply) => {
    const returnUrl = singleValue(request.body, 'returnUrl')
    if (isRejectedReturnUrl(returnUrl)) return rejectReturnUrl(request, reply)
    reply.signOut()
    request.log.info({ event: 'session.signed_out' }, 'signed out')
    return reply.redirect(returnUrl ?? '/', 302)
  })

  app.get('/Account/AccessDenied', { config: { allowAnonymous: true } }, async (request, reply) => {
    const principal = app.session.authenticate(request, reply)
    return reply.code(403).type('text/html; charset=utf-8').send(accessDeniedPage(principal?.name))
  })
}
