/**
 * `npx tsx bench/rolling-restart.ts` (issue 20, "Done means"): a rolling restart measured, with
 * the set-up of packages/core/test/deploy/rolling-restart.test.ts (its helpers are reused): Debian's
 * nginx running the generated deploy/nginx.conf on loopback, two app processes (Production, Redis
 * state, forwarded headers, log level warn) and one redis-server, under a steady load of signed-in
 * and anonymous GETs over https while each instance in turn gets SIGTERM, drains, exits and is
 * started again. Reports requests, failed requests (any answer but 200, and transport errors),
 * and latency percentiles during the restarts (SIGTERM to the restarted instance ready) and
 * outside them. Needs /usr/sbin/nginx, /usr/bin/redis-server and openssl (npm run test:setup).
 * Options (environment): CONNECTIONS (8), RATE (requests/s in all, 400), SETTLE_MS (3000).
 */
import { randomBytes } from 'node:crypto'
import { Agent, request } from 'node:https'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildTestApp, settingsToEnv, signIn, standardUser } from '../packages/core/test/helpers/app.js'
import { Nginx, placeNginxConf, shippedNginxConf } from '../packages/core/test/helpers/nginx.js'
import { closedPort } from '../packages/core/test/helpers/ports.js'
import { cleanEnv, runEntryPoint, type Running } from '../packages/core/test/helpers/process.js'
import { RedisServer } from '../packages/core/test/helpers/redis-server.js'
import { waitFor } from '../packages/core/test/helpers/wait.js'

const CONNECTIONS = Number(process.env.CONNECTIONS ?? 8)
const RATE = Number(process.env.RATE ?? 400)
const SETTLE_MS = Number(process.env.SETTLE_MS ?? 3000)
const KEY = randomBytes(32).toString('base64')
const API = '/api/application-information'

interface Sample { readonly at: number, readonly ms: number, readonly ok: boolean, readonly outcome: string }

const percentile = (values: number[], fraction: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? NaN
}

const redis = new RedisServer()
const nginx = new Nginx()
const instances: Array<{ port: number, run: Running | undefined }> = []
let httpsPort = 0

function startInstance (index: number): Running {
  const instance = instances[index]
  if (instance === undefined) throw new Error(`no instance ${index}`)
  const settings = {
    DataProtection: { Keys: [KEY] },
    Hosting: { PublicOrigin: `https://127.0.0.1:${httpsPort}`, ShutdownDelaySeconds: 1, DrainTimeoutSeconds: 10 },
    ForwardedHeaders: { Enabled: true, KnownProxies: ['127.0.0.1'] },
    State: { Provider: 'Redis', Redis: { ConnectionString: redis.connectionString } },
    Logging: { Level: 'warn' }
  }
  instance.run = runEntryPoint('src/server.ts', cleanEnv({ ...settingsToEnv(settings), HOST: '127.0.0.1', PORT: String(instance.port) }))
  return instance.run
}

async function ready (index: number): Promise<void> {
  const port = instances[index]?.port ?? 0
  await waitFor(async () => await fetch(`http://127.0.0.1:${port}/health/ready`, { signal: AbortSignal.timeout(2000) }).then((response) => response.status === 200, () => false), `instance ${index} ready`, 60_000, 50)
}

