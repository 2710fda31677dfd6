/**
 * /External/Challenge: validates the provider scheme and the return URL, then starts that
 * provider's flow. Unknown or missing provider, the Cookies scheme, or a non-local return URL:
 * 400 safe page, no redirect, no challenge. Without `provider`, an `email` chooses the provider
 * whose Domains hold its domain (e-mail discovery): a malformed address is a 400, an address no
 * provider serves answers the login page with a message that names no provider, the address
 * still in its field.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { messageOf } from '../errors.js'
import { sendError } from '../http/responses.js'
import { isRejectedReturnUrl, sendReturnUrlRejected, singleValue } from '../http/request-input.js'
import { emailDomainOf } from '../providers/registry.js'
import type { AuthenticationProvider, ChallengeHint } from '../providers/provider.js'
import { sendLoginPage } from './login-page.js'
import { continueSignInPage } from '../views/continue-page.js'

/** Shown when no provider serves the address's domain; names no provider and no domain. */
export const EMAIL_NOT_SERVED_MESSAGE = 'No sign-in is set up for that e-mail address. Check the address, or choose how to sign in below.'

type Discovery = { provider: AuthenticationProvider, hint: ChallengeHint } | { reply: FastifyReply }

function rejectEmail (request: FastifyRequest, reply: FastifyReply): FastifyReply {
  request.log.info({ event: 'challenge.rejected', reason: 'email' }, 'challenge rejected')
  return sendError(request, reply, 400, { code: 'APP_ERR_EMAIL_INVALID', detail: messageOf('APP_ERR_EMAIL_INVALID') })
}

/**
 * The provider chosen by `email` (with the address as login hint), or the answer already sent. A
 * browser navigation (the login page's e-mail form) gets a page that continues at
 * `provider=<scheme>&login_hint=` instead of a redirect chain its form-action policy would block.
 */
function discover (app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, email: string | null): Discovery {
  if (typeof email !== 'string' || emailDomainOf(email) === undefined) return { reply: rejectEmail(request, reply) }
  const provider = app.authentication.providerForEmail(email)
  if (provider !== undefined && request.headers['sec-fetch-mode'] === 'navigate') {
    const query = new URLSearchParams({ provider: provider.scheme, login_hint: email.trim() })
    const returnUrl = singleValue(request.query, 'returnUrl')
    if (typeof returnUrl === 'string') query.set('returnUrl', returnUrl)
    const page = continueSignInPage({ url: `/External/Challenge?${query.toString()}`, applicationName: app.pages.applicationName })
    return { reply: reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(page) }
  }
  if (provider !== undefined) return { provider, hint: { loginHint: email.trim() } }
  request.log.info({ event: 'challenge.rejected', reason: 'email_domain_unknown' }, 'challenge rejected')
  const returnUrl = singleValue(request.query, 'returnUrl')
  return { reply: sendLoginPage(app, reply, { returnUrl: typeof returnUrl === 'string' && !isRejectedReturnUrl(returnUrl) ? returnUrl : undefined, failureMessage: EMAIL_NOT_SERVED_MESSAGE, email: email.trim() }) }
}

export default async function externalRoutes (app: FastifyInstance): Promise<void> {
  app.get('/External/Challenge', { config: { allowAnonymous: true, rateLimitBucket: 'challenge' } }, async (request, reply) => {
    const scheme = singleValue(request.query, 'provider')
    const email = singleValue(request.query, 'email')
    // A JwtBearer scheme signs no one in: as unknown here as any name that is no provider.
    let provider = typeof scheme === 'string' ? app.authentication.providers.get(scheme) : undefined
    if (provider?.credentialScheme !== undefined) provider = undefined
    let hint: ChallengeHint | undefined
    if (scheme === undefined && email !== undefined) {
      if (isRejectedReturnUrl(singleValue(request.query, 'returnUrl'))) {
        request.log.info({ event: 'challenge.rejected', reason: 'return_url' }, 'challenge rejected')
        return sendReturnUrlRejected(request, reply)
      }
      const found = discover(app, request, reply, email)
      if ('reply' in found) return found.reply
      ;({ provider, hint } = found)
    } else if (provider !== undefined) {
      // login_hint beside provider=: the hop after the e-mail form's page (an address, or nothing).
      const loginHint = singleValue(request.query, 'login_hint')
      if (loginHint !== undefined && (typeof loginHint !== 'string' || emailDomainOf(loginHint) === undefined)) return rejectEmail(request, reply)
      if (loginHint !== undefined) hint = { loginHint: loginHint.trim() }
    }
    if (provider === undefined) {
      request.log.info({ event: 'challenge.rejected', reason: 'unknown_provider' }, 'challenge rejected')
      return sendError(request, reply, 400, { code: 'APP_ERR_PROVIDER_UNKNOWN', detail: messageOf('APP_ERR_PROVIDER_UNKNOWN') })
    }
    const returnUrl = singleValue(request.query, 'returnUrl')
    if (isRejectedReturnUrl(returnUrl)) {
      request.log.info({ event: 'challenge.rejected', reason: 'return_url' }, 'challenge rejected')
      return sendReturnUrlRejected(request, reply)
    }
    if (!provider.status().available) {
      return sendError(request, reply, 503, { code: 'APP_ERR_PROVIDER_UNAVAILABLE', detail: messageOf('APP_ERR_PROVIDER_UNAVAILABLE') })
    }
    return await provider.challenge(request, reply, returnUrl ?? '/', hint)
  })
}
