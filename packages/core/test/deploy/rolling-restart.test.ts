/**
 * The shipped proxy configuration under change, with real processes: Debian's nginx running the
 * generated deploy/nginx.conf (only addresses, ports and the certificate directory moved to
 * loopback, test/helpers/nginx.ts), two app processes (src/server.ts, Production, Redis state,
 * forwarded headers from the proxy) and a real redis-server, under a bounded load of signed-in and
 * anonymous GETs over https while each instance in turn is sent SIGTERM and started again: not one
 * request fails. And the proxy's retry rules: GET goes to the next instance on a 503, a POST never
 * does once sent, and when every instance answers 503 the answer (Retry-After included) passes.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildTestApp, settingsToEnv, signIn, standardUser } from '../helpers/app.js'
import { startLoad } from '../helpers/load.js'
import { Nginx, placeNginxConf, shippedNginxConf } from '../helpers/nginx.js'
import { closedPort } from '../helpers/ports.js'
import { cleanEnv, runEntryPoint, type Running } from '../helpers/process.js'
import { RedisServer } from '../helpers/redis-server.js'
import { waitFor } from '../helpers/wait.js'

const KEY = randomBytes(32).toString('base64')
const API = '/api/application-information'

function answer (port: number, ca: string, path: string, init: { method?: string, headers?: Record<string, string> } = {}): Promise<{ status: number, headers: Record<string, string | string[] | undefined>, body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpsRequest({ host: '127.0.0.1', port, path, method: init.method ?? 'GET', ca, headers: init.headers, timeout: 10_000 }, (response) => {
      let body = ''
      response.on('data', (chunk: Buffer) => { body += chunk.toString('utf8') })
      response.on('end', () => { resolve({ status: response.statusCode ?? 0, headers: response.headers, body }) })
    })
    outgoing.on('timeout', () => { outgoing.destroy(new Error('timeout')) })
    outgoing.on('error', reject)
    outgoing.end()
  })
}

describe('rolling restart of two instances behind the shipped nginx.conf', () => {
  const redis = new RedisServer()
  const nginx = new Nginx()
  const instances: Array<{ port: number, run: Running | undefined }> = []
  let httpsPort = 0
  let sessionCookie = ''

  function startInstance (index: number): Running {
    const instance = instances[index]
    if (instance === undefined) throw new Error(`no instance ${index}`)
    const settings = {
      DataProtection: { Keys: [KEY] },
      Hosting: { PublicOrigin: `https://127.0.0.1:${httpsPort}`, ShutdownDelaySeconds: 1, DrainTimeoutSeconds: 10 },
      ForwardedHeaders: { Enabled: true, KnownProxies: ['127.0.0.1'] },
      State: { Provider: 'Redis', Redis: { ConnectionString: redis.connectionString } },
      // Each request would log a line: on a shared two-core machine the log is the bottleneck.
      Logging: { Level: 'warn' }
    }
    const run = runEntryPoint('src/server.ts', cleanEnv({ ...settingsToEnv(settings), HOST: '127.0.0.1', PORT: String(instance.port) }))
    instance.run = run
    return run
  }

  async function listening (run: Running): Promise<void> {
    // Logging:Level warn hides the listening line: wait for the port instead (bounded).
    const port = instances.find((instance) => instance.run === run)?.port ?? 0
    await waitFor(async () => await fetch(`http://127.0.0.1:${port}/health/ready`, { signal: AbortSignal.timeout(2000) }).then((response) => response.status === 200, () => false), `instance on ${port} to be ready`, 30_000, 50)
  }

  before(async () => {
    await redis.start()
    httpsPort = await closedPort()
    const httpPort = await closedPort()
    for (let index = 0; index < 2; index++) instances.push({ port: await closedPort(), run: undefined })
    const site = placeNginxConf(await shippedNginxConf(), { upstreamPorts: instances.map((instance) => instance.port), httpPort, httpsPort, certificates: nginx.certificates })
    await Promise.all([0, 1].map(async (index) => { await listening(startInstance(index)) }))
    await nginx.start(site, httpsPort)
    // A session stored in the same Redis with the same key, as a sign-in on either instance stores it.
    const minting = await buildTestApp({ settings: { DataProtection: { Keys: [KEY] }, State: { Provider: 'Redis', Redis: { ConnectionString: redis.connectionString } } } })
    try {
      await waitFor(() => minting.app.state.status().available, 'the minting app\'s store', 10_000)
      sessionCookie = await signIn(minting.app, standardUser())
    } finally {
      await minting.app.close()
    }
  })

  after(async () => {
    for (const instance of instances) instance.run?.kill()
    await Promise.all(instances.map(async (instance) => await instance.run?.exited(10_000).catch(() => undefined)))
    await nginx.dispose()
    await redis.dispose()
  })

  test('signed-in and anonymous GETs through nginx: a session works, and the probes stay internal', async () => {
    const api = await answer(httpsPort, nginx.certificate, API, { headers: { cookie: sessionCookie, accept: 'application/json' } })
    assert.equal(api.status, 200, api.body)
    assert.equal((await answer(httpsPort, nginx.certificate, '/Account/Login')).status, 200)
    assert.equal((await answer(httpsPort, nginx.certificate, '/health/ready')).status, 404)
  })

  test('restarting each instance in turn under load fails no request', { timeout: 120_000 }, async () => {
    const load = startLoad({
      port: httpsPort,
      ca: nginx.certificate,
      connections: 8,
      ratePerSecond: 300,
      maxRequests: 6000,
      maxMs: 20_000,
      requests: [
        { path: API, headers: { cookie: sessionCookie, accept: 'application/json' } },
        { path: '/Account/Login', headers: { accept: 'text/html' } },
        { path: '/', headers: { cookie: sessionCookie, accept: 'text/html' } }
      ]
    })
    const restarts: number[] = []
    try {
      await waitFor(() => load.done() >= 50, 'load to be flowing', 10_000)
      for (const index of [0, 1]) {
        const old = instances[index]?.run
        assert.ok(old !== undefined)
        const before = load.done()
        old.child.kill('SIGTERM')
        assert.equal(await old.exited(20_000), 0, `instance ${index} drained and exited 0`)
        await listening(startInstance(index))
        restarts.push(load.done() - before)
        // The restarted instance takes traffic again before the next one goes.
        await sleep(300)
      }
    } finally {
      const result = await load.stop()
      const failed = result.total - (result.statuses[200] ?? 0)
      // The measurement for the report: printed whatever the outcome.
      console.log(JSON.stringify({ rollingRestart: { ...result, failed, requestsDuringEachRestart: restarts } }))
      assert.deepEqual(result.errors, {}, 'transport errors')
      assert.deepEqual(Object.keys(result.statuses), ['200'], `statuses ${JSON.stringify(result.statuses)}; nginx: ${nginx.output.slice(-2000)}`)
      assert.ok(result.total >= 200, `enough load to mean something (${result.total} requests)`)
      assert.ok(restarts.every((count) => count > 0), 'requests were answered while each instance restarted')
    }
  })
})

describe('the shipped nginx.conf retry rules', () => {
  const nginx = new Nginx()
  const servers: Server[] = []
  const seen: string[] = []
  let httpsPort = 0

  before(async () => {
    httpsPort = await closedPort()
    const httpPort = await closedPort()
    const ports: number[] = []
    for (const name of ['one', 'two']) {
      // Two instances in a Redis outage: each answers 503 with Retry-After, as the app does.
      const server = createServer((request, response) => {
        request.resume()
        seen.push(`${name} ${request.method ?? ''}`)
        response.writeHead(503, { 'retry-after': '10', 'content-type': 'application/problem+json' }).end(JSON.stringify({ status: 503, instance: name }))
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      servers.push(server)
      ports.push((server.address() as { port: number }).port)
    }
    await nginx.start(placeNginxConf(await shippedNginxConf(), { upstreamPorts: ports, httpPort, httpsPort, certificates: nginx.certificates }), httpsPort)
  })

  after(async () => {
    await nginx.dispose()
    for (const server of servers) server.closeAllConnections()
    await Promise.all(servers.map(async (server) => await new Promise((resolve) => server.close(resolve))))
  })

  test('a GET answered 503 is retried on the other instance; when both answer 503 the answer and its Retry-After pass through', async () => {
    seen.length = 0
    const response = await answer(httpsPort, nginx.certificate, '/Account/Login')
    assert.equal(response.status, 503)
    assert.equal(response.headers['retry-after'], '10')
    assert.deepEqual(seen.map((entry) => entry.split(' ')[1]), ['GET', 'GET'])
    assert.deepEqual(new Set(seen.map((entry) => entry.split(' ')[0])), new Set(['one', 'two']))
    // Neither instance was marked down (max_fails=0): the next GET again reaches both, never a 502.
    for (let attempt = 0; attempt < 4; attempt++) assert.equal((await answer(httpsPort, nginx.certificate, '/')).status, 503)
  })

  test('a POST answered 503 is not sent to a second instance', async () => {
    seen.length = 0
    const response = await answer(httpsPort, nginx.certificate, '/Account/Logout', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '0' } })
    assert.equal(response.status, 503)
    assert.equal(response.headers['retry-after'], '10')
    assert.equal(seen.length, 1, `sent to ${JSON.stringify(seen)}`)
  })
})
