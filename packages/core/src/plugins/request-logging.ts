/**
 * One completion line per request: method, path without its query string, status, duration and
 * request id. Fastify's own request logging (which prints the full URL) is turned off in app.ts.
 */
import fp from 'fastify-plugin'
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { pathOf } from '../logger.js'

/** Writes the completion line of `request` to `log` (the request's logger, bound to its id). */
export function logRequestCompleted (log: FastifyBaseLogger, request: FastifyRequest, reply: FastifyReply): void {
  log.info({
    event: 'request.completed',
    method: request.method,
    path: pathOf(request.url),
    statusCode: reply.statusCode,
    durationMs: Math.round(reply.elapsedTime * 100) / 100
  }, 'request completed')
}

async function requestLogging (app: FastifyInstance): Promise<void> {
  // A callback hook, not async: no promise per request on the hot path.
  app.addHook('onResponse', (request, reply, done) => {
    logRequestCompleted(request.log, request, reply)
    done()
  })
}

export default fp(requestLogging, { name: 'request-logging' })
