/**
 * What the benchmark and the profiler share: CPU pinning, starting and stopping the servers
 * (bounded waits, every child killed by cleanup()), sealed session cookies made with the app's
 * own built modules, and one autocannon load run with a 10 µs latency histogram and the
 * server's CPU time per response.
 */
import { spawn, spawnSync } from 'node:child_process'
import { generateKeyPairSync, sign as cryptoSign } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import { createServer } from 'node:net'
import { availableParallelism, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import autocannon from 'autocannon'
import { FLOOR_COOKIE, signFloorCookie } from './floor-server.mjs'

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
export const TEMPLATE = join(ROOT, 'template')
export const DIST = join(TEMPLATE, 'dist')
export const HOST = '127.0.0.1'
export const SESSION_COOKIE = '__Host-ProjectTemplate.Web.Authentication'
const START_TIMEOUT_MS = 60_000
export const BENCH_OUTPUT = join(ROOT, 'bench', 'output')

/**
 * Bundles bench/app-server.mjs with the template's own esbuild settings (see the template's
 * `bundle` script) into bench/output/app-server/; returns the script to start. Source maps for
 * bench/profile.mjs.
 */
export async function bundleAppServer () {
  const { build } = await import('esbuild')
  const outdir = join(BENCH_OUTPUT, 'app-server')
  await build({
    entryPoints: [join(ROOT, 'bench', 'app-server.mjs')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20.19',
    external: ['pino-pretty'],
    outdir,
    splitting: true,
    sourcemap: true,
    logLevel: 'warning',
    banner: { js: "import{createRequire as __bundleCreateRequire}from'node:module';const require=__bundleCreateRequire(import.meta.url);" }
  })
  return join(outdir, 'app-server.js')
}

// ---------------------------------------------------------------------------------------------
// CPU pinning: servers on CPU 0, this process (the load generator) on CPU 1.

// The pinned copy sees one CPU (its own affinity), so it takes the parent's word.
export const canPin = process.env.BENCH_PINNED === '1' ||
  (availableParallelism() >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0)

export function commandLine () {
  return `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`
}

// ---------------------------------------------------------------------------------------------
// Child processes

export const children = new Set()

export function cleanup () {
  try { rmSync(STATE_ROOT, { recursive: true, force: true }) } catch {}
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  children.clear()
}

export function pinned (command, args) {
  return canPin ? ['taskset', ['-c', '0', command, ...args]] : [command, args]
}

export async function freePort () {
  return await new Promise((resolvePort, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, HOST, () => {
      const { port } = server.address()
      server.close(() => { resolvePort(port) })
    })
  })
}

export function get (port, path, headers = {}) {
  return new Promise((resolveResponse, reject) => {
    const req = httpRequest({ host: HOST, port, path, headers, timeout: 2000 }, (res) => {
      const chunks = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => { resolveResponse({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') }) })
    })
    req.on('timeout', () => { req.destroy(new Error('timeout')) })
    req.on('error', reject)
    req.end()
  })
}

/**
 * Spawns a server pinned to CPU 0 and waits (bounded) until /health/live answers 200. Returns the
 * child and the milliseconds from spawn to that first answer. stdout goes to `stdout` (a file
 * descriptor or 'pipe'); the app logs one JSON line per request there.
 */
/**
 * Node options of every server the bench starts (floor and app alike), before the caller's own.
 * `--no-memory-reducer`: the rounds interleave servers, so each app process sits idle for tens of
 * seconds between its loads; once V8's memory reducer has shrunk an idle heap (about 100 s after
 * start), the next loads cost 20-40 % more CPU per request for several seconds while the heap
 * grows back, and every later round measured that instead of the steady state. What a burst after
 * idle costs is measured on its own: bench/after-idle.mjs (docs/performance.md).
 */
export const SERVER_NODE_ARGS = Object.freeze(['--no-memory-reducer'])

export async function startServer ({ script, env, port, stdout, nodeArgs = [] }) {
  const [command, args] = pinned(process.execPath, [...SERVER_NODE_ARGS, ...nodeArgs, script])
  const started = performance.now()
  const child = spawn(command, args, { env, stdio: ['ignore', stdout, 'pipe'], cwd: ROOT })
  children.add(child)
  let output = ''
  const keep = (chunk) => { if (output.length < 20_000) output += chunk.toString('utf8') }
  child.stderr.on('data', keep)
  child.stdout?.on('data', keep)
  const deadline = started + START_TIMEOUT_MS
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode} before answering:\n${output}`)
    try {
      const response = await get(port, '/health/live')
      if (response.status === 200) return { child, startMs: performance.now() - started, startCpuMs: cpuMs(child.pid), output: () => output }
    } catch { /* not listening yet */ }
    await sleep(2)
  }
  child.kill('SIGKILL')
  throw new Error(`${script} did not answer /health/live within ${START_TIMEOUT_MS} ms:\n${output}`)
}

export async function stopServer (child) {
  if (child.exitCode !== null || child.signalCode !== null) { children.delete(child); return }
  const exited = new Promise((resolveExit) => child.once('exit', resolveExit))
  child.kill('SIGTERM')
  const timer = setTimeout(() => { child.kill('SIGKILL') }, 5000)
  await exited
  clearTimeout(timer)
  children.delete(child)
}

/** User + system CPU time of a process, in milliseconds (/proc/<pid>/stat, 10 ms ticks). */
export function cpuMs (pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

export function rssKiB (pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
  return { rss: field('VmRSS'), hwm: field('VmHWM') }
}

// ---------------------------------------------------------------------------------------------
// Cookies

const benchClaim = (type, value) => ({ type, value, issuer: 'Bench' })
export const STANDARD_CLAIMS = [
  benchClaim('application:subject', 'user-1'),
  benchClaim('application:name', 'Ada Lovelace'),
  benchClaim('application:email', 'ada@example.test'),
  benchClaim('application:role', 'Reader'),
  benchClaim('application:group', 'engineering'),
  benchClaim('application:permission', 'application.read')
]
/** The principal of the session-state issue: 300 groups with names of 37 characters (Entra ID GUID length). */
export const LARGE_CLAIMS = [
  ...STANDARD_CLAIMS,
  ...Array.from({ length: 300 }, (_, index) => benchClaim('application:group', `group-number-${String(index).padStart(3, '0')}-of-a-large-directory`))
]

/** Signs `claims` in through bench/app-server.mjs's bench-only route; returns the Cookie header. */
export async function signInCookie (port, claims) {
  const body = JSON.stringify({ claims })
  const cookie = await new Promise((resolveCookie, reject) => {
    const req = httpRequest({ host: HOST, port, path: '/bench-only/sign-in', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }, timeout: 5000 }, (res) => {
      res.resume()
      res.on('end', () => {
        if (res.statusCode !== 204) { reject(new Error(`bench sign-in answered ${res.statusCode}`)); return }
        const setCookie = res.headers['set-cookie'] ?? []
        resolveCookie(setCookie.map((line) => line.split(';')[0]).filter((pair) => !pair.endsWith('=')).join('; '))
      })
    })
    req.on('timeout', () => { req.destroy(new Error('timeout')) })
    req.on('error', reject)
    req.end(body)
  })
  if (!cookie.startsWith(`${SESSION_COOKIE}=`)) throw new Error('bench sign-in set no session cookie')
  return cookie
}

// ---------------------------------------------------------------------------------------------
// Bearer tokens (issue 35)

/** The audience of the bench's JwtBearer scheme. */
export const BEARER_AUDIENCE = 'api://bench'

/**
 * An issuer for the bearer scenario: an https server on 127.0.0.1 (a self-signed certificate for
 * `localhost`, trusted by the app through NODE_EXTRA_CA_CERTS, so the app keeps its Production
 * posture) serving an RS256 key set, and `token(claims)` minting access tokens with its key.
 */
export async function startBearerIssuer () {
  const directory = mkdtempSync(join(tmpdir(), 'bench-issuer-'))
  const keyFile = join(directory, 'key.pem')
  const certFile = join(directory, 'cert.pem')
  const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost'], { stdio: 'ignore' })
  if (made.status !== 0) return undefined
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const jwks = JSON.stringify({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'bench', alg: 'RS256', use: 'sig' }] })
  const server = createHttpsServer({ key: readFileSync(keyFile), cert: readFileSync(certFile) }, (request, response) => {
    response.writeHead(request.url === '/jwks' ? 200 : 404, { 'content-type': 'application/json' }).end(request.url === '/jwks' ? jwks : '{}')
  })
  await new Promise((resolveListen) => server.listen(0, HOST, resolveListen))
  const issuer = `https://localhost:${server.address().port}`
  const encode = (value) => Buffer.from(JSON.stringify(value)).toString('base64url')
  return {
    issuer,
    jwksUri: `${issuer}/jwks`,
    caFile: certFile,
    token (claims) {
      const now = Math.floor(Date.now() / 1000)
      const signingInput = `${encode({ alg: 'RS256', kid: 'bench', typ: 'at+jwt' })}.${encode({ iss: issuer, aud: BEARER_AUDIENCE, iat: now, exp: now + 3600, ...claims })}`
      return `${signingInput}.${cryptoSign('sha256', Buffer.from(signingInput), privateKey).toString('base64url')}`
    },
    close: async () => { server.closeAllConnections(); await new Promise((resolveClose) => server.close(resolveClose)) }
  }
}

/** Environment adding the JwtBearer scheme `Bench` of `issuer` to an app environment. */
export function bearerEnvironment (env, issuer) {
  return {
    ...env,
    NODE_EXTRA_CA_CERTS: issuer.caFile,
    ProjectTemplate__Authentication__Schemes__Bench__Type: 'JwtBearer',
    ProjectTemplate__Authentication__Schemes__Bench__Issuer: issuer.issuer,
    ProjectTemplate__Authentication__Schemes__Bench__JwksUri: issuer.jwksUri,
    ProjectTemplate__Authentication__Schemes__Bench__Audiences__0: BEARER_AUDIENCE,
    // A JwtBearer scheme outside Development needs a validated origin (issue 40, item 4): the bench's host.
    ProjectTemplate__Hosting__AllowedHosts__0: HOST
  }
}

// ---------------------------------------------------------------------------------------------
// Provisioning and API keys (issues 41 and 42)

/** The prefix and scope of the bench's ApiKey scheme `Keys`. */
export const API_KEY_PREFIX = 'bench_'
export const API_KEY_SCOPE = 'application.read'

/**
 * Environment adding SCIM provisioning with one connection `connection` (tenant `bench`), the
 * directory store `store` (default: embedded), and a provisioning rate limit no bench run reaches
 * (the budget is counted on every request all the same, as in production).
 */
export function provisioningEnvironment (env, { connection = 'Bench', postgres } = {}) {
  return {
    ...env,
    ProjectTemplate__Provisioning__Enabled: 'true',
    [`ProjectTemplate__Provisioning__Connections__${connection}__Tenant`]: 'bench',
    ProjectTemplate__RateLimits__ProvisioningPerWindow: '10000000',
    ...(postgres === undefined ? {} : { ProjectTemplate__Provisioning__Store__Provider: 'PostgreSql', ProjectTemplate__Provisioning__Store__PostgreSql__ConnectionString: postgres })
  }
}

/**
 * Environment adding the ApiKey scheme `Keys` (its keys in the directory store's database), with a
 * per-key rate limit no bench run reaches (counted on every request all the same).
 */
export function apiKeyEnvironment (env) {
  return {
    ...env,
    ProjectTemplate__RateLimits__ApiKeyRequestsPerWindow: '100000000',
    ProjectTemplate__Authentication__Schemes__Keys__Type: 'ApiKey',
    ProjectTemplate__Authentication__Schemes__Keys__Prefix: API_KEY_PREFIX,
    [`ProjectTemplate__Authentication__Schemes__Keys__Scopes__${API_KEY_SCOPE}`]: 'Read the application information'
  }
}

/** The scenarios that run on the keys app (issues 41 and 42). */
export const KEYS_APP_SCENARIOS = Object.freeze(['apikey', 'keyscookie', 'keysbearer'])

/** The keys app's environment over `env`: the JwtBearer scheme of `issuer`, SCIM provisioning and the ApiKey scheme. */
export function keysAppEnvironment (env, issuer) {
  return apiKeyEnvironment(provisioningEnvironment(bearerEnvironment(env, issuer)))
}

/** A bearer token of `issuer` whose claims normalize to the standard principal's six (STANDARD_CLAIMS). */
export function benchBearerToken (issuer) {
  return issuer.token({ sub: 'user-1', name: 'Ada Lovelace', email: 'ada@example.test', roles: ['Reader'], groups: ['engineering'], permissions: ['application.read'] })
}

/**
 * The keys app's credentials at `port`: a session cookie, an API key of the same user made from a
 * separate session (signing in again ends neither), and a bearer token of `issuer`.
 */
export async function keysAppCredentials (port, issuer) {
  return {
    keysCookie: await signInCookie(port, STANDARD_CLAIMS),
    apiKey: await createApiKey(port, await signInCookie(port, STANDARD_CLAIMS)),
    bearer: benchBearerToken(issuer)
  }
}

/** The value after `--<name>` on the command line, or `fallback`. */
export function option (name, fallback) {
  const at = process.argv.indexOf(`--${name}`)
  return at === -1 ? fallback : process.argv[at + 1]
}

/** One JSON request; resolves to the status and the parsed body (or the text). Bounded: 30 s. */
export function requestJson (port, method, path, { body, headers = {} } = {}) {
  const payload = body === undefined ? undefined : JSON.stringify(body)
  return new Promise((resolveResponse, reject) => {
    const req = httpRequest({
      host: HOST, port, path, method, timeout: 30_000,
      headers: { accept: 'application/json', ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }), ...headers }
    }, (res) => {
      const chunks = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let parsed = text
        try { parsed = JSON.parse(text) } catch { /* not JSON */ }
        resolveResponse({ status: res.statusCode, body: parsed })
      })
    })
    req.on('timeout', () => { req.destroy(new Error('timeout')) })
    req.on('error', reject)
    req.end(payload)
  })
}

