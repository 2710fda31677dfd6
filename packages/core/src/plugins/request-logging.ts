/**
 * One completion line per request: method, path without its query string, status, duration and
 * request id. Fastify's own request logging (which prints the full URL) is turned off in app.ts.
 */
import fp from 'fastify-plugin'
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import { COMPLETION_EVENT, COMPLETION_MESSAGE, completionLineWriter, type CompletionLineWriter } from '../completion-line.js'
import { pathOf } from '../logger.js'

/**
 * Writes the completion line of `request` to `log` (the request's logger, bound to its id);
 * through `write` (completion-line.ts, the same line without pino's object walk) when given and
 * it accepts this logger.
 */
export function logRequestCompleted (log: FastifyBaseLogger, request: FastifyRequest, reply: FastifyReply, write?: CompletionLineWriter): void {
  const fields = {
    method: request.method,
    path: pathOf(request.url),
    statusCode: reply.statusCode,
    durationMs: Math.round(reply.elapsedTime * 100) / 100
  }
  if (write !== undefined && write(log, fields)) return
  log.info({ event: COMPLETION_EVENT, ...fields }, COMPLETION_MESSAGE)
}

async function requestLogging (app: FastifyInstance): Promise<void> {
  const write = completionLineWriter(app.log as Logger)
  // A callback hook, not async: no promise per request on the hot path.
  app.addHook('onResponse', (request, reply, done) => {
    logRequestCompleted(request.log, request, reply, write)
    done()
  })
}

export default fp(requestLogging, { name: 'request-logging' })
