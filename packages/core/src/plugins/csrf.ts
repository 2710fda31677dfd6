/**
 * Anti-forgery for state-changing forms: double submit with a secret cookie, and a token that is
 * an HMAC over the session id, a salt and that secret, so a token from another session, or from
 * before the session or the secret cookie changed, is refused. Like every other sealed value
 * (data-protection/authenticated-encryption.ts) the token names the ring key it was made with: issued with
 * the first key, accepted under any key of the ring, so a rotation (docs/configuration.md, step 3,
 * while instances disagree on the first key) never refuses a form. Tokens are read only from the
 * form field `__RequestVerificationToken` or the `RequestVerificationToken` header, never the query
 * string. A failure answers 400 (rendered by the error handler), the session untouched. A request
 * a credential sent with it authenticated (a bearer token: its principal has access facts) needs
 * none: that credential is not an ambient one a browser would attach to a forged request.
 */
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { COOKIE_NAMES, cookieName, type CookieNames } from '../application-name.js'
import { purposesOf, type KeyRing, type SessionKey } from '../data-protection/key-ring.js'
import { AppError } from '../errors.js'

/** @public */
export const CSRF_FORM_FIELD = '__RequestVerificationToken'
/** @public */
export const CSRF_HEADER = 'requestverificationtoken'

declare module 'fastify' {
  interface FastifyInstance {
    /** preHandler of a state-changing route: refuses a request without a valid anti-forgery token. */
    csrfProtection: (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void
  }
  interface FastifyReply {
    /** A token for a form of the session `userInfo` (its session id); sets the secret cookie when absent. */
    generateCsrf: (options: { userInfo: string }) => string
  }
}

export interface CsrfPluginOptions {
  readonly keyRing: KeyRing
  /** The session cookie's security attributes (secure follows the Development override). */
  readonly secure: boolean
  /** The application's cookie names (application-name.ts); default `ProjectTemplate`'s. */
  readonly cookieNames?: CookieNames
}

/** A refused anti-forgery token, rendered as 400 APP_ERR_CSRF_INVALID by the error handler (plugins/error-handler.ts). */
class AntiforgeryError extends AppError {
  constructor (missing: 'secret' | 'token') {
    super('APP_ERR_CSRF_INVALID', missing === 'secret' ? 'Missing anti-forgery secret' : 'Invalid anti-forgery token')
    this.name = 'AntiforgeryError'
  }
}

const SECRET_BYTES = 18
const SALT_BYTES = 9
const KEY_ID_LENGTH = 8
/** Key id, salt and MAC, base64url: anything longer is refused before any work. */
const MAX_TOKEN_LENGTH = 128

function tokenOf (request: FastifyRequest): string | undefined {
  const body = request.body
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const value = (body as Record<string, unknown>)[CSRF_FORM_FIELD]
    if (typeof value === 'string') return value
  }
  const header = request.headers[CSRF_HEADER]
  return typeof header === 'string' ? header : undefined
}

/**
 * The anti-forgery HMAC key of one ring key: like every key from the ring it is bound to the
 * application discriminator (data-protection/key-ring.ts), so tokens from another environment or
 * application never validate here. Default: the sealing (first) key.
 */
export function antiforgeryKeyOf (keyRing: KeyRing, key: SessionKey = keyRing.sealing): Buffer {
  return Buffer.from(hkdfSync('sha256', key.key, Buffer.alloc(0), purposesOf(keyRing).antiforgery, 32))
}

function mac (hmacKey: Buffer, sessionId: string, salt: string, secret: string): Buffer {
  return createHmac('sha256', hmacKey).update(`${sessionId}\u0000${salt}\u0000${secret}`, 'utf8').digest()
}

/** `<key id>.<salt>.<MAC>`: made with the ring's first key. */
export function createAntiforgeryToken (keys: ReadonlyMap<string, Buffer>, keyId: string, sessionId: string, secret: string): string {
  const hmacKey = keys.get(keyId)
  if (hmacKey === undefined) throw new RangeError('The sealing key has no anti-forgery key.')
  const salt = randomBytes(SALT_BYTES).toString('base64url')
  return `${keyId}.${salt}.${mac(hmacKey, sessionId, salt, secret).toString('base64url')}`
}

/** True when `token` was made by a key of the ring for this session id and secret. */
export function verifyAntiforgeryToken (keys: ReadonlyMap<string, Buffer>, token: string, sessionId: string, secret: string): boolean {
  if (token.length > MAX_TOKEN_LENGTH || sessionId === '') return false
  const [keyId = '', salt = '', given = '', ...rest] = token.split('.')
  if (rest.length > 0 || keyId.length !== KEY_ID_LENGTH || salt === '') return false
  const hmacKey = keys.get(keyId)
  if (hmacKey === undefined) return false
  const expected = mac(hmacKey, sessionId, salt, secret)
  const actual = Buffer.from(given, 'base64url')
  return actual.length === expected.length && actual.toString('base64url') === given && timingSafeEqual(actual, expected)
}

async function csrfPlugin (app: FastifyInstance, options: CsrfPluginOptions): Promise<void> {
  const { keyRing, secure } = options
  // Derived once at startup, one per ring key, by key id.
  const keys = new Map([...keyRing.opening.values()].map((key) => [key.id, antiforgeryKeyOf(keyRing, key)]))
  const cookieKey = cookieName((options.cookieNames ?? COOKIE_NAMES).antiforgery, secure)
  const cookieOptions = { path: '/', sameSite: 'strict', httpOnly: true, secure } as const

  app.decorateReply('generateCsrf', function generateCsrf (this: FastifyReply, { userInfo }: { userInfo: string }): string {
    let secret = this.request.cookies[cookieKey]
    if (secret === undefined || secret === '') {
      secret = randomBytes(SECRET_BYTES).toString('base64url')
      this.setCookie(cookieKey, secret, cookieOptions)
    }
    return createAntiforgeryToken(keys, keyRing.sealing.id, userInfo, secret)
  })

  app.decorate('csrfProtection', function csrfProtection (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
    // A request credential is not sent by a browser on its own (not ambient): nothing to forge.
    if (request.user?.access !== undefined) {
      done()
      return
    }
    const secret = request.cookies[cookieKey]
    if (secret === undefined || secret === '') {
      done(new AntiforgeryError('secret'))
      return
    }
    const token = tokenOf(request)
    const sessionId = request.user?.ticket.sessionId ?? ''
    done(token !== undefined && verifyAntiforgeryToken(keys, token, sessionId, secret) ? undefined : new AntiforgeryError('token'))
  })
}

export default fp(csrfPlugin, { name: 'csrf', dependencies: ['@fastify/cookie', 'session'] })
