/**
 * `npx tsx bench/runtime-providers.ts`: what 1,000 providers from a provider source cost against
 * one (issue 28, item 5; docs/performance.md, "Providers added at runtime").
 *
 * - Challenge CPU: two apps in one process (1 runtime OpenID Connect provider, and 1,000 with 300
 *   verified e-mail domains), driven by `inject` in alternating rounds; each request is
 *   `/External/Challenge?provider=<scheme>` or `?email=<address>` (JSON: the 302 to the IdP), so
 *   the lookup by name and by domain is what differs. process.cpuUsage counts this process only.
 *   The providers share one local discovery document (a loopback server), each opened by its
 *   first challenge before the rounds.
 * - Memory and start-up: a fresh child process per count (1 and 1,000) builds the app, applies the
 *   source (ready), and reports RSS and heap after a forced GC, and the time to ready.
 *
 *   options: --rounds N (default 7)  --requests N per round (default 2000)
 */
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import { createLogger, loadConfiguration, type RuntimeProviderDefinition } from '@project-template/core'
import { buildApp } from '../template/src/app.ts'
import { TEMPLATE } from './harness.mjs'

const argument = (name: string, fallback: number): number => {
  const index = process.argv.indexOf(name)
  return index === -1 ? fallback : Number(process.argv[index + 1])
}
const ROUNDS = argument('--rounds', 7)
const REQUESTS = argument('--requests', 2000)
const DOMAINS = 300
const key = randomBytes(32).toString('base64')

/** A discovery document and an empty key set on loopback: enough for a challenge (no token is ever exchanged). */
async function discoveryServer (): Promise<{ server: Server, issuer: string }> {
  let issuer = ''
  const server = createServer((request, response) => {
    const body = request.url === '/.well-known/openid-configuration'
      ? { issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks`, response_types_supported: ['code'], subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['RS256'] }
      : { keys: [] }
    response.setHeader('content-type', 'application/json')
    response.end(JSON.stringify(body))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { server, issuer }
}

function definitions (count: number, issuer: string): RuntimeProviderDefinition[] {
  return Array.from({ length: count }, (_, index) => ({
    scheme: `Customer${index}`,
    settings: { Type: 'OpenIdConnect', Authority: issuer, ClientId: `client-${index}`, ClientSecret: `secret-${index}-${key.slice(0, 8)}` },
    domains: index < DOMAINS ? [{ name: `customer${index}.example`, verified: true }] : [],
    tenant: `tenant-${index}`
  }))
}

async function build (count: number, issuer: string): Promise<FastifyInstance> {
  const env: Record<string, string> = { ProjectTemplate__DataProtection__Keys__0: key, ProjectTemplate__State__Embedded__Persist: 'false', ProjectTemplate__RateLimits__Enabled: 'false', NODE_ENV: 'development' }
  const loaded = loadConfiguration({ env, contentRoot: TEMPLATE })
  if (loaded.errors.length > 0) throw new Error(loaded.errors.map((problem) => problem.message).join(' '))
  const sink = new Writable({ write (_chunk, _encoding, callback) { callback() } })
  const source = definitions(count, issuer)
  const app = await buildApp({ config: loaded.config, environmentName: loaded.environmentName, contentRoot: TEMPLATE, logger: createLogger('info', sink), providerSource: async () => source })
  await app.ready()
  return app
}

/** The target of request `index`: alternately by name and by domain, spread over the providers. */
function target (count: number, index: number): string {
  const which = (index * 7919) % count
  return index % 2 === 0 ? `provider=Customer${which}` : `email=user%40customer${which % Math.min(count, DOMAINS)}.example`
}

async function challenge (app: FastifyInstance, url: string): Promise<void> {
  const response = await app.inject({ url: `/External/Challenge?${url}`, headers: { host: 'localhost' } })
  if (response.statusCode !== 302) throw new Error(`${url} answered ${response.statusCode}`)
}

async function round (app: FastifyInstance, count: number): Promise<number> {
  const started = process.cpuUsage()
  for (let index = 0; index < REQUESTS; index++) await challenge(app, target(count, index))
  const used = process.cpuUsage(started)
  return (used.user + used.system) / REQUESTS
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number

if (process.argv.includes('--memory')) {
  // Child: one app with --memory N providers; prints one JSON line.
  const count = argument('--memory', 1)
  const { server, issuer } = await discoveryServer()
  const started = performance.now()
  const app = await build(count, issuer)
  const readyMs = performance.now() - started
  globalThis.gc?.()
  const memory = process.memoryUsage()
  console.log(JSON.stringify({ count, readyMs: Math.round(readyMs), rssMb: +(memory.rss / 1048576).toFixed(1), heapMb: +(memory.heapUsed / 1048576).toFixed(1), providers: app.authentication.providers.size }))
  await app.close()
  server.close()
} else {
  const { server, issuer } = await discoveryServer()
  const one = await build(1, issuer)
  const many = await build(1000, issuer)
  // Open every provider (first challenge loads its discovery), then warm up.
  for (let index = 0; index < 1000; index++) await challenge(many, `provider=Customer${index}`)
  await challenge(one, 'provider=Customer0')
  await round(one, 1)
  await round(many, 1000)
  const results: { one: number[], many: number[] } = { one: [], many: [] }
  for (let index = 0; index < ROUNDS; index++) {
    results.one.push(await round(one, 1))
    results.many.push(await round(many, 1000))
  }
  console.log(`CPU µs per challenge (inject, ${ROUNDS} rounds of ${REQUESTS}, half by name, half by e-mail domain):`)
  console.log(`  1 provider:      median ${median(results.one).toFixed(1)}  rounds ${results.one.map((value) => value.toFixed(1)).join(', ')}`)
  console.log(`  1,000 providers: median ${median(results.many).toFixed(1)}  rounds ${results.many.map((value) => value.toFixed(1)).join(', ')}`)
  console.log(`  ratio 1,000 / 1: ${(median(results.many) / median(results.one)).toFixed(3)}`)
  await one.close()
  await many.close()
  server.close()
  const self = fileURLToPath(import.meta.url)
  for (const count of [1, 1000]) {
    const child = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', self, '--memory', String(count)], { encoding: 'utf8', timeout: 120_000 })
    console.log(`memory, fresh process: ${child.stdout.trim() || child.stderr.trim().split('\n').slice(-3).join(' ')}`)
  }
}
