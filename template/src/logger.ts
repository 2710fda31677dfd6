/**
 * pino options: JSON lines, redaction of every field that may carry a secret, and serializers
 * that never log a query string (OIDC `code`/`state`, SAML payloads) or a header value.
 */
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino'

export const CENSOR = '[redacted]'

/** Secret-bearing field names, censored at the top level of a log object and inside the containers below. */
export const SECRET_FIELDS: readonly string[] = [
  'cookie', 'cookies', 'authorization', 'password', 'secret', 'clientSecret', 'ClientSecret', 'client_secret',
  'authorizationCode', 'authorization_code', 'token', 'tokens', 'access_token', 'id_token', 'refresh_token', 'accessToken',
  'idToken', 'refreshToken', 'SAMLResponse', 'SAMLRequest', 'RelayState', 'nonce', 'code_verifier', 'codeVerifier', 'assertion', 'ticket'
]

/** Objects a log line may carry whose fields are checked too (`{ body: { SAMLResponse } }`). */
const CONTAINERS: readonly string[] = ['body', 'query', 'params', 'payload', 'data', 'options', 'config', 'settings', 'user']

/**
 * Compiled redaction paths. Explicit paths, no leading wildcard: pino runs a leading-wildcard
 * path's redactor over every top-level value of every line, which the benchmark measured at about
 * 190 µs per line (docs/performance.md). Request and reply objects never reach the log with their
 * headers (see the serializers), so the header paths are a second line of defence.
 */
export const REDACT_PATHS: readonly string[] = [
  'req.headers.cookie', 'req.headers.authorization', 'req.headers["proxy-authorization"]',
  'res.headers["set-cookie"]', 'headers.cookie', 'headers.authorization', 'headers["proxy-authorization"]', 'headers["set-cookie"]',
  ...SECRET_FIELDS,
  ...CONTAINERS.flatMap((container) => SECRET_FIELDS.map((field) => `${container}.${field}`))
]

function pathOf (url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}

export const serializers = {
  req (request: { method?: string, url?: string, id?: string } | null | undefined) {
    return request == null ? request : { method: request.method, path: pathOf(request.url ?? ''), id: request.id }
  },
  res (reply: { statusCode?: number } | null | undefined) {
    return reply == null ? reply : { statusCode: reply.statusCode }
  },
  err (error: (Error & { code?: unknown, statusCode?: unknown }) | null | undefined) {
    if (error == null || typeof error !== 'object') return error
    return { type: error.name, code: error.code, statusCode: error.statusCode, message: error.message, stack: error.stack }
  }
}

export function loggerOptions (level: string): LoggerOptions {
  return {
    level,
    redact: { paths: [...REDACT_PATHS], censor: CENSOR },
    serializers,
    base: { pid: process.pid }
  }
}

/** How long a log line may wait in the stdout buffer at most (milliseconds). */
export const LOG_FLUSH_INTERVAL_MS = 250

/**
 * Without a destination: stdout, written asynchronously in batches of at least 4 KB and at least
 * every {@link LOG_FLUSH_INTERVAL_MS}, instead of one write(2) per line (the biggest logging cost
 * in the profile, docs/performance.md). pino flushes what is pending when the process exits; only
 * a killed process (SIGKILL, OOM) can lose the last lines.
 */
export function createLogger (level: string, destination?: DestinationStream): Logger {
  if (destination !== undefined) return pino(loggerOptions(level), destination)
  const stdout = pino.destination({ dest: 1, sync: false, minLength: 4096 })
  setInterval(() => { stdout.flush() }, LOG_FLUSH_INTERVAL_MS).unref()
  return pino(loggerOptions(level), stdout)
}

export { pathOf }
