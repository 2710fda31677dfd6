/**
 * `npx tsx bench/telemetry-overhead.ts`: the CPU time one authenticated request costs with
 * telemetry off and with metrics on (Prometheus on its own listener, nothing scraping), two apps in
 * one process driven by `inject` in alternating rounds, so that drift and a busy machine affect
 * both alike. process.cpuUsage counts this process's own CPU only, which a shared machine disturbs
 * far less than req/s. No HTTP parsing (inject): the absolute overhead in µs is what carries over
 * to `npm run bench`; the ratio here is larger than there. docs/performance.md, "Telemetry".
 *
 *   options: --rounds N (default 7)  --requests N per round (default 4000)
 */
import { randomBytes } from 'node:crypto'
import { Writable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { createLogger, loadConfiguration } from '@project-template/core'
import { buildApp } from '../template/src/app.ts'
import { STANDARD_CLAIMS, TEMPLATE } from './harness.mjs'

const argument = (name: string, fallback: number): number => {
  const index = process.argv.indexOf(name)
  return index === -1 ? fallback : Number(process.argv[index + 1])
}
const ROUNDS = argument('--rounds', 7)
const REQUESTS = argument('--requests', 4000)
const key = randomBytes(32).toString('base64')

async function build (telemetry: boolean): Promise<{ app: FastifyInstance, cookie: string }> {
  const env: Record<string, string> = {
    ProjectTemplate__DataProtection__Keys__0: key,
    ProjectTemplate__State__Embedded__Persist: 'false',
    ...(telemetry ? { ProjectTemplate__Telemetry__Enabled: 'true', ProjectTemplate__Telemetry__Prometheus__Enabled: 'true', ProjectTemplate__Telemetry__Prometheus__Port: '0', ProjectTemplate__Telemetry__Prometheus__AllowAnonymous: 'true' } : {})
  }
  const loaded = loadConfiguration({ env, contentRoot: TEMPLATE })
  if (loaded.errors.length > 0) throw new Error(loaded.errors.map((problem) => problem.message).join(' '))
  const sink = new Writable({ write (_chunk, _encoding, callback) { callback() } })
  const app = await buildApp({ config: loaded.config, environmentName: loaded.environmentName, contentRoot: TEMPLATE, logger: createLogger('info', sink) })
  app.post('/bench-only/sign-in', { config: { allowAnonymous: true } }, async (request, reply) => {
    await reply.signIn({ scheme: 'Bench', claims: (request.body as { claims: [] }).claims })
    return reply.code(204).send()
  })
  await app.ready()
  const response = await app.inject({ method: 'POST', url: '/bench-only/sign-in', payload: { claims: STANDARD_CLAIMS } })
  const cookie = response.cookies.filter((entry) => entry.value !== '').map((entry) => `${entry.name}=${entry.value}`).join('; ')
  return { app, cookie }
}

async function round ({ app, cookie }: { app: FastifyInstance, cookie: string }): Promise<number> {
  const started = process.cpuUsage()
  for (let index = 0; index < REQUESTS; index++) {
    const response = await app.inject({ url: '/api/application-information', headers: { cookie, host: 'localhost' } })
    if (response.statusCode !== 200) throw new Error(`answered ${response.statusCode}`)
  }
  const used = process.cpuUsage(started)
  return (used.user + used.system) / REQUESTS
}

const off = await build(false)
const on = await build(true)
await round(off)
await round(on)
const results: { off: number[], on: number[] } = { off: [], on: [] }
for (let index = 0; index < ROUNDS; index++) {
  results.off.push(await round(off))
  results.on.push(await round(on))
}
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number
console.log(`CPU µs per authenticated request (inject, ${ROUNDS} rounds of ${REQUESTS}):`)
console.log(`  off: median ${median(results.off).toFixed(1)}  rounds ${results.off.map((value) => value.toFixed(1)).join(', ')}`)
console.log(`  on:  median ${median(results.on).toFixed(1)}  rounds ${results.on.map((value) => value.toFixed(1)).join(', ')}`)
console.log(`  difference: ${(median(results.on) - median(results.off)).toFixed(1)} µs (${((median(results.on) / median(results.off) - 1) * 100).toFixed(1)} %)`)
await off.app.close()
await on.app.close()