/** An API key of the scheme `Keys` for the user signed in with `cookie` (bench/app-server.mjs's bench-only route). */
export async function createApiKey (port, cookie) {
  const response = await requestJson(port, 'GET', `/bench-only/api-key?scopes=${API_KEY_SCOPE}`, { headers: { cookie } })
  if (response.status !== 200 || typeof response.body?.key !== 'string') throw new Error(`bench API key creation answered ${response.status}: ${JSON.stringify(response.body)}`)
  return response.body.key
}

/** The state store and directory store calls an app started with BENCH_COUNT_STORES=1 has counted. */
export async function storeCalls (port) {
  const response = await requestJson(port, 'GET', '/bench-only/store-calls')
  if (response.status !== 200) throw new Error(`bench store counts answered ${response.status}`)
  return response.body
}

/** A redis-server on a unix socket in a temporary directory, no persistence; undefined when Debian's redis-server is missing. */
export async function startRedis () {
  if (!existsSync('/usr/bin/redis-server')) return undefined
  const directory = mkdtempSync(join(tmpdir(), 'bench-redis-'))
  const socket = join(directory, 'redis.sock')
  const child = spawn('/usr/bin/redis-server', ['--port', '0', '--unixsocket', socket, '--unixsocketperm', '700', '--save', '', '--appendonly', 'no', '--dir', directory], { stdio: 'ignore' })
  children.add(child)
  const deadline = performance.now() + START_TIMEOUT_MS
  while (performance.now() < deadline && !existsSync(socket)) await sleep(10)
  if (!existsSync(socket)) throw new Error('redis-server did not start')
  return { child, connectionString: `unix:${socket}`, directory }
}

