/**
 * Two builds of the app side by side, rounds interleaved (before, after, before, after, ...), for
 * a before/after of a change on a machine whose load moves: server CPU per response and req/s,
 * medians over rounds, and after/before per round.
 *
 *   node bench/compare-apps.mjs --before <bundle.js> [--after <bundle.js>] [--scenarios health,challenge,api401,login]
 *                               [--rounds N] [--duration S]
 *
 * A bundle is bench/app-server.mjs bundled as bundleAppServer() bundles it (for an older commit:
 * build that commit's core and bundle its bench/app-server.mjs with '@project-template/core'
 * aliased to that core's dist/index.js). Without --after, the current sources are bundled.
 * Servers on CPU 0, load on CPU 1 (harness.mjs), 10 connections, 1 s of warm-up per server.
 * With a scenario of the keys app among them (apikey, keyscookie, keysbearer), both servers are
 * the keys app (provisioning, an ApiKey scheme and a JwtBearer scheme, as npm run bench runs it)
 * for every scenario of the run.
 */
import { randomBytes } from 'node:crypto'
import { openSync } from 'node:fs'
import {
  appEnvironment, buildScenarios, bundleAppServer, cleanup, freePort, KEYS_APP_SCENARIOS, keysAppCredentials, keysAppEnvironment, load, option,
  signInCookie, startBearerIssuer, STANDARD_CLAIMS, LARGE_CLAIMS, startServer, stopServer
} from './harness.mjs'
const before = option('before', undefined)
if (before === undefined) throw new Error('--before <bundle.js> is required')
const rounds = Number(option('rounds', 5))
const duration = Number(option('duration', 2))
const scenarioIds = option('scenarios', 'health,challenge,api401,login').split(',').filter(Boolean)

process.on('exit', cleanup)
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => { cleanup(); process.exit(130) })

const after = option('after', undefined) ?? await bundleAppServer()
const keyMaterial = randomBytes(32)
const keysApp = scenarioIds.some((id) => KEYS_APP_SCENARIOS.includes(id))
const issuer = keysApp ? await startBearerIssuer() : undefined
const environmentOf = (port) => keysApp ? keysAppEnvironment(appEnvironment(port, keyMaterial), issuer) : appEnvironment(port, keyMaterial)
const servers = {}
for (const [name, script] of [['before', before], ['after', after]]) {
  const port = await freePort()
  servers[name] = { port, server: await startServer({ script, env: environmentOf(port), port, stdout: openSync('/dev/null', 'w') }) }
}
// Each server signs its own user in: a session lives in that server's embedded store, so a cookie
// from one is unknown to the other (the authenticated scenarios would answer 401).
const floorSecret = randomBytes(32)
const headersOf = {}
for (const name of ['before', 'after']) {
  const { port } = servers[name]
  const cookies = { standard: await signInCookie(port, STANDARD_CLAIMS), large: await signInCookie(port, LARGE_CLAIMS) }
  if (keysApp) Object.assign(cookies, await keysAppCredentials(port, issuer))
  headersOf[name] = new Map(buildScenarios(cookies, floorSecret).map((scenario) => [scenario.id, scenario.app]))
}
const scenarios = buildScenarios(keysApp ? { standard: '', large: '', keysCookie: '', apiKey: '', bearer: '' } : { standard: '', large: '' }, floorSecret).filter((scenario) => scenarioIds.includes(scenario.id))
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]

const rows = []
for (const scenario of scenarios) {
  const measured = { before: [], after: [] }
  for (const name of ['before', 'after']) {
    const { port, server } = servers[name]
    await load({ pid: server.child.pid, port, path: scenario.path, headers: headersOf[name].get(scenario.id), expected: scenario.expected, duration: 1, connections: 10 })
  }
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 === 0 ? ['before', 'after'] : ['after', 'before']) {
      const { port, server } = servers[name]
      const result = await load({ pid: server.child.pid, port, path: scenario.path, headers: headersOf[name].get(scenario.id), expected: scenario.expected, duration, connections: 10 })
      if (result.unexpected > 0) throw new Error(`${scenario.id} ${name}: ${result.unexpected} unexpected answers`)
      measured[name].push(result)
    }
  }
  const cpu = (name) => median(measured[name].map((result) => result.cpuUs))
  const ratios = measured.after.map((result, index) => result.cpuUs / measured.before[index].cpuUs)
  rows.push(`| ${scenario.title} | ${cpu('before').toFixed(1)} | ${cpu('after').toFixed(1)} | ${median(ratios).toFixed(2)} (${ratios.map((ratio) => ratio.toFixed(2)).join(', ')}) | ` +
    `${Math.round(median(measured.before.map((r) => r.rps)))} / ${Math.round(median(measured.after.map((r) => r.rps)))} |`)
  console.error(rows.at(-1))
}
for (const { server } of Object.values(servers)) await stopServer(server.child)
await issuer?.close()
console.log(`\nServer CPU µs per response, ${rounds} interleaved round(s) of ${duration} s, Node ${process.version}\n`)
console.log('| Scenario | Before | After | After/before CPU (median, per round) | req/s before / after |')
console.log('|---|---:|---:|---|---:|')
for (const row of rows) console.log(row)
