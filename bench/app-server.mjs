/**
 * The app for the load scenarios: the same buildApp as dist/server.js (Production, JSON logs to
 * stdout), plus bench-only routes, which live here, never in the shipped app:
 *
 * - POST /bench-only/sign-in signs in the claims it is sent, so the harness gets real session
 *   cookies from the real session store (embedded or Redis, from configuration);
 * - with provisioning on (issue 41): POST /bench-only/connection-token issues a token of the
 *   connection named in the body (what an operator's `app.provisioning.createToken` does), and
 *   POST /bench-only/link-users links the SCIM users whose ids it is sent to sign-in identities
 *   (what a first sign-in does), so that a deactivation has someone's doors to close;
 * - with an ApiKey scheme (issue 42): GET /bench-only/api-key creates a key for the signed-in user
 *   (the session given a fresh authentication time, as a real sign-in has) and returns it;
 * - with BENCH_COUNT_STORES=1: every call of the state store and of the directory store is
 *   counted, and GET /bench-only/store-calls answers the counts (a counter, not a timing).
 *
 * Listens on HOST:PORT (127.0.0.1).
 *
 * Not run as is: bundleAppServer() in harness.mjs bundles it with esbuild exactly as the template's
 * build bundles src/server.ts (into bench/output/, never into template/dist), so memory and CPU
 * are those of the shipped bundle, not of a TypeScript loader. The template root comes from
 * BENCH_TEMPLATE (the bundle lives elsewhere).
 */
import { createLogger, loadConfiguration, Principal } from '@project-template/core'
// The same module the core's index bundles (esbuild resolves the package to this file): the store plugins/directory.ts opened.
import { directoryStoreOf } from '../packages/core/dist/plugins/directory.js'
import { buildApp } from '../template/src/app.ts'

const TEMPLATE = process.env.BENCH_TEMPLATE
if (TEMPLATE === undefined) throw new Error('BENCH_TEMPLATE is not set (start this bundle through bench/harness.mjs)')

const loaded = loadConfiguration({ env: process.env, contentRoot: TEMPLATE })
if (loaded.errors.length > 0) throw new Error(`bench configuration invalid: ${loaded.errors.map((problem) => problem.message).join(' ')}`)
const app = await buildApp({ config: loaded.config, environmentName: loaded.environmentName, contentRoot: TEMPLATE, logger: createLogger(loaded.config.Logging.Level) })
const anonymous = { config: { allowAnonymous: true } }
app.post('/bench-only/sign-in', anonymous, async (request, reply) => {
  await reply.signIn({ scheme: 'Bench', claims: request.body.claims })
  return reply.code(204).send()
})

if (app.provisioning !== undefined) {
  app.post('/bench-only/connection-token', anonymous, async (request) => ({ token: (await app.provisioning.createToken(request.body.connection)).token }))
  app.post('/bench-only/link-users', anonymous, async (request) => {
    const store = directoryStoreOf(app)
    let linked = 0
    for (const id of request.body.ids) {
      const update = await store.updateUser(request.body.connection, id, (current) => ({
        userName: current.userName, active: current.active, attributes: current.attributes,
        ...(current.externalId === undefined ? {} : { externalId: current.externalId }),
        identity: { scheme: 'Bench', issuer: 'Bench', subject: `scim-${id}` }
      }))
      if (update !== undefined) linked++
    }
    return { linked }
  })
}

if (app.apiKeys !== undefined) {
  app.get('/bench-only/api-key', async (request) => {
    const fresh = new Principal({ ...request.user.ticket, authentication: { authTime: Math.floor(Date.now() / 1000) } })
    const created = await app.apiKeys.scheme().create(fresh, { name: 'bench', scopes: request.query.scopes.split(',') })
    return { key: created.secret.reveal() }
  })
}

if (process.env.BENCH_COUNT_STORES === '1') {
  const counts = { state: 0, directory: 0 }
  /** Replaces each method of `target` (own or inherited) by one that counts its calls, on the object itself. */
  const count = (target, name, skip) => {
    const wrapped = new Set(skip)
    for (let prototype = target; prototype !== null && prototype !== Object.prototype; prototype = Object.getPrototypeOf(prototype)) {
      for (const key of Object.getOwnPropertyNames(prototype)) {
        const method = Object.getOwnPropertyDescriptor(prototype, key)?.value
        if (key === 'constructor' || wrapped.has(key) || typeof method !== 'function') continue
        wrapped.add(key)
        target[key] = function (...args) { counts[name]++; return method.apply(this, args) }
      }
    }
  }
  // status(), subscribe(), start() and close() are no round trip; every other state store method is one.
  count(app.state, 'state', new Set(['status', 'subscribe', 'start', 'close', 'provider']))
  const directory = directoryStoreOf(app)
  if (directory !== undefined) count(directory, 'directory', new Set(['close', 'provider']))
  app.get('/bench-only/store-calls', anonymous, async () => counts)
}

process.once('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
await app.listen({ host: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT) })
