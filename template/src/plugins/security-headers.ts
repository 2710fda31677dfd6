/**
 * Security headers from helmet: a strict Content-Security-Policy with no inline script or style
 * and `frame-ancestors 'none'`, nosniff, a no-referrer policy, and HSTS outside Development.
 *
 * helmet's middleware is built once, here, and run on every request. @fastify/helmet is not used
 * because it rebuilds the whole helmet middleware (CSP parsing included) in two hooks on every
 * request, which the benchmark measured at about 35 µs per request (docs/performance.md at the
 * repository root). Every option is set explicitly so a library default cannot change under us.
 */
import fp from 'fastify-plugin'
import helmet from 'helmet'
import type { FastifyInstance } from 'fastify'

export interface SecurityHeadersOptions {
  readonly environmentName: string
}

export function helmetOptions (environmentName: string): Parameters<typeof helmet>[0] {
  const development = environmentName === 'Development'
  return {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        fontSrc: ["'self'"],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        ...(development ? {} : { upgradeInsecureRequests: [] })
      }
    },
    strictTransportSecurity: development ? false : { maxAge: 31_536_000, includeSubDomains: true },
    referrerPolicy: { policy: 'no-referrer' },
    xContentTypeOptions: true,
    xFrameOptions: { action: 'deny' },
    crossOriginOpenerPolicy: { policy: 'same-origin' },
    crossOriginResourcePolicy: { policy: 'same-origin' },
    crossOriginEmbedderPolicy: false
  }
}

async function securityHeaders (app: FastifyInstance, options: SecurityHeadersOptions): Promise<void> {
  const middleware = helmet(helmetOptions(options.environmentName))
  app.addHook('onRequest', function setSecurityHeaders (request, reply, done) {
    middleware(request.raw, reply.raw, (error?: unknown) => { done(error instanceof Error ? error : undefined) })
  })
}

export default fp(securityHeaders, { name: 'security-headers' })
