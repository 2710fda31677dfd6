/**
 * One place renders unhandled and framework errors: HTML through the error page, JSON callers get
 * problem+json. Stack traces and exception messages appear only in Development; 5xx bodies are
 * generic everywhere else. Anti-forgery failures become 400. Bare 4xx/5xx responses (a status
 * without a body) get the same page or problem.
 */
import fp from 'fastify-plugin'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppError, createError } from '../errors.js'
import { APPLICATION_NAME } from '../application-name.js'
import { STATE_KIND_BOUNDS, StateStoreFullError, StateStoreUnavailableError } from '../state/state-store.js'
import { pagesFor } from './branding.js'
import { sendError, titleOf, wantsJson } from '../http/responses.js'

export interface ErrorHandlerOptions {
  /** Development only: the error page shows the error and its stack. */
  readonly development: boolean
  /** The configuration root key, for log fields naming a setting; default `ProjectTemplate`. */
  readonly rootKey?: string
}

const CSRF_CODES = new Set(['FST_CSRF_MISSING_SECRET', 'FST_CSRF_INVALID_TOKEN'])

/** Store failures fail closed: 503, a log event naming the cause, never a 500 or a stack trace. */
function stateStoreError (error: Error, request: FastifyRequest, rootKey: string): AppError | undefined {
  if (error instanceof StateStoreUnavailableError) {
    // Debug: in an outage every request would log a line; the outage itself is logged once per
    // connection and change of state (plugins/state.ts).
    request.log.debug({ event: 'state.unavailable', reason: error.reason }, 'state store unavailable; request refused')
    return createError('APP_ERR_STATE_UNAVAILABLE')
  }
  if (error instanceof StateStoreFullError) {
    request.log.warn({ event: 'state.full', kind: error.kind, bound: error.bound, setting: `${rootKey}:${error.setting}` }, 'state store full; request refused')
    return createError('APP_ERR_STATE_FULL', error.bound === 'entries' ? STATE_KIND_BOUNDS[error.kind].holds : 'records')
  }
  return undefined
}

export function renderError (development: boolean, error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply, rootKey: string = APPLICATION_NAME): FastifyReply {
  const stateError = stateStoreError(error, request, rootKey)
  if (stateError !== undefined) return sendError(request, reply.header('retry-after', '10'), 503, { code: stateError.code, detail: stateError.message })
  const code = (error as FastifyError).code
  if (typeof code === 'string' && CSRF_CODES.has(code)) {
    request.log.warn({ event: 'antiforgery.rejected' }, 'anti-forgery validation failed')
    return sendError(request, reply, 400, { code: 'APP_ERR_CSRF_INVALID' })
  }
  const declared = (error as FastifyError).statusCode
  const statusCode = typeof declared === 'number' && declared >= 400 && declared <= 599 ? declared : 500
  const detail = development ? `${error.name}: ${error.message}\n${error.stack ?? ''}` : undefined
  if (statusCode >= 500) {
    request.log.error({ err: error, event: 'request.failed' }, 'unhandled error')
    return sendError(request, reply, statusCode, { code: error instanceof AppError ? error.code : 'APP_ERR_INTERNAL', developmentDetail: detail })
  }
  request.log.info({ event: 'request.rejected', statusCode, errorCode: code }, 'request rejected')
  return sendError(request, reply, statusCode, {
    ...(error instanceof AppError ? { code: error.code, detail: error.message } : {}),
    developmentDetail: detail
  })
}

async function errorHandler (app: FastifyInstance, options: ErrorHandlerOptions): Promise<void> {
  const { development } = options
  const rootKey = options.rootKey ?? APPLICATION_NAME
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