async function main (): Promise<void> {
  await redis.start()
  httpsPort = await closedPort()
  const httpPort = await closedPort()
  for (let index = 0; index < 2; index++) instances.push({ port: await closedPort(), run: undefined })
  const site = placeNginxConf(await shippedNginxConf(), { upstreamPorts: instances.map((instance) => instance.port), httpPort, httpsPort, certificates: nginx.certificates })
  startInstance(0)
  startInstance(1)
  await Promise.all([ready(0), ready(1)])
  await nginx.start(site, httpsPort)
  const minting = await buildTestApp({ settings: { DataProtection: { Keys: [KEY] }, State: { Provider: 'Redis', Redis: { ConnectionString: redis.connectionString } } } })
  await waitFor(() => minting.app.state.status().available, 'the minting app\'s store', 10_000)
  const cookie = await signIn(minting.app, standardUser())
  await minting.app.close()

  const requests = [
    { path: API, headers: { cookie, accept: 'application/json' } },
    { path: '/Account/Login', headers: { accept: 'text/html' } },
    { path: '/', headers: { cookie, accept: 'text/html' } }
  ]
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS, ca: nginx.certificate })
  const samples: Sample[] = []
  const state = { stopped: false }
  const once = async (entry: typeof requests[number]): Promise<void> => {
    const started = performance.now()
    const outcome = await new Promise<string>((resolve) => {
      const outgoing = request({ host: '127.0.0.1', port: httpsPort, path: entry.path, agent, headers: entry.headers, timeout: 15_000 }, (response) => {
        response.resume()
        response.on('end', () => { resolve(String(response.statusCode ?? 0)) })
        response.on('error', (error: NodeJS.ErrnoException) => { resolve(error.code ?? error.name) })
      })
      outgoing.on('timeout', () => { outgoing.destroy(Object.assign(new Error('timeout'), { code: 'timeout' })) })
      outgoing.on('error', (error: NodeJS.ErrnoException) => { resolve(error.code ?? error.name) })
      outgoing.end()
    })
    samples.push({ at: started, ms: performance.now() - started, ok: outcome === '200', outcome })
  }
  const intervalMs = 1000 * CONNECTIONS / RATE
  const workers = Promise.all(Array.from({ length: CONNECTIONS }, async (_value, offset) => {
    for (let index = offset; !state.stopped; index++) {
      const started = performance.now()
      await once(requests[index % requests.length] as typeof requests[number])
      const rest = intervalMs - (performance.now() - started)
      if (rest > 0) await sleep(rest)
    }
  }))

  await sleep(SETTLE_MS)
  const windows: Array<[number, number]> = []
  for (const index of [0, 1]) {
    const old = instances[index]?.run
    if (old === undefined) throw new Error(`instance ${index} is not running`)
    const from = performance.now()
    old.child.kill('SIGTERM')
    const code = await old.exited(30_000)
    if (code !== 0) throw new Error(`instance ${index} exited with ${String(code)}`)
    startInstance(index)
    await ready(index)
    windows.push([from, performance.now()])
    await sleep(SETTLE_MS)
  }
  state.stopped = true
  await workers
  agent.destroy()

  const during = samples.filter((sample) => windows.some(([from, to]) => sample.at >= from && sample.at <= to))
  const outside = samples.filter((sample) => !during.includes(sample))
  const outcomes: Record<string, number> = {}
  for (const sample of samples) outcomes[sample.outcome] = (outcomes[sample.outcome] ?? 0) + 1
  const row = (name: string, set: Sample[]): string => {
    const ms = set.map((sample) => sample.ms)
    return `| ${name} | ${set.length.toLocaleString('en-US')} | ${set.filter((sample) => !sample.ok).length} | ${percentile(ms, 0.5).toFixed(2)} / ${percentile(ms, 0.99).toFixed(2)} / ${Math.max(...ms).toFixed(0)} |`
  }
  console.log(`Node ${process.version}; two instances (Redis state) behind the shipped nginx.conf, ${CONNECTIONS} connections at up to ${RATE} requests/s (signed-in API, login page, signed-in /), each instance restarted in turn (SIGTERM, ShutdownDelaySeconds 1, drain, exit, start, ready); restart windows ${windows.map(([from, to]) => `${((to - from) / 1000).toFixed(1)} s`).join(' and ')}; answers ${JSON.stringify(outcomes)}\n`)
  console.log('| Requests | Count | Failed | Latency p50 / p99 / max ms |')
  console.log('|---|---:|---:|---:|')
  console.log(row('during the restarts', during))
  console.log(row('outside them', outside))
  console.log(row('all', samples))
}

try {
  await main()
} finally {
  for (const instance of instances) instance.run?.kill()
  await Promise.all(instances.map(async (instance) => await instance.run?.exited(10_000).catch(() => undefined)))
  await nginx.dispose()
  await redis.dispose()
}
