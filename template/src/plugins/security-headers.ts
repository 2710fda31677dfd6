/**
 * Security headers: a strict Content-Security-Policy with no inline script or style and
 * `frame-ancestors 'none'`, nosniff, a no-referrer policy, and HSTS outside Development.
 *
 * The values are exactly what helmet 8 (@fastify/helmet) emits for the options this file used to
 * pass it (`useDefaults: false`, `crossOriginEmbedderPolicy: false`, the rest as listed), written
 * out once at startup: @fastify/helmet rebuilt the whole helmet middleware, CSP parsing included,
 * in two hooks on every request (docs/performance.md). Every header is set explicitly here, so a
 * library default cannot change under us.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'

export interface SecurityHeadersOptions {
  readonly environmentName: string
}

/** CSP directives in the order they are sent. */
function contentSecurityPolicy (development: boolean): string {
  const directives = [
    "default-src 'self'",
    "base-uri 'none'",
    "object-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    ...(development ? [] : ['upgrade-insecure-requests'])
  ]
  return directives.join(';')
}

/** Header name (as sent) -> value, for every response. */
export function securityHeaderValues (environmentName: string): ReadonlyArray<readonly [string, string]> {
  const development = environmentName === 'Development'
  return [
    ['Content-Security-Policy', contentSecurityPolicy(development)],
    ['Cross-Origin-Opener-Policy', 'same-origin'],
    ['Cross-Origin-Resource-Policy', 'same-origin'],
    ['Origin-Agent-Cluster', '?1'],
    ['Referrer-Policy', 'no-referrer'],
    ...(development ? [] : [['Strict-Transport-Security', 'max-age=31536000; includeSubDomains'] as const]),
    ['X-Content-Type-Options', 'nosniff'],
    ['X-DNS-Prefetch-Control', 'off'],
    ['X-Download-Options', 'noopen'],
    ['X-Frame-Options', 'DENY'],
    ['X-Permitted-Cross-Domain-Policies', 'none'],
    ['X-XSS-Protection', '0']
  ]
}

async function securityHeaders (app: FastifyInstance, options: SecurityHeadersOptions): Promise<void> {
  const headers = securityHeaderValues(options.environmentName)
  // On the raw response, as helmet did: a route may still override one with reply.header().
  app.addHook('onRequest', function setSecurityHeaders (_request, reply, done) {
    const raw = reply.raw
    for (const [name, value] of headers) raw.setHeader(name, value)
    raw.removeHeader('X-Powered-By')
    done()
  })
}

export default fp(securityHeaders, { name: 'security-headers' })
