/**
 * One place renders unhandled and framework errors: HTML through the error page, JSON callers get
 * problem+json. Stack traces and exception messages appear only in Development; 5xx bodies are
 * generic everywhere else. An error of the core is answered by its own catalogue code (anti-forgery
 * failures become 400, state store failures 503), any other error by its status. Bare 4xx/5xx
 * responses (a status without a body) get the same page or problem.
 */
import fp from 'fastify-plugin'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { CoreError, ERRORS, messageOf, type ErrorCode } from '../errors.js'
import { STATE_KIND_BOUNDS, type StateStoreFullError, type StateStoreUnavailableError } from '../state/state-store.js'
import { pagesFor } from './branding.js'
import { sendError, titleOf, wantsJson } from '../http/responses.js'

export interface ErrorHandlerOptions {
  /** Development only: the error page shows the error and its stack. */
  readonly development: boolean
  /** The configuration root key, for log fields naming a setting. */
  readonly rootKey: string
}

/** An answer of its own for a catalogue code: the headers and log line its status alone would not give. */
type CodedAnswer = (error: CoreError, request: FastifyRequest, reply: FastifyReply, rootKey: string) => FastifyReply

/**
 * The errors answered by their own code rather than by their status alone. Store failures fail
 * closed: 503, a log event naming the cause, never a 500 or a stack trace.
 */
const ANSWERS: Partial<Record<ErrorCode, CodedAnswer>> = {
  APP_ERR_STATE_UNAVAILABLE: (error, request, reply) => {
    // Debug: in an outage every request would log a line; the outage itself is logged once per
    // connection and change of state (plugins/state.ts).
    request.log.debug({ event: 'state.unavailable', reason: (error as StateStoreUnavailableError).reason }, 'state store unavailable; request refused')
    return sendError(request, reply.header('retry-after', '10'), 503, { code: 'APP_ERR_STATE_UNAVAILABLE', detail: messageOf('APP_ERR_STATE_UNAVAILABLE') })
  },
  APP_ERR_STATE_FULL: (error, request, reply, rootKey) => {
    const { kind, bound, setting } = error as StateStoreFullError
    request.log.warn({ event: 'state.full', kind, bound, setting: `${rootKey}:${setting}` }, 'state store full; request refused')
    return sendError(request, reply.header('retry-after', '10'), 503, { code: 'APP_ERR_STATE_FULL', detail: messageOf('APP_ERR_STATE_FULL', bound === 'entries' ? STATE_KIND_BOUNDS[kind].holds : 'records') })
  },
  APP_ERR_CSRF_INVALID: (_error, request, reply) => {
    request.log.warn({ event: 'antiforgery.rejected' }, 'anti-forgery validation failed')
    return sendError(request, reply, 400, { code: 'APP_ERR_CSRF_INVALID' })
  }
}

/** The error's own catalogue code; only the core's errors are trusted to carry one (their messages are safe to show). */
function catalogueCodeOf (error: Error): ErrorCode | undefined {
  const code = (error as { code?: unknown }).code
  return error instanceof CoreError && typeof code === 'string' && Object.hasOwn(ERRORS, code) ? code as ErrorCode : undefined
}

export function renderError (development: boolean, error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply, rootKey: string): FastifyReply {
  const own = catalogueCodeOf(error)
  const answer = own === undefined ? undefined : ANSWERS[own]
  if (answer !== undefined) return answer(error as CoreError, request, reply, rootKey)
  const declared = own === undefined ? (error as FastifyError).statusCode : ERRORS[own].status
  const statusCode = typeof declared === 'number' && declared >= 400 && declared <= 599 ? declared : 500
  const detail = development ? `${error.name}: ${error.message}\n${error.stack ?? ''}` : undefined
  if (statusCode >= 500) {
    request.log.error({ err: error, event: 'request.failed' }, 'unhandled error')
    return sendError(request, reply, statusCode, { code: own ?? 'APP_ERR_INTERNAL', developmentDetail: detail })
  }
  request.log.info({ event: 'request.rejected', statusCode, errorCode: (error as FastifyError).code }, 'request rejected')
  return sendError(request, reply, statusCode, {
    ...(own === undefined ? {} : { code: own, detail: error.message }),
    developmentDetail: detail
  })
}

async function errorHandler (app: FastifyInstance, options: ErrorHandlerOptions): Promise<void> {
  const { development, rootKey } = options
  app.setErrorHandler((error: FastifyError, request, reply) => renderError(development, error, request, reply, rootKey))
  // A bare 4xx/5xx (a status with no body) renders like every other error: the page or a problem.
  // Callback style: runs on every response, so no promise per request.
  app.addHook('onSend', function renderBareError (request, reply, payload, done) {
    if (reply.statusCode < 400 || request.method === 'HEAD' || (payload !== undefined && payload !== null && payload !== '')) {
      done(null, payload)
      return
    }
    const statusCode = reply.statusCode
    if (wantsJson(request)) {
      reply.type('application/problem+json; charset=utf-8')
      done(null, JSON.stringify({ type: 'about:blank', title: titleOf(statusCode), status: statusCode, requestId: request.id }))
      return
    }
    reply.type('text/html; charset=utf-8')
    done(null, pagesFor(request).errorPage({ statusCode, title: titleOf(statusCode), requestId: request.id }))
  })
}

export default fp(errorHandler, { name: 'error-handler' })
