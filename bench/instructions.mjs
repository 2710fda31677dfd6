/**
 * Instructions per response, counted by valgrind's callgrind: a measure of the request path that
 * does not move with the machine's load (CPU time and req/s do, on a shared machine). Each server
 * (floor, floor + posture, app; the same ones `npm run bench` runs) is started under
 * `valgrind --tool=callgrind`; for each scenario it answers a warm-up (so V8 has optimized the
 * path), then its counters are zeroed, it answers a fixed number of requests from autocannon (10
 * connections, as in the bench), and the count is dumped. Everything the process executes in that
 * window is counted: the JavaScript, V8 (GC, compilation threads), libuv and the kernel-call
 * wrappers (not the kernel itself).
 *
 *   node bench/instructions.mjs [--requests N] [--warmup N] [--rounds N] [--scenarios health,...]
 *                               [--servers app,posture,floor,headers,log] [--app-script bundle.js] [--no-build]
 *   defaults: 3,000 requests of warm-up per scenario, then 2 rounds of 2,000 counted; scenarios
 *   health challenge api401 login auth; servers app, posture (floor + posture), floor. `headers`
 *   and `log` are the floor with one half of the posture each (FLOOR_POSTURE=headers|log).
 *
 * Slow (valgrind runs node 50-100 times slower): about a minute per server and scenario. Needs
 * Debian's valgrind. Every child is killed on exit; every wait is bounded.
 */
import { spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import autocannon from 'autocannon'
import {
  appEnvironment, buildScenarios, bundleAppServer, children, cleanup, floorEnvironment, freePort, get, HOST, option, ROOT, SESSION_COOKIE, signInCookie, STANDARD_CLAIMS, LARGE_CLAIMS
} from './harness.mjs'

const START_TIMEOUT_MS = 600_000

const requests = Number(option('requests', 2000))
const warmup = Number(option('warmup', 3000))
const scenarioIds = option('scenarios', 'health,challenge,api401,login,auth').split(',').filter(Boolean)
const serverKinds = option('servers', 'app,posture,floor').split(',').filter(Boolean)
const rounds = Number(option('rounds', 2))
/** Another app bundle to count instead of bench/app-server.mjs's (an older build, for a before/after). */
const appScript = option('app-script', undefined)
/** FLOOR_POSTURE of each floor server (bench/floor-server.mjs): the floor, the reference, and its two halves. */
const FLOOR_POSTURES = { floor: '0', posture: '1', headers: 'headers', log: 'log' }
if (!(requests > 0) || !(warmup >= 0) || !(rounds > 0)) throw new Error('--requests, --warmup and --rounds need numbers')

const directory = mkdtempSync(join(tmpdir(), 'bench-callgrind-'))
const VGDB_PREFIX = join(directory, 'vgdb')
process.on('exit', () => { cleanup(); rmSync(directory, { recursive: true, force: true }) })
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => { cleanup(); process.exit(130) })

if (spawnSync('valgrind', ['--version']).status !== 0) throw new Error('valgrind is not installed (Debian: apt-get install valgrind)')
if (!process.argv.includes('--no-build')) {
  const build = spawnSync('npm', ['run', 'build:core', '--silent'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] })
  if (build.status !== 0) throw new Error('build failed')
}


/** Starts `script` under callgrind and waits (bounded) until /health/live answers 200. */
async function startUnderCallgrind (script, env, port) {
  const args = ['--tool=callgrind', '--smc-check=all-non-file', `--vgdb-prefix=${VGDB_PREFIX}`, `--callgrind-out-file=${join(directory, 'callgrind.%p')}`, process.execPath, script]
  const child = spawn('valgrind', args, { env, stdio: ['ignore', openSync('/dev/null', 'w'), 'pipe'], cwd: ROOT })
  children.add(child)
  let output = ''
  child.stderr.on('data', (chunk) => { if (output.length < 20_000) output += chunk.toString('utf8') })
  const deadline = performance.now() + START_TIMEOUT_MS
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode} under valgrind:\n${output}`)
    try {
      if ((await get(port, '/health/live')).status === 200) return child
    } catch { /* not listening yet */ }
    await sleep(250)
  }
  throw new Error(`${script} did not answer under valgrind within ${START_TIMEOUT_MS} ms:\n${output}`)
}

function control (pid, ...args) {
  // Always with the pid: without one callgrind_control acts on every callgrind run on the machine.
  // vgdb names its pipes after $USER and $HOST: the servers' environment sets HOST, so this must too.
  const result = spawnSync('callgrind_control', [`--vgdb-prefix=${VGDB_PREFIX}`, ...args, String(pid)], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, HOST } })
  // It exits 0 even when it found no such run: its "OK." is the answer.
  if (result.status !== 0 || !result.stdout.includes('OK.')) throw new Error(`callgrind_control ${args.join(' ')} ${pid} failed: ${result.stderr}${result.stdout}`)
}

/** Total Ir of dump number `number` of `pid` (callgrind writes it a moment after answering). */
async function dumpTotal (pid, number) {
  const file = join(directory, `callgrind.${pid}.${number}`)
  const deadline = performance.now() + 120_000
  while (performance.now() < deadline) {
    const totals = existsSync(file) ? /^totals: (\d+)/m.exec(readFileSync(file, 'utf8')) : null
    if (totals !== null) return Number(totals[1])
    await sleep(200)
  }
  throw new Error(`callgrind wrote no dump ${file}`)
}

async function fire (port, scenario, headers, amount) {
  const result = await autocannon({ url: `http://${HOST}:${port}${scenario.path}`, headers, amount, connections: 10, pipelining: 1, timeout: 60 })
  let unexpected = result.errors + result.timeouts
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) if (Number(code) !== scenario.expected) unexpected += Number(count)
  if (unexpected > 0) throw new Error(`${scenario.id}: ${unexpected} unexpected answers (${JSON.stringify(result.statusCodeStats)})`)
  return result.requests.total
}

