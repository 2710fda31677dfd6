/**
 * One call to a downstream API with an access token: to a path under its BaseUrl only
 * (request-target.ts), with the token in `Authorization: Bearer`, never following a redirect (a
 * 3xx is handed back as it came, so the token goes nowhere else), the answer read through the
 * bounded reader (http/bounded-fetch.ts) up to MaxResponseBytes under the API's deadline. A 401
 * answer leads to one more attempt with a new token, never more. No Fastify types.
 */
import { fetchBounded, tooLargeOf } from '../http/bounded-fetch.js'
import { DownstreamApiError } from './downstream-error.js'
import { downstreamTarget } from './request-target.js'

/** What the app's code may set on a call; the body is sent again as is if the call is retried. @public @experimental */
export interface DownstreamRequestInit {
  /** Default GET. */
  readonly method?: string
  /** Request headers; an Authorization header given here is replaced by the token. */
  readonly headers?: Readonly<Record<string, string>>
  /** The request body; a stream is not accepted, since a retried call sends the body again. */
  readonly body?: string | Uint8Array | URLSearchParams
  /** Aborts the call (the API's own deadline applies as well). */
  readonly signal?: AbortSignal
}

/** One configured API, as a call needs it. */
export interface DownstreamTarget {
  /** `DownstreamApis:<Name>`'s name. */
  readonly name: string
  readonly baseUrl: URL
  readonly timeoutMs: number
  readonly maxResponseBytes: number
}

/** The log lines a call writes (pino's levels, as request.log has them). */
export interface DownstreamLog {
  warn: (fields: Record<string, unknown>, message: string) => void
  info: (fields: Record<string, unknown>, message: string) => void
}

/**
 * The token of a call: `rejected` is the one the API just answered 401 to (then a newer one is
 * wanted). Undefined: none can be had. Throws {@link DownstreamApiError} for a failure to report.
 */
export type TokenSource = (rejected?: string) => Promise<string | undefined>

/** How the call authenticates, for the log lines: as the signed-in user or as the app. */
export type CallerKind = 'user' | 'app'

async function send (api: DownstreamTarget, target: URL, token: string, init: DownstreamRequestInit, caller: CallerKind, log: DownstreamLog): Promise<Response> {
  const headers = new Headers(init.headers)
  headers.set('authorization', `Bearer ${token}`)
  try {
    return await fetchBounded(target, {
      method: init.method ?? 'GET',
      headers,
      ...(init.body === undefined ? {} : { body: init.body }),
      redirect: 'manual',
      ...(init.signal === undefined ? {} : { signal: init.signal })
    }, { kind: 'api', timeoutMs: api.timeoutMs, limitBytes: api.maxResponseBytes })
  } catch (error) {
    // The caller's own abort is the caller's to handle.
    if (init.signal?.aborted === true) throw error
    const tooLarge = tooLargeOf(error)
    const failure = tooLarge !== undefined ? 'too_large' : isTimeout(error) ? 'timeout' : 'unreachable'
    log.warn({
      event: 'downstream.call.failed',
      api: api.name,
      caller,
      failure,
      ...(tooLarge === undefined ? {} : { responseLimitBytes: tooLarge.limitBytes }),
      ...causeCodeOf(error)
    }, 'downstream API call failed')
    throw new DownstreamApiError(api.name, failure)
  }
}

function isTimeout (error: unknown): boolean {
  return error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')
}

/** The network error code (ECONNREFUSED, ENOTFOUND...) of a fetch failure, never its message. */
function causeCodeOf (error: unknown): { causeCode?: string } {
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code
  return typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? { causeCode: code } : {}
}

/**
 * Calls `path` of `api` with the token `tokenOf` gives; on a 401, once more with the newer token
 * `tokenOf(rejected)` gives (when there is none, the 401 is the answer). Throws
 * {@link DownstreamApiError}: `invalid_target` (nothing sent), `sign_in_required` (no token at
 * all), `token_unavailable` (from `tokenOf`), `unreachable`, `timeout`, `too_large`.
 */
export async function callDownstream (api: DownstreamTarget, path: string, init: DownstreamRequestInit, tokenOf: TokenSource, caller: CallerKind, log: DownstreamLog): Promise<Response> {
  const target = downstreamTarget(api.baseUrl, path)
  if (target === undefined) {
    log.warn({ event: 'downstream.call.failed', api: api.name, caller, failure: 'invalid_target' }, 'downstream API call refused: the path is not under the API\'s BaseUrl')
    throw new DownstreamApiError(api.name, 'invalid_target')
  }
  const token = await tokenOf()
  if (token === undefined) throw new DownstreamApiError(api.name, 'sign_in_required')
  const response = await send(api, target, token, init, caller, log)
  if (response.status !== 401) return response
  const fresh = await tokenOf(token)
  if (fresh === undefined || fresh === token) return response
  log.info({ event: 'downstream.call.retried', api: api.name, caller }, 'downstream API refused the token; retried once with a new one')
  return await send(api, target, fresh, init, caller, log)
}
