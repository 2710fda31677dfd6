/**
 * Profiles the built app (or the floor) under one benchmark scenario with `node --cpu-prof` and
 * prints where the server's CPU time went: self time by function and by package, plus the
 * .cpuprofile path (open it in Chrome DevTools or speedscope for the flame graph).
 *
 *   node bench/profile.mjs [scenario id, default auth] [--seconds N] [--floor] [--no-build]
 *   scenario ids: auth large challenge api401 login static health (the Redis scenario: npm run bench);
 *   apikey keyscookie keysbearer: the app with provisioning, an ApiKey scheme and a JwtBearer scheme
 */
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, openSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { SourceMap } from 'node:module'
import { dirname, join, relative, resolve } from 'node:path'
import {
  BENCH_OUTPUT, bundleAppServer, appEnvironment, buildScenarios, cleanup, DIST, floorEnvironment, freePort, LARGE_CLAIMS, load, ROOT, signInCookie, STANDARD_CLAIMS, startServer, stopServer,
  KEYS_APP_SCENARIOS, keysAppCredentials, keysAppEnvironment, startBearerIssuer
} from './harness.mjs'

const args = process.argv.slice(2)
const floorMode = args.includes('--floor')
const secondsAt = args.indexOf('--seconds')
const seconds = secondsAt === -1 ? 8 : Number(args[secondsAt + 1])
const id = args.find((arg, index) => !arg.startsWith('--') && args[index - 1] !== '--seconds') ?? 'auth'

process.on('exit', cleanup)
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => { cleanup(); process.exit(130) })

if (!args.includes('--no-build')) {
  const build = spawnSync('npm', ['run', 'build', '--workspace', 'template', '--silent'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] })
  if (build.status !== 0) throw new Error('build failed')
}

let cookiePort = 0
const keyMaterial = randomBytes(32)
const floorSecret = randomBytes(32)
const directory = mkdtempSync(join(tmpdir(), 'bench-profile-'))
const port = await freePort()
// bench/app-server.mjs (bundled like dist/server.js): the built buildApp plus the bench-only sign-in route that makes real sessions.
const appServer = floorMode ? undefined : await bundleAppServer()
// The scenarios of issues 41 and 42 run on the app with provisioning, an ApiKey scheme and a JwtBearer scheme (as npm run bench does).
const keysApp = KEYS_APP_SCENARIOS.includes(id)
const issuer = keysApp ? await startBearerIssuer() : undefined
const server = await startServer({
  script: floorMode ? join(ROOT, 'bench', 'floor-server.mjs') : appServer,
  env: floorMode ? floorEnvironment(port, floorSecret) : keysApp ? keysAppEnvironment(appEnvironment(port, keyMaterial), issuer) : appEnvironment(port, keyMaterial),
  port,
  stdout: openSync('/dev/null', 'w'),
  nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${directory}`]
})
// The floor needs cookies of the app's length only: sign in at a throw-away app server then.
const cookieSource = floorMode ? await startServer({ script: await bundleAppServer(), env: appEnvironment(await freePort().then((p) => { cookiePort = p; return p }), keyMaterial), port: cookiePort, stdout: openSync('/dev/null', 'w') }) : undefined
const signInPort = floorMode ? cookiePort : port
const cookies = { standard: await signInCookie(signInPort, STANDARD_CLAIMS), large: await signInCookie(signInPort, LARGE_CLAIMS) }
if (keysApp && !floorMode) Object.assign(cookies, await keysAppCredentials(port, issuer))
if (cookieSource !== undefined) await stopServer(cookieSource.child)
const scenario = buildScenarios(cookies, floorSecret).find((candidate) => candidate.id === id)
if (scenario === undefined) throw new Error(`unknown scenario ${id}`)
const which = floorMode ? 'floor' : 'app'
const result = await load({ pid: server.child.pid, port, path: scenario.path, headers: scenario[which], expected: scenario.expected, duration: seconds, connections: 10 })
await stopServer(server.child)
await issuer?.close()
console.log(`${which} ${id}: ${result.rps.toFixed(0)} req/s, ${result.cpuUs.toFixed(0)} µs CPU/req, p50 ${result.p50} ms, p99 ${result.p99} ms, unexpected ${result.unexpected}`)

const file = readdirSync(directory).find((name) => name.endsWith('.cpuprofile'))
if (file === undefined) throw new Error('no profile written')
const profile = JSON.parse(readFileSync(join(directory, file), 'utf8'))
const interval = new Map()
for (let index = 0; index < profile.samples.length; index++) {
  const delta = profile.timeDeltas[index] ?? 0
  interval.set(profile.samples[index], (interval.get(profile.samples[index]) ?? 0) + delta)
}
// The app is a bundle (bench/output/app-server/, made like template/dist/server.js): map each frame
// back through its source map to the original file, so the package and function attribution
// survive bundling.
const BUNDLES = [BENCH_OUTPUT, DIST]
const sourceMaps = new Map()
function originalFrame ({ url, lineNumber, columnNumber }) {
  const file = url.replace(/^file:\/\//, '')
  if (!BUNDLES.some((bundle) => file.startsWith(`${bundle}/`))) return { file, lineNumber }
  if (!sourceMaps.has(file)) {
    let map
    try { map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8'))) } catch { map = undefined }
    sourceMaps.set(file, map)
  }
  const entry = sourceMaps.get(file)?.findEntry(lineNumber, columnNumber)
  if (entry === undefined || entry.originalSource === undefined) return { file, lineNumber }
  return { file: resolve(dirname(file), entry.originalSource.replace(/^file:\/\//, '')), lineNumber: entry.originalLine }
}
function packageOf (where) {
  if (where.startsWith('packages/core/')) return '@project-template/core'
  if (where.startsWith('template/')) return 'template (app code)'
  if (where.startsWith('bench/')) return 'bench'
  return where.startsWith('node:') ? 'node internals' : where
}
const byFunction = new Map()
const byPackage = new Map()
let total = 0
for (const node of profile.nodes) {
  const micros = interval.get(node.id) ?? 0
  total += micros
  const { functionName } = node.callFrame
  const { file, lineNumber } = node.callFrame.url === '' ? { file: '', lineNumber: 0 } : originalFrame(node.callFrame)
  const where = file === '' ? '' : file.startsWith('node:') ? file : relative(ROOT, file)
  const key = `${functionName || '(anonymous)'} ${where}${where === '' ? '' : `:${lineNumber + 1}`}`
  byFunction.set(key, (byFunction.get(key) ?? 0) + micros)
  const pkg = where === '' ? functionName : /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(where)?.[1] ?? packageOf(where)
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + micros)
}
// Self time per response as well as share: two runs (app and --floor) compare in µs directly.
const top = (map, count) => [...map].sort((a, b) => b[1] - a[1]).slice(0, count)
  .map(([name, micros]) => `${(100 * micros / total).toFixed(1).padStart(5)}% ${(micros / result.requests).toFixed(2).padStart(7)} µs/req  ${name}`).join('\n')
console.log(`\nself time by package (${(total / 1e6).toFixed(1)} s sampled, ${result.requests} responses):\n${top(byPackage, 15)}`)
console.log(`\nself time by function:\n${top(byFunction, Number(process.env.PROFILE_TOP ?? 45))}`)
console.log(`\nprofile: ${join(directory, file)}`)
cleanup()