const keyMaterial = randomBytes(32)
const floorSecret = randomBytes(32)
const appServer = appScript ?? await bundleAppServer()
const results = new Map()
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]
let cookies
for (const kind of serverKinds) {
  const port = await freePort()
  const posture = FLOOR_POSTURES[kind]
  if (kind !== 'app' && posture === undefined) throw new Error(`unknown server ${kind}`)
  const env = kind === 'app' ? appEnvironment(port, keyMaterial) : { ...floorEnvironment(port, floorSecret), FLOOR_POSTURE: posture }
  const started = performance.now()
  const child = await startUnderCallgrind(kind === 'app' ? appServer : join(ROOT, 'bench', 'floor-server.mjs'), env, port)
  console.error(`${kind}: started under callgrind in ${((performance.now() - started) / 1000).toFixed(0)} s`)
  if (cookies === undefined && !scenarioIds.some((id) => id === 'auth' || id === 'large')) {
    cookies = { standard: `${SESSION_COOKIE}=unused`, large: `${SESSION_COOKIE}=unused` }
  } else if (cookies === undefined) {
    // Real session cookies from the app (the floor only needs their length): sign in at the app.
    const cookiePort = kind === 'app' ? port : await freePort()
    const source = kind === 'app' ? undefined : await startUnderCallgrind(appServer, appEnvironment(cookiePort, keyMaterial), cookiePort)
    cookies = { standard: await signInCookie(cookiePort, STANDARD_CLAIMS), large: await signInCookie(cookiePort, LARGE_CLAIMS) }
    if (source !== undefined) { source.kill('SIGKILL'); children.delete(source) }
  }
  const scenarios = scenarioIds.map((id) => {
    const scenario = buildScenarios(cookies, floorSecret).find((candidate) => candidate.id === id)
    if (scenario === undefined) throw new Error(`unknown scenario ${id}`)
    return { scenario, headers: scenario[kind === 'app' ? 'app' : 'floor'] }
  })
  // Every scenario warmed up before any is counted: V8 optimizes (on its own threads, which
  // callgrind counts too) while the first requests of a path run.
  for (const { scenario, headers } of scenarios) if (warmup > 0) await fire(port, scenario, headers, warmup)
  let dumps = 0
  for (let round = 0; round < rounds; round++) {
    for (const { scenario, headers } of scenarios) {
      control(child.pid, '--zero')
      const answered = await fire(port, scenario, headers, requests)
      control(child.pid, `--dump=${scenario.id}`)
      const perResponse = await dumpTotal(child.pid, ++dumps) / answered
      const key = `${kind} ${scenario.id}`
      results.set(key, [...(results.get(key) ?? []), perResponse])
      console.error(`${kind} ${scenario.id}: ${Math.round(perResponse).toLocaleString('en-US')} instructions per response (${answered} responses)`)
    }
  }
  child.kill('SIGKILL')
  children.delete(child)
}

const thousands = (value) => `${(value / 1000).toFixed(1)}k`
const cell = (kind, id) => {
  const values = results.get(`${kind} ${id}`)
  if (values === undefined) return '–'
  return values.length === 1 ? thousands(values[0]) : `${thousands(median(values))} (${values.map(thousands).join(', ')})`
}
console.log(`\nInstructions per response (callgrind; ${warmup} requests of warm-up per scenario, then ${rounds} round(s) of ${requests}; median (rounds); Node ${process.version})\n`)
console.log(`| Scenario | ${serverKinds.join(' | ')} |`)
console.log(`|---|${serverKinds.map(() => '---:').join('|')}|`)
for (const id of scenarioIds) console.log(`| ${id} | ${serverKinds.map((kind) => cell(kind, id)).join(' | ')} |`)
