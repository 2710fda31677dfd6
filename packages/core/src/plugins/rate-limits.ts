/**
 * Per-client rate limits (issue 29, item 2) with `@fastify/rate-limit` on the endpoints anyone can
 * reach without a session. A route joins a group by its metadata, `config: { rateLimitBucket }`
 * (`challenge`, `callback`, `sign-out`, `logout-receiver`); each group has its own limit per
 * window (`RateLimits:*`). The client is `request.ip`, which Fastify resolves through the
 * configured trusted proxies (`ForwardedHeaders:KnownProxies`), never a forwarded header from
 * elsewhere. Counters live in the state store (state/rate-limit-store.ts), so instances share
 * them. Over the limit: 429 `APP_ERR_RATE_LIMITED` with `Retry-After`, rendered like every error
 * (a page saying when to retry, or problem+json), and one `rate_limit.exceeded` line per client,
 * group and window. When the store cannot count (Redis unreachable), requests pass unlimited:
 * the limits decide no access. Other routes are not limited; an app route may opt in with
 * `config: { rateLimit: { max, timeWindow } }` (the same shared store).
 */
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { ApplicationConfiguration } from '../providers/application-schema.js'
import { ConfigurationError, createError } from '../errors.js'
import { clientKeyOf, rateLimitStoreOver, type RateLimitBucket } from '../state/rate-limit-store.js'

export type { RateLimitBucket } from '../state/rate-limit-store.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The group of per-client rate limits this route counts in (plugins/rate-limits.ts). */
    rateLimitBucket?: RateLimitBucket
  }
}

export interface RateLimitsPluginOptions {
  readonly config: ApplicationConfiguration
  /** The application's configuration root key, for the key a log line names. */
  readonly rootKey: string
}

/** Clients already logged as over a limit in their current window, bounded. */
const MAX_REPORTED = 10_000

async function rateLimitsPlugin (app: FastifyInstance, options: RateLimitsPluginOptions): Promise<void> {
  const settings = options.config.RateLimits
  if (!settings.Enabled) return
  if (app.state.increment === undefined) {
    const key = `${options.rootKey}:RateLimits:Enabled`
    throw new ConfigurationError([{ key, message: `${key} needs a state store that counts (increment); the supplied store has none. Set ${key} to false or supply a store with increment.` }])
  }
  const limits: Record<RateLimitBucket, number> = {
    challenge: settings.ChallengePerWindow,
    callback: settings.CallbackPerWindow,
    'sign-out': settings.SignOutPerWindow,
    'logout-receiver': settings.LogoutReceiverPerWindow
  }
  const timeWindow = settings.WindowSeconds * 1000
  const reported = new Map<string, number>()

  function reportOnce (request: FastifyRequest, bucket: string, retryAfterSeconds: number): void {
    const now = Date.now()
    const key = `${bucket}:${clientKeyOf(request.ip)}`
    if ((reported.get(key) ?? 0) > now) return
    if (reported.size >= MAX_REPORTED) reported.clear()
    reported.set(key, now + retryAfterSeconds * 1000)
    request.log.warn({ event: 'rate_limit.exceeded', bucket, retryAfterSeconds }, 'rate limit exceeded')
  }

  // Before @fastify/rate-limit's own onRoute hook (hooks run in the order they were added).
  app.addHook('onRoute', (route) => {
    const bucket = route.config?.rateLimitBucket
    if (bucket === undefined) return
    // `bucket` is passed through to the store's child() (state/rate-limit-store.ts), beyond the declared options.
    route.config = { ...route.config, rateLimit: { max: limits[bucket], timeWindow, bucket } as never }
  })
  await app.register(rateLimit, {
    global: false,
    hook: 'onRequest',
    // A store that cannot count (Redis unreachable) does not block the sign-in pages: the limit
    // guards against floods, it decides no access; what needs the store fails with 503 by itself.
    skipOnError: true,
    // Its declared store type names Fastify's route options in child(); this one reads only `bucket`.
    store: rateLimitStoreOver(app.state) as never,
    keyGenerator: (request) => clientKeyOf(request.ip),
    errorResponseBuilder: (request, context) => {
      const seconds = Math.max(1, Math.ceil(context.ttl / 1000))
      reportOnce(request, request.routeOptions.config.rateLimitBucket ?? 'route', seconds)
      return createError('APP_ERR_RATE_LIMITED', String(seconds))
    }
  })
}

export default fp(rateLimitsPlugin, { name: 'rate-limits', dependencies: ['state'] })
