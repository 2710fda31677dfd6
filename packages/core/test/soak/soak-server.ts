/**
 * The real app for the load-and-soak run, as its own process: built by buildApp from real
 * configuration, plus the test-only TestIdP provider so logins can be part of the traffic.
 * Prints `{"port":n}` when listening; SIGUSR2 runs a full GC (started with --expose-gc) and prints
 * `{"storeCharacters":n}` (what the embedded state store holds) so the parent can compare resident
 * memory before and after the load, net of the sessions and replay records it legitimately keeps. With SOAK_REDIS set (a connection
 * string), the state store is that Redis instead of the embedded one (test/soak/redis-outage.soak.ts).
 */
import { buildApp } from '../helpers/app.js'
import { createLogger } from '../../src/logger.js'
import { loadTestConfiguration, APP_ROOT, testKeyRing } from '../helpers/app.js'
import { registerTestProvider } from '../helpers/test-provider.js'

const unhandled: string[] = []
process.on('unhandledRejection', (reason) => { unhandled.push(String(reason)); process.stderr.write(`unhandledRejection ${String(reason)}\n`) })
process.on('uncaughtException', (error) => { process.stderr.write(`uncaughtException ${error.name}\n`); process.exit(70) })

const redis = process.env.SOAK_REDIS
// The mixed load signs in and out from one address far more often than any browser: rate limits
// (test/plugins/rate-limits.test.ts) would answer 429 and are not what this soak measures.
const NO_RATE_LIMITS = { RateLimits: { Enabled: false } }
// SOAK_REDIS_SETTINGS: the whole State:Redis section as JSON (Sentinel, Cluster: test/soak/redis-failover.soak.ts).
const redisSettings = process.env.SOAK_REDIS_SETTINGS === undefined ? redis === undefined ? undefined : { ConnectionString: redis } : JSON.parse(process.env.SOAK_REDIS_SETTINGS) as Record<string, string | string[] | boolean>
const loaded = loadTestConfiguration({ settings: redisSettings === undefined ? NO_RATE_LIMITS : { ...NO_RATE_LIMITS, State: { Provider: 'Redis', Redis: redisSettings } } })
const app = await buildApp({
  config: loaded.config,
  environmentName: loaded.environmentName,
  contentRoot: APP_ROOT,
  logger: createLogger('warn'),
  keyRing: testKeyRing()
})
registerTestProvider(app)
await app.listen({ host: '127.0.0.1', port: 0 })
const address = app.server.address()
process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address !== null ? address.port : 0 })}\n`)
process.on('SIGUSR2', () => {
  (globalThis as { gc?: () => void }).gc?.()
  const characters = (app.state as { characters?: unknown }).characters
  process.stdout.write(`${JSON.stringify({ storeCharacters: typeof characters === 'number' ? characters : 0 })}\n`)
})
process.on('SIGTERM', () => { app.close().then(() => { process.exit(unhandled.length === 0 ? 0 : 71) }, () => { process.exit(72) }) })
