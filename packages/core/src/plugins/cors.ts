/**
 * Cross-origin calls to the bearer routes (`<Root>:Cors`, issue 40 item 13): thin glue over
 * cors/cross-origin.ts. Registered before the session and authentication plugins, so that its
 * onRequest hook answers an allowed preflight before any authentication runs; nothing is
 * registered while `Cors:AllowedOrigins` is empty (the default: no CORS headers at all).
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { ApplicationConfiguration } from '../providers/application-schema.js'
import { crossOriginAnswer, crossOriginPolicyOf } from '../http/cross-origin.js'

export interface CorsPluginOptions {
  readonly config: ApplicationConfiguration
}

/** A single header value, or undefined (absent or repeated). */
function single (value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined
}

async function cors (app: FastifyInstance, options: CorsPluginOptions): Promise<void> {
  const policy = crossOriginPolicyOf(options.config.Cors, options.config.Authentication.Bearer.PathPrefixes)
  if (policy === undefined) return
  app.addHook('onRequest', async (request, reply) => {
    const answer = crossOriginAnswer(policy, {
      method: request.method,
      path: request.url.split('?', 1)[0] ?? '',
      routeBearer: request.routeOptions.config?.bearer,
      origin: single(request.headers.origin),
      requestMethod: single(request.headers['access-control-request-method']),
      requestHeaders: single(request.headers['access-control-request-headers'])
    })
    if (answer.kind === 'none') {
      if (answer.vary) reply.header('vary', 'Origin')
      return
    }
    reply.headers(answer.headers)
    if (answer.kind === 'preflight') await reply.code(204).send()
  })
}

export default fp(cors, { name: 'cors' })
