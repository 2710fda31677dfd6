/**
 * pino options: JSON lines, redaction of every field that may carry a secret, and serializers
 * that never log a query string (OIDC `code`/`state`, SAML payloads) or a header value.
 */
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino'
import { isDevelopment } from './config/environment.js'

/** @public */
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
  'req.headers.cookie', 'req.headers.authorization', 'req.headers["proxy-authorization"]', 'req.headers["x-api-key"]',
  'res.headers["set-cookie"]', 'headers.cookie', 'headers.authorization', 'headers["proxy-authorization"]', 'headers["x-api-key"]', 'headers["set-cookie"]',
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

/** How long a log line may wait in the buffer at most (milliseconds). */
export const LOG_FLUSH_INTERVAL_MS = 250
/** Characters gathered before a batch is handed to the stdout stream. */
export const LOG_BATCH_CHARACTERS = 8192

/** True for a JSON line from these options at level error (50) or fatal (60). */
function isErrorLine (line: string): boolean {
  return line.startsWith('{"level":50') || line.startsWith('{"level":60')
}

/** pino's stdout stream (sonic-boom). */
type StdoutStream = ReturnType<typeof pino.destination>

/**
 * Gathers lines and hands them to pino's own stdout stream (sonic-boom) in batches. sonic-boom
 * measures the byte length of its whole pending buffer on every write, which cost about 4 µs per
 * line even with its `minLength` (docs/performance.md); one write per batch pays that once.
 * sonic-boom still does the writing, synchronously (pino's default; an asynchronous write costs
 * more CPU than the whole batch's synchronous write(2)), retrying on EAGAIN.
 */
export class BatchedDestination implements DestinationStream {
  #pending = ''
  readonly #target: StdoutStream
  readonly #batchCharacters: number

  constructor (target: StdoutStream, batchCharacters = LOG_BATCH_CHARACTERS) {
    this.#target = target
    this.#batchCharacters = batchCharacters
  }

  write (line: string): void {
    this.#pending += line
    // An error or fatal line goes out at once, after everything before it: the line that explains
    // a crash is never left in a buffer, and the order of lines holds. pino writes the level first.
    if (this.#pending.length >= this.#batchCharacters || isErrorLine(line)) this.flush()
  }

  /** Hands the pending lines to the stream. */
  flush (): void {
    if (this.#pending === '') return
    const batch = this.#pending
    this.#pending = ''
    this.#target.write(batch)
  }

  /**
   * Hands everything pending to the stream and has it write out what it holds (exit). With the
   * synchronous stream {@link createLogger} uses, everything is written before this returns; an
   * asynchronous sonic-boom would not wait for a write already in flight.
   */
  flushSync (): void {
    this.flush()
    this.#target.flushSync()
  }
}

/**
 * Without a destination: stdout through {@link BatchedDestination}, flushed at least every
 * {@link LOG_FLUSH_INTERVAL_MS}, at once for an error or fatal line, and synchronously when the
 * process exits, instead of one write(2) per line (the biggest logging cost in the profile,
 * docs/performance.md). Only a killed process (SIGKILL, OOM) can lose the last lines. A process
 * makes one such logger (server.ts): two buffers over one stdout would reorder lines.
 *
 * @public
 */
export function createLogger (level: string, destination?: DestinationStream): Logger {
  if (destination !== undefined) return pino(loggerOptions(level), destination)
  const batched = new BatchedDestination(pino.destination({ dest: 1, sync: true }))
  setInterval(() => { batched.flush() }, LOG_FLUSH_INTERVAL_MS).unref()
  process.once('exit', () => { batched.flushSync() })
  return pino(loggerOptions(level), batched)
}

/**
 * The process logger of the server: in Development with a terminal on stdout, readable lines
 * through pino-pretty (a devDependency, loaded only then; synchronous, so lines keep their order);
 * otherwise JSON lines ({@link createLogger}). Without pino-pretty installed (a production-only
 * install run in Development) it falls back to JSON. Redaction and serializers are the same.
 */
export async function createProcessLogger (level: string, environmentName: string, interactive: boolean): Promise<Logger> {
  if (!isDevelopment(environmentName) || !interactive) return createLogger(level)
  let pretty: typeof import('pino-pretty')
  try {
    pretty = (await import('pino-pretty')).default
  } catch {
    return createLogger(level)
  }
  return pino(loggerOptions(level), pretty({
    sync: true,
    colorize: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
    singleLine: false
  }))
}

export { pathOf }
