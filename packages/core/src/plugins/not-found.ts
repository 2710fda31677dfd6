/**
 * Requests no route serves (issue 40, items 14 and 16), in this order:
 *   a path under `/.well-known/`      404 problem+json, whoever asks: well-known URIs are read by
 *                                     programs (RFC 8615), and an OAuth or MCP client probing
 *                                     `/.well-known/oauth-protected-resource/<path>` (RFC 9728
 *                                     section 3.1) falls back on a 404, never on the sign-in page
 *   a path under the bearer prefixes  (while bearer schemes exist) the bearer hook runs first, as
 *                                     on an API route: a refused token is the 401 with its
 *                                     challenge; no token and no session under the fallback
 *                                     policy, the Bearer challenge (RFC 9110 section 11.6.1:
 *                                     every 401 carries WWW-Authenticate); an authenticated
 *                                     caller, 405 or 404 as below
 *   anything else                     the fallback policy challenges an anonymous caller (who
 *                                     cannot tell missing routes from protected ones); otherwise
 *                                     405 with `Allow` when the path is served for another
 *                                     method (RFC 9110 section 15.5.6), else 404
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ApplicationConfiguration } from '../providers/application-schema.js'
import { sendError, sendProblem } from '../http/responses.js'

/** A callback-style request hook (the bearer hook lent for API paths). */
export type Hook = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void

/**
 * What the bearer plugin lends this handler for paths under `Authentication:Bearer:PathPrefixes`
 * (all members set, or none: no bearer scheme exists or can come).
 */
export interface UnmatchedApiPaths {
  /** Whether `path` lies under the bearer path prefixes. */
  covers?: (path: string) => boolean
  /** The bearer hook of a protected API route, with the API's challenge. */
  authenticate?: Hook
  /** The 401 without a token, as on an API route. */
  challenge?: (request: FastifyRequest, reply: FastifyReply) => FastifyReply
}

export interface NotFoundOptions {
  readonly config: ApplicationConfiguration
  /** Filled by the bearer plugin when bearer schemes exist. */
  readonly unmatched: UnmatchedApiPaths
}

/** The prefix of every well-known URI (RFC 8615). */
const WELL_KNOWN = '/.well-known/'
/** The methods an `Allow` header may list. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const

function pathOf (url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}

async function notFoundPlugin (app: FastifyInstance, options: NotFoundOptions): Promise<void> {
  const fallbackRequiresUser = options.config.Authorization.RequireAuthenticatedUserByDefault
  const { unmatched } = options
  const isApiPath = (path: string): boolean => unmatched.covers?.(path) === true && !path.startsWith(WELL_KNOWN)
  /** The methods the app serves at `path` (none: the path is unknown). */
  const allowedMethodsOf = (path: string): string[] => METHODS.filter((method) => app.findRoute({ method, url: path }) !== null)

  const authenticateApiCaller: Hook = function authenticateApiCaller (request, reply, done) {
    const authenticate = unmatched.authenticate
    if (authenticate === undefined || !isApiPath(pathOf(request.url))) {
      done()
      return
    }
    authenticate(request, reply, done)
  }

  app.setNotFoundHandler({ preHandler: authenticateApiCaller }, async function notFound (request, reply) {
    const path = pathOf(request.url)
    if (path.startsWith(WELL_KNOWN)) return sendProblem(request, reply, 404, { code: 'APP_ERR_NOT_FOUND' })
    if (fallbackRequiresUser && await app.session.authenticate(request, reply) === undefined) {
      const challenge = unmatched.challenge
      return challenge !== undefined && isApiPath(path) ? challenge(request, reply) : await app.authentication.challenge(request, reply)
    }
    const allowed = allowedMethodsOf(path)
    if (allowed.length > 0) return sendError(request, reply.header('allow', allowed.join(', ')), 405, { code: 'APP_ERR_METHOD_NOT_ALLOWED' })
    return sendError(request, reply, 404, { code: 'APP_ERR_NOT_FOUND' })
  })
}

export default fp(notFoundPlugin, { name: 'not-found', dependencies: ['session', 'authentication'] })
