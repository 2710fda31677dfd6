/**
 * Security headers (@fastify/helmet): a strict Content-Security-Policy with no inline script or
 * style and `frame-ancestors 'none'`, nosniff, a no-referrer policy, and HSTS outside Development.
 */
import fp from 'fastify-plugin'
import helmet from '@fastify/helmet'
import type { FastifyInstance } from 'fastify'

export interface SecurityHeadersOptions {
  readonly environmentName: string
}

async function securityHeaders (app: FastifyInstance, options: SecurityHeadersOptions): Promise<void> {
  const development = options.environmentName === 'Development'
  await app.register(helmet, {
    global: true,
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
  })
}

export default fp(securityHeaders, { name: 'security-headers' })