/** The floor's cookie: same header length as the app's, signed with HMAC-SHA256. */
export function floorCookie (appHeader, secret) {
  const filler = Buffer.alloc(appHeader.length, 'a').toString('base64url').slice(0, Math.max(1, appHeader.length - FLOOR_COOKIE.length - 45))
  return `${FLOOR_COOKIE}=${signFloorCookie(filler, secret)}`
}

// ---------------------------------------------------------------------------------------------
// Load

/** Latency histogram with 10 µs buckets up to 1 s (bounded memory). */
export class Latencies {
  constructor () { this.buckets = new Uint32Array(100_001); this.count = 0 }
  record (ms) { this.buckets[Math.min(this.buckets.length - 1, Math.floor(ms * 100))]++; this.count++ }
  percentile (p) {
    const target = Math.ceil(this.count * p)
    let seen = 0
    for (let index = 0; index < this.buckets.length; index++) {
      seen += this.buckets[index]
      if (seen >= target && target > 0) return (index + 0.5) / 100
    }
    return NaN
  }
}

export async function load ({ pid, port, path, headers, expected, duration, connections }) {
  const latencies = new Latencies()
  const cpuBefore = cpuMs(pid)
  const instance = autocannon({ url: `http://${HOST}:${port}${path}`, headers, duration, connections, pipelining: 1, timeout: 10 })
  instance.on('response', (_client, _status, _bytes, responseTime) => { latencies.record(responseTime) })
  const result = await instance
  const cpu = cpuMs(pid) - cpuBefore
  let unexpected = result.errors + result.timeouts
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) if (Number(code) !== expected) unexpected += Number(count)
  return {
    rps: result.requests.total / result.duration,
    requests: result.requests.total,
    // Server CPU per response: robust where other work shares the machine.
    cpuUs: result.requests.total > 0 ? cpu * 1000 / result.requests.total : NaN,
    p50: latencies.percentile(0.5),
    p99: latencies.percentile(0.99),
    unexpected,
    statuses: Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, Number(count)]))
  }
}


