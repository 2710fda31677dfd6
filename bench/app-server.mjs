/**
 * The app for the load scenarios: the built app (template/dist/app.js, the same buildApp as
 * dist/server.js, Production, JSON logs to stdout) plus one bench-only route, POST
 * /bench-only/sign-in, which signs in the claims it is sent, so the harness gets real session
 * cookies from the real session store (embedded or Redis, from configuration). The route lives
 * here, never in the shipped app. Listens on HOST:PORT (127.0.0.1).
 */
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { DIST, TEMPLATE } from './harness.mjs'

const { buildApp } = await import(pathToFileURL(join(DIST, 'app.js')).href)
const { loadConfiguration } = await import(pathToFileURL(join(DIST, 'config', 'load.js')).href)
const { createLogger } = await import(pathToFileURL(join(DIST, 'logger.js')).href)

const loaded = loadConfiguration({ env: process.env, contentRoot: TEMPLATE })
if (loaded.errors.length > 0) throw new Error(`bench configuration invalid: ${loaded.errors.map((problem) => problem.message).join(' ')}`)
const app = await buildApp({ config: loaded.config, environmentName: loaded.environmentName, contentRoot: TEMPLATE, logger: createLogger(loaded.config.Logging.Level) })
app.post('/bench-only/sign-in', { config: { allowAnonymous: true } }, async (request, reply) => {
  await reply.signIn({ scheme: 'Bench', claims: request.body.claims })
  return reply.code(204).send()
})
process.once('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
await app.listen({ host: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT) })
