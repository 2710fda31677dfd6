/**
 * The app for the load scenarios: the same buildApp as dist/server.js (Production, JSON logs to
 * stdout), plus one bench-only route, POST /bench-only/sign-in, which signs in the claims it is
 * sent, so the harness gets real session cookies from the real session store (embedded or Redis,
 * from configuration). The route lives here, never in the shipped app. Listens on HOST:PORT
 * (127.0.0.1).
 *
 * Not run as is: bundleAppServer() in harness.mjs bundles it with esbuild exactly as the template's
 * build bundles src/server.ts (into bench/output/, never into template/dist), so memory and CPU
 * are those of the shipped bundle, not of a TypeScript loader. The template root comes from
 * BENCH_TEMPLATE (the bundle lives elsewhere).
 */
import { createLogger, loadConfiguration } from '@project-template/core'
import { buildApp } from '../template/src/app.ts'

const TEMPLATE = process.env.BENCH_TEMPLATE
if (TEMPLATE === undefined) throw new Error('BENCH_TEMPLATE is not set (start this bundle through bench/harness.mjs)')

const loaded = loadConfiguration({ env: process.env, contentRoot: TEMPLATE })
if (loaded.errors.length > 0) throw new Error(`bench configuration invalid: ${loaded.errors.map((problem) => problem.message).join(' ')}`)
const app = await buildApp({ config: loaded.config, environmentName: loaded.environmentName, contentRoot: TEMPLATE, logger: createLogger(loaded.config.Logging.Level) })
app.post('/bench-only/sign-in', { config: { allowAnonymous: true } }, async (request, reply) => {
  await reply.signIn({ scheme: 'Bench', claims: request.body.claims })
  return reply.code(204).send()
})
process.once('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
await app.listen({ host: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT) })