/** The issue's seven scenarios; `app` and `floor` are the request headers each server gets. */
export function buildScenarios (cookies, floorSecret) {
  const json = { accept: 'application/json' }
  const html = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' }
  const authenticated = (id, title, cookie, server) => ({ id, title, path: '/api/application-information', expected: 200, server, app: { ...json, cookie }, floor: { ...json, cookie: floorCookie(cookie, floorSecret) } })
  return [
    authenticated('auth', 'Authenticated `GET /api/application-information` (6 claims, embedded store)', cookies.standard, 'app'),
    authenticated('large', `Same, ${LARGE_CLAIMS.length} claims (300 groups of 37 characters, embedded store)`, cookies.large, 'app'),
    ...(cookies.sqlite === undefined ? [] : [authenticated('sqlite', 'Same, 6 claims, embedded store persisted to SQLite (node:sqlite, WAL)', cookies.sqlite, 'appSqlite')]),
    ...(cookies.redis === undefined ? [] : [authenticated('redis', 'Same, 6 claims, Redis store (one redis-server on a unix socket)', cookies.redis, 'appRedis')]),
    ...(cookies.bearer === undefined ? [] : [{ id: 'bearer', title: 'Same, `Authorization: Bearer` JWT access token (6 claims, RS256), JwtBearer scheme', path: '/api/application-information', expected: 200, server: 'appBearer', app: { ...json, authorization: `Bearer ${cookies.bearer}` }, floor: { ...json, cookie: floorCookie(cookies.standard, floorSecret) } }]),
    ...(cookies.bearerCookie === undefined ? [] : [authenticated('bearercookie', 'Same, session cookie, on the app with the JwtBearer scheme', cookies.bearerCookie, 'appBearer')]),
    ...(cookies.apiKey === undefined ? [] : [{ id: 'apikey', title: 'Same, `Authorization: Bearer` API key (ApiKey scheme; provisioning on, embedded directory store; app with the JwtBearer scheme)', path: '/api/application-information', expected: 200, server: 'appKeys', app: { ...json, authorization: `Bearer ${cookies.apiKey}` }, floor: { ...json, cookie: floorCookie(cookies.standard, floorSecret) } }]),
    ...(cookies.keysCookie === undefined ? [] : [authenticated('keyscookie', 'Same, session cookie, on that app (provisioning and API keys on)', cookies.keysCookie, 'appKeys')]),
    ...(cookies.bearer === undefined || cookies.keysCookie === undefined ? [] : [{ id: 'keysbearer', title: 'Same, `Authorization: Bearer` JWT, on that app (provisioning and API keys on)', path: '/api/application-information', expected: 200, server: 'appKeys', app: { ...json, authorization: `Bearer ${cookies.bearer}` }, floor: { ...json, cookie: floorCookie(cookies.standard, floorSecret) } }]),
    { id: 'challenge', title: 'Anonymous `GET /` (challenge redirect)', path: '/', expected: 302, app: html, floor: html },
    { id: 'api401', title: 'Anonymous JSON `GET /api/application-information`', path: '/api/application-information', expected: 401, app: json, floor: json },
    { id: 'login', title: '`GET /Account/Login`', path: '/Account/Login', expected: 200, app: html, floor: html },
    { id: 'static', title: 'Static file `GET /css/site.css`', path: '/css/site.css', expected: 200, app: {}, floor: {} },
    { id: 'health', title: '`GET /health/live`', path: '/health/live', expected: 200, app: {}, floor: {} }
  ]
}

