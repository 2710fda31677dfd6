/**
 * What a burst of requests costs after the server sat idle, with V8's memory reducer on (Node's
 * default) and off (`--no-memory-reducer`, what the bench's servers run with: harness.mjs
 * `SERVER_NODE_ARGS`). The default app, the session-cookie request of the `auth` scenario:
 *
 *   node bench/after-idle.mjs [--idle S (150)] [--duration S (2)]
 *
 * For each setting, one app process: two loads (warm), an idle pause, then three loads straight
 * after it. Prints req/s and server CPU µs per request of each load, and the process's RSS before
 * and after the pause (what the reducer gives back). Servers on CPU 0, load on
 * CPU 1 (harness.mjs), 10 connections, loopback only; every wait is bounded.
 */
import { randomBytes } from 'node:crypto'
import { openSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { appEnvironment, bundleAppServer, cleanup, freePort, load, option, rssKiB, signInCookie, STANDARD_CLAIMS, startServer, stopServer } from './harness.mjs'

const idleSeconds = Number(option('idle', 150))
const duration = Number(option('duration', 2))
if (!(idleSeconds >= 0 && idleSeconds <= 900) || !(duration > 0 && duration <= 30)) throw new Error('--idle 0-900 and --duration 1-30 seconds')

process.on('exit', cleanup)
const script = await bundleAppServer()
const rows = []
for (const [setting, nodeArgs] of [['memory reducer on (Node default)', ['--memory-reducer']], ['memory reducer off (--no-memory-reducer)', ['--no-memory-reducer']]]) {
  const port = await freePort()
  const server = await startServer({ script, env: appEnvironment(port, randomBytes(32)), port, stdout: openSync('/dev/null', 'w'), nodeArgs })
  const cookie = await signInCookie(port, STANDARD_CLAIMS)
  const target = { pid: server.child.pid, port, path: '/api/application-information', headers: { accept: 'application/json', cookie }, expected: 200, duration, connections: 10 }
  const measured = []
  const rss = {}
  for (const phase of ['warm-up', 'warm', 'idle', 'after idle, 1st', 'after idle, 2nd', 'after idle, 3rd']) {
    if (phase === 'idle') {
      rss.before = rssKiB(server.child.pid).rss
      await sleep(idleSeconds * 1000)
      rss.after = rssKiB(server.child.pid).rss
      continue
    }
    const result = await load(target)
    if (result.unexpected > 0) throw new Error(`${setting}, ${phase}: ${result.unexpected} unexpected responses ${JSON.stringify(result.statuses)}`)
    measured.push({ phase, ...result })
    console.error(`${setting}: ${phase.padEnd(16)} ${result.rps.toFixed(0).padStart(6)} req/s  ${result.cpuUs.toFixed(1)} µs/req`)
  }
  await stopServer(server.child)
  rows.push({ setting, measured, rss })
}
console.log(`\nAfter ${idleSeconds} s idle, ${duration} s loads, session-cookie \`GET /api/application-information\` on the default app (${process.version}):\n`)
console.log('| Setting | Warm: req/s, µs CPU/req | After idle 1st | 2nd | 3rd | RSS before / after the idle pause |')
console.log('|---|---:|---:|---:|---:|---:|')
for (const { setting, measured, rss } of rows) {
  const cell = (phase) => { const r = measured.find((m) => m.phase === phase); return `${Math.round(r.rps).toLocaleString('en-US')}, ${r.cpuUs.toFixed(1)}` }
  console.log(`| ${setting} | ${cell('warm')} | ${cell('after idle, 1st')} | ${cell('after idle, 2nd')} | ${cell('after idle, 3rd')} | ${(rss.before / 1024).toFixed(1)} / ${(rss.after / 1024).toFixed(1)} MB |`)
}
