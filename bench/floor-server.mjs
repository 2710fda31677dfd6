/**
 * The floor for `npm run bench`: bare Fastify 5, no logging, no plugins, one route per benchmark
 * scenario, and a signed cookie (HMAC-SHA256, constant-time comparison) checked in an `onRequest`
 * hook. It is what the app's request path costs at the least; the app is measured against it.
 *
 * With FLOOR_POSTURE=1 it is the reference "floor + posture": the same server plus the two things
 * the app must do on every request and the floor by definition does not, taken from the built app
 * itself: its security headers (helmet's, computed once) and its request completion log line (the
 * app's pino logger and fields, stdout). The difference between the two floors is what the posture
 * costs; the difference between this one and the app is the scaffold's own overhead.
 *
 * FLOOR_POSTURE=headers or =log is the floor with one half of the posture only (to see what each
 * costs, bench/instructions.mjs).
 *
 * Environment: HOST, PORT, FLOOR_SECRET (base64), STATIC_FILE (path of the file served at
 * /css/site.css), FLOOR_POSTURE. Answers SIGTERM/SIGINT by closing.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { pathToFileURL } from 'node:url'
import Fastify from 'fastify'

export const FLOOR_COOKIE = 'floor.session'

/** `<payload>.<base64url HMAC-SHA256(payload)>`, as the harness builds it. */
export function signFloorCookie (payload, secret) {
  return `${payload}.${createHmac('sha256', secret).update(payload).digest('base64url')}`
}

function cookieValue (header, name) {
  if (header === undefined) return undefined
  const prefix = `${name}=`
  for (const part of header.split(';')) {
    const trimmed = part.trim()
    if (trimmed.startsWith(prefix)) return trimmed.slice(prefix.length)
  }
  return undefined
}

function verified (value, secret) {
  if (value === undefined) return false
  const dot = value.lastIndexOf('.')
  if (dot <= 0) return false
  const expected = createHmac('sha256', secret).update(value.slice(0, dot)).digest()
  const given = Buffer.from(value.slice(dot + 1), 'base64url')
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** The app's security headers and logger, from the core's build (packages/core/dist; internal modules, the bench measures them). */
export async function postureOfApp () {
  const dist = new URL('../packages/core/dist/', import.meta.url)
  const { securityHeaderValues } = await import(new URL('plugins/security-headers.js', dist).href)
  const { createLogger } = await import(new URL('logger.js', dist).href)
  const { logRequestCompleted } = await import(new URL('plugins/request-logging.js', dist).href)
  const { completionLineWriter } = await import(new URL('completion-line.js', dist).href)
  const logger = createLogger('info')
  // The line as the app writes it (plugins/request-logging.ts): through the same writer.
  const write = completionLineWriter(logger)
  return { headers: securityHeaderValues('Production'), logger, logRequestCompleted: (log, request, reply) => logRequestCompleted(log, request, reply, write) }
}

/** The posture FLOOR_POSTURE asks for: all of it (1), the headers or the log line alone, or none. */
async function postureOf (which) {
  if (which !== '1' && which !== 'headers' && which !== 'log') return undefined
  const { headers, logger, logRequestCompleted } = await postureOfApp()
  return which === '1' ? { headers, logger, logRequestCompleted } : which === 'headers' ? { headers } : { logger, logRequestCompleted }
}

export function buildFloor ({ secret, staticFile, posture }) {
  const app = Fastify({ logger: false, http: { maxHeaderSize: 32 * 1024 }, ...(posture === undefined ? {} : { genReqId: () => randomUUID() }) })

  if (posture !== undefined) {
    const { headers, logger, logRequestCompleted } = posture
    if (headers !== undefined) {
      app.addHook('onRequest', (_request, reply, done) => {
        reply.headers(headers)
        done()
      })
    }
    // The app's own function, with a child bound to the request id as Fastify makes for the app.
    if (logger !== undefined) {
      app.addHook('onResponse', (request, reply, done) => {
        logRequestCompleted(logger.child({ reqId: request.id }), request, reply)
        done()
      })
    }
  }
  const information = JSON.stringify({ applicationName: 'ProjectTemplate', apiVersion: '1.0' })
  const live = JSON.stringify({ status: 'Healthy' })
  const login = '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Sign in - ProjectTemplate</title>' +
    '<link rel="stylesheet" href="/css/site.css"></head><body><main><h1>Sign in</h1>' +
    '<p id="no-provider">No sign-in provider is configured for this application.</p></main></body></html>\n'

  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config.public === true) return undefined
    if (verified(cookieValue(request.headers.cookie, FLOOR_COOKIE), secret)) return undefined
    if (request.url.startsWith('/api/')) {
      return reply.code(401).type('application/problem+json; charset=utf-8')
        .send(JSON.stringify({ type: 'about:blank', title: 'Authentication required', status: 401, requestId: request.id }))
    }
    return reply.redirect(`/Account/Login?ReturnUrl=${encodeURIComponent(request.url)}`, 302)
  })

  app.get('/api/application-information', async (_request, reply) => reply.type('application/json; charset=utf-8').send(information))
  app.get('/', async (_request, reply) => reply.type('text/html; charset=utf-8').send(login))
  app.get('/Account/Login', { config: { public: true } }, async (_request, reply) => reply.type('text/html; charset=utf-8').send(login))
  app.get('/css/site.css', { config: { public: true } }, async (_request, reply) =>
    reply.type('text/css; charset=utf-8').send(createReadStream(staticFile)))
  app.get('/health/live', { config: { public: true } }, async (_request, reply) => reply.type('application/json; charset=utf-8').send(live))
  return app
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const app = buildFloor({
    secret: Buffer.from(process.env.FLOOR_SECRET ?? '', 'base64'),
    staticFile: process.env.STATIC_FILE,
    posture: await postureOf(process.env.FLOOR_POSTURE)
  })
  const close = () => { app.close().finally(() => process.exit(0)) }
  process.once('SIGTERM', close)
  process.once('SIGINT', close)
  await app.listen({ host: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT ?? 0) })
}