/** Whether this Node.js has node:sqlite (22.13 and later): the persisted embedded store is measured only there. */
export const hasSqlite = await import('node:sqlite').then((module) => typeof module.DatabaseSync === 'function', () => false)

/** One temporary directory per run for the embedded store's files (never the template's own .state). */
const STATE_ROOT = mkdtempSync(join(tmpdir(), 'bench-state-'))
let stateDirectories = 0

/**
 * Environment for the built app: Production (NODE_ENV unset), a configured key, nothing inherited
 * under ProjectTemplate__. The embedded store is in memory unless `persist` (then in a fresh
 * directory of its own under a temporary root); Redis when a connection string is given.
 */
export function appEnvironment (port, keyMaterial, redisConnectionString, persist = false) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('ProjectTemplate__') && name !== 'NODE_ENV'))
  const state = redisConnectionString === undefined ? {} : { ProjectTemplate__State__Provider: 'Redis', ProjectTemplate__State__Redis__ConnectionString: redisConnectionString }
  const embedded = { ProjectTemplate__State__Embedded__Persist: String(persist), ProjectTemplate__State__Embedded__DataDirectory: join(STATE_ROOT, `store-${++stateDirectories}`) }
  // BENCH_TELEMETRY=1: the app with metrics on (Prometheus on its own listener), for the before/after in docs/performance.md.
  const telemetry = process.env.BENCH_TELEMETRY === '1' ? { ProjectTemplate__Telemetry__Enabled: 'true', ProjectTemplate__Telemetry__Prometheus__Enabled: 'true', ProjectTemplate__Telemetry__Prometheus__Port: String(port + 1000) } : {}
  return { ...base, BENCH_TEMPLATE: TEMPLATE, HOST, PORT: String(port), ProjectTemplate__DataProtection__Keys__0: keyMaterial.toString('base64'), ...embedded, ...state, ...telemetry }
}

export function floorEnvironment (port, floorSecret) {
  return { ...process.env, HOST, PORT: String(port), FLOOR_SECRET: floorSecret.toString('base64'), STATIC_FILE: join(TEMPLATE, 'public', 'css', 'site.css') }
}
