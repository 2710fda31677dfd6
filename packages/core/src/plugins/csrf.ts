/**
 * Anti-forgery for state-changing forms (@fastify/csrf-protection, double-submit with a secret
 * cookie). Tokens are HMAC-bound to the session id, so a token from another session, or from
 * before the session changed, is refused. Tokens are read only from the form field
 * `__RequestVerificationToken` or the `RequestVerificationToken` header, never the query string.
 * A failure answers 400 (rendered by the error handler), the session untouched.
 */
import { hkdfSync } from 'node:crypto'
import fp from 'fastify-plugin'
import csrfProtection from '@fastify/csrf-protection'
import { COOKIE_NAMES, cookieName, PURPOSES } from '../application-name.js'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { KeyRing } from '../data-protection/key-ring.js'

export const CSRF_FORM_FIELD = '__RequestVerificationToken'
export const CSRF_HEADER = 'requestverificationtoken'

export interface CsrfPluginOptions {
  readonly keyRing: KeyRing
  /** The session cookie's security attributes (secure follows the Development override). */
  readonly secure: boolean
}

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
 * The anti-forgery HMAC key, derived from the ring's sealing key: like every key from the ring it
 * is bound to the application discriminator (auth/key-ring.ts), so tokens from another
 * environment or application never validate here.
 */
export function antiforgeryKeyOf (keyRing: KeyRing): Buffer {
  return Buffer.from(hkdfSync('sha256', keyRing.sealing.key, Buffer.alloc(0), PURPOSES.antiforgery, 32))
}

async function csrfPlugin (app: FastifyInstance, options: CsrfPluginOptions): Promise<void> {
  const hmacKey = antiforgeryKeyOf(options.keyRing)
  await app.register(csrfProtection, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: cookieName(COOKIE_NAMES.antiforgery, options.secure),
    cookieOpts: { path: '/', sameSite: 'strict', httpOnly: true, secure: options.secure, signed: false },
    getToken: tokenOf,
    getUserInfo: (request: FastifyRequest) => request.user?.ticket.sessionId ?? '',
    csrfOpts: { hmacKey }
  })
}

export default fp(csrfPlugin, { name: 'csrf', dependencies: ['@fastify/cookie', 'session'] })
