/**
 * /External/Challenge: validates the provider scheme and the return URL, then starts that
 * provider's flow. Unknown or missing provider, the Cookies scheme, or a non-local return URL:
 * 400 safe page, no redirect, no challenge.
 */
import type { FastifyInstance } from 'fastify'
import { messageOf } from '../errors.js'
import { sendError } from '../http/responses.js'
import { isRejectedReturnUrl, sendReturnUrlRejected, singleValue } from '../http/request-input.js'

export default async function externalRoutes (app: FastifyInstance): Promise<void> {
  app.get('/External/Challenge', { config: { allowAnonymous: true, rateLimitBucket: 'challenge' } }, async (request, reply) => {
    const scheme = singleValue(request.query, 'provider')
    const provider = typeof scheme === 'string' ? app.authentication.providers.get(scheme) : undefined
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
    return await provider.challenge(request, reply, returnUrl ?? '/')
  })
}
