/**
 * Security headers from helmet: a strict Content-Security-Policy with no inline script or style
 * and `frame-ancestors 'none'`, nosniff, a no-referrer policy, and HSTS outside Development.
 *
 * helmet decides the headers; they are computed once, at startup, and added to every reply.
 * @fastify/helmet is not used because it rebuilds the whole helmet middleware (CSP parsing
 * included) in two hooks on every request, which the benchmark measured at about 35 µs per
 * request, and running helmet's middleware per request still cost about 10 µs in Node's
 * per-header validation and bookkeeping (docs/performance.md at the repository root). Every
 * option is set explicitly so a library default cannot change under us.
 */
import fp from 'fastify-plugin'
import helmet from 'helmet'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyInstance } from 'fastify'

export interface SecurityHeadersOptions {
  /** Development: no HSTS and no upgrade-insecure-requests, so http://localhost works. */
  readonly development: boolean
}

export function helmetOptions (development: boolean): Parameters<typeof helmet>[0] {
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

/**
 * The headers helmet sets with these options, computed once by running helmet's middleware against
 * a recording response. Every helmet middleware used here is static (nothing depends on the
 * request), so the result is exactly what helmet would set on each response.
 */
export function securityHeaderValues (development: boolean): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {}
  const recorder = {
    setHeader (name: string, value: string | number | readonly string[]) {
      if (Array.isArray(value)) throw new Error(`helmet set ${name} to several values`)
      headers[name.toLowerCase()] = String(value)
    },
    removeHeader (name: string) { delete headers[name.toLowerCase()] }
  }
  let finished = false
  let failure: unknown
  helmet(helmetOptions(development))({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    finished = true
    failure = error
  })
  if (!finished) throw new Error('helmet did not finish synchronously; security headers cannot be precomputed')
  if (failure !== undefined) throw failure
  return Object.freeze(headers)
}

async function securityHeaders (app: FastifyInstance, options: SecurityHeadersOptions): Promise<void> {
  const headers = securityHeaderValues(options.development)
  // Fastify's own header object, not the raw response: Node then validates and writes them once,
  // with the rest of the response head.
  app.addHook('onRequest', function setSecurityHeaders (_request, reply, done) {
    reply.headers(headers)
    done()
  })
}

export default fp(securityHeaders, { name: 'security-headers' })
