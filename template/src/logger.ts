/**
 * pino options: JSON lines, redaction of every field that may carry a secret, and serializers
 * that never log a query string (OIDC `code`/`state`, SAML payloads) or a header value.
 */
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino'

export const CENSOR = '[redacted]'

/** Field paths censored wherever they appear in a log object (one level of nesting deep). */
export const REDACT_PATHS: readonly string[] = [
  'req.headers.cookie', 'req.headers.authorization', 'req.headers["proxy-authorization"]',
  'res.headers["set-cookie"]', 'headers.cookie', 'headers.authorization', 'headers["proxy-authorization"]', 'headers["set-cookie"]',
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

/** Paths that censor a top-level field (`password`), as opposed to a field inside an object. */
const TOP_LEVEL_FIELDS: ReadonlySet<string> = new Set(REDACT_PATHS.filter((path) => !/[.[*]/.test(path)))
const PRIMITIVE_TYPES: ReadonlySet<string> = new Set(['string', 'number', 'boolean'])
type Stringifier = (value: unknown, safe?: unknown) => string | undefined

/**
 * Same output as pino's redaction, without its per-value cost. pino runs the redactor of every
 * nested path (`*.password`, `req.headers.cookie`, ...) on every top-level value of every line,
 * strings and numbers included, re-parsing all the paths each time: about 190 µs per line and
 * 50 µs per child logger (docs/performance.md). A nested path cannot match inside a string, number
 * or boolean, and for those the redactor returns exactly `JSON.stringify(value)`, so that is
 * returned directly. Objects still go through the redactor, and the top-level censors are left
 * untouched, so `{ password: 'x' }` is still censored. Children inherit the patched table.
 */
function skipNestedRedactionOfPrimitives (logger: Logger): void {
  const stringifiers = (logger as unknown as Record<symbol, Record<string | symbol, Stringifier> | undefined>)[pino.symbols.stringifiersSym]
  if (stringifiers === undefined) return
  const keys: Array<string | symbol> = [...Object.keys(stringifiers).filter((key) => !TOP_LEVEL_FIELDS.has(key)), pino.symbols.wildcardFirstSym]
  for (const key of keys) {
    const redactor = stringifiers[key]
    if (typeof redactor !== 'function') continue
    stringifiers[key] = (value, safe) => PRIMITIVE_TYPES.has(typeof value) ? JSON.stringify(value) : redactor(value, safe)
  }
}

/**
 * Without a destination: stdout, written asynchronously. Lines that arrive while a write is in
 * flight go out together in the next one instead of one blocking write(2) per line (the biggest
 * logging cost left in the profile, docs/performance.md). Nothing waits for a buffer to fill, and
 * pino flushes what is pending when the process exits; only a killed process (SIGKILL, OOM) can
 * lose the last lines.
 */
export function createLogger (level: string, destination?: DestinationStream): Logger {
  const logger = pino(loggerOptions(level), destination ?? pino.destination({ dest: 1, sync: false }))
  skipNestedRedactionOfPrimitives(logger)
  return logger
}

export { pathOf }
