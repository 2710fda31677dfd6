/**
 * The app for the load scenarios: the same buildApp as dist/server.js (Production, JSON logs to
 * stdout), loaded from template/src through tsx (the build bundles only the entry points; the
 * compiled code is the same esbuild transform, paid once at start), plus one bench-only route, POST
 * /bench-only/sign-in, which signs in the claims it is sent, so the harness gets real session
 * cookies from the real session store (embedded or Redis, from configuration). The route lives
 * here, never in the shipped app. Listens on HOST:PORT (127.0.0.1).
 */
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { register } from 'tsx/esm/api'
import { TEMPLATE } from './harness.mjs'

register()
const source = (path) => pathToFileURL(join(TEMPLATE, 'src', path)).href
const { buildApp } = await import(source('app.ts'))
const { loadConfiguration } = await import(source('config/load.ts'))
const { createLogger } = await import(source('logger.ts'))

const loaded = loadConfiguration({ env: process.env, contentRoot: TEMPLATE })
if (loaded.errors.length > 0) throw new Error(`bench configuration invalid: ${loaded.errors.map((problem) => problem.message).join(' ')}`)
const app = await buildApp({ config: loaded.config, environmentName: loaded.environmentName, contentRoot: TEMPLATE, logger: createLogger(loaded.config.Logging.Level) })
app.post('/bench-only/sign-in', { config: { allowAnonymous: true } }, async (request, reply) => {
  await reply.signIn({ scheme: 'Bench', claims: request.body.claims })
  return reply.code(204).send()
})
process.once('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
await app.listen({ host: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT) })
