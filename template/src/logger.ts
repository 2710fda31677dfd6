/**
 * pino options: JSON lines, redaction of every field that may carry a secret, and serializers
 * that never log a query string (OIDC `code`/`state`, SAML payloads) or a header value.
 */
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino'

export const CENSOR = '[redacted]'

/** Field paths censored wherever they appear in a log object (one level of nesting deep). */
export const REDACT_PATHS: readonly string[] = [
  'req.headers.cookie', 'req.headers.authorization', 'req.headers["proxy-authorization"]',
  'res.headers["set-cookie"]', 'headers.cookie', 'headers.authorization', 'headers["set-cookie"]',
  ...['cookie', 'cookies', 'authorization', 'password', 'secret', 'clientSecret', 'ClientSecret', 'client_secret',
    'authorizationCode', 'authorization_code', 'token', 'tokens', 'access_token', 'id_token', 'refresh_token', 'accessToken', 'idToken', 'refreshToken',
    'SAMLResponse', 'SAMLRequest', 'RelayState', 'nonce', 'code_verifier', 'codeVerifier', 'assertion', 'ticket']
    .flatMap((field) => [field, `*.${field}`])
]

function pathOf (url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}

export const serializers = {
  req (request: { method?: string, url?: string, id?: string }) {
    return { method: request.method, path: pathOf(request.url ?? ''), id: request.id }
  },
  res (reply: { statusCode?: number }) {
    return { statusCode: reply.statusCode }
  },
  err (error: Error & { code?: unknown, statusCode?: unknown }) {
    return { type: error.name, code: error.code, statusCode: error.statusCode, message: error.message, stack: error.stack }
  }
}

export function loggerOptions (level: string): LoggerOptions {
  return {
    level,
    redact: { paths: [...REDACT_PATHS], censor: CENSOR },
    serializers,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime
  }
}

export function createLogger (level: string, destination?: DestinationStream): Logger {
  return destination === undefined ? pino(loggerOptions(level)) : pino(loggerOptions(level), destination)
}

export { pathOf }
