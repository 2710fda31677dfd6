/**
 * `npx tsx bench/provisioning.ts [--quick] [--rounds N] [--duration S] [--connections N] [--app-server bundle.js]`:
 * SCIM provisioning through real HTTP (issue 41, "Speed and memory"), run by `npm run bench` after
 * its own scenarios. The bench app (bench/app-server.mjs, bundled like dist/server.js) with
 * provisioning on and one connection, against the embedded directory store (as shipped: SQLite
 * where node:sqlite exists, else memory) and against PostgreSQL (Debian's, started on loopback in
 * a temporary directory by packages/core/test/helpers/postgres-server.ts, as the postgres user;
 * skipped, saying so, when it is not installed). For each store:
 *
 * 1. users are created through `POST /Users` (autocannon, a bounded number of requests) up to the
 *    small size, and the first of them linked to sign-in identities (a bench-only route, what a
 *    first sign-in does), so that a deactivation has doors to close;
 * 2. at that size, rounds of `GET /Users?filter=userName eq "..."` (a different user each request,
 *    every answer checked to hold exactly that one) and of `PATCH /Users/<id>` with
 *    `replace active`, over the linked users, deactivating them all then reactivating them all so
 *    that the loop is steady;
 * 3. users are created up to the large size (10,000; 1,000 with --quick) and step 2 runs again.
 *
 * Every request carries the connection's token. Recorded: requests/s, latency p50/p99, CPU per
 * request of the app process and of PostgreSQL (its postmaster and every backend). The `eq`
 * listing's CPU per request at the large size over the small size shows whether a request scans
 * every user (a scan grows with the users; an index look-up does not): asserted ≤ 1.5× in a full
 * run, reported with --quick. Exit 0; 1 when a request answered unexpectedly; 3 when only the
 * budget was missed. Prints a Markdown table. Only loopback; every load and wait is bounded.
 */
import { randomBytes } from 'node:crypto'
import { openSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { PostgresServer, postgresBinaries } from '../packages/core/test/helpers/postgres-server.ts'
import {
  appEnvironment, bundleAppServer, cleanup, cpuMs, freePort, HOST, Latencies, provisioningEnvironment, requestJson, startServer, stopServer
} from './harness.mjs'

const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User'
const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp'
const CONNECTION = 'Bench'
/** Most linked users the PATCH loop goes through. */
const LINKED = 1_000
/** The bound of the ratio large/small of the `eq` listing's CPU per request (a scan of every user grows about 10×). */
const FLAT_LIMIT = 1.5

function option (name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`)
  if (at === -1) return fallback
  const value = Number(process.argv[at + 1])
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} needs a positive number`)
  return Math.floor(value)
}
const quick = process.argv.includes('--quick')
const SIZES = quick ? [100, 1_000] as const : [1_000, 10_000] as const
const rounds = option('rounds', quick ? 1 : 3)
const duration = option('duration', quick ? 1 : 2)
const connections = option('connections', 10)
const appServerAt = process.argv.indexOf('--app-server')
/** Requests of each kind sent before the first size is measured. */
const WARMUP = quick ? 200 : 1_000

interface Measured {
  readonly store: string
  readonly users: number
  readonly operation: string
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly appCpuUs: number
  readonly postgresCpuUs: number
  readonly requests: number
  readonly unexpected: number
}

const median = (values: number[]): number => {
  const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b)
  if (sorted.length === 0) return Number.NaN
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle] as number : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}

/** User + system CPU of a process and of the children it has reaped, in ms (/proc/<pid>/stat, 10 ms ticks). */
function treeCpuMs (pid: number, withChildren: boolean): number {
  const fields = (stat: string): string[] => stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const own = fields(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14])
  if (withChildren) {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue
      try {
        const child = fields(readFileSync(`/proc/${entry}/stat`, 'utf8'))
        if (Number(child[1]) === pid) ticks += Number(child[11]) + Number(child[12]) + Number(child[13]) + Number(child[14])
      } catch { /* exited meanwhile: its time is in the parent's reaped children */ }
    }
  }
  return ticks * 10
}

interface Target {
  readonly pid: number
  readonly port: number
  readonly token: string
  readonly postgresPid: number | undefined
}

type Request = autocannon.Request & { setupRequest: (request: autocannon.Request) => autocannon.Request, onResponse: (status: number, body: string) => void }

/** One autocannon run of `request` (bounded by `amount` or `seconds`), with the servers' CPU per response. */
async function run (target: Target, request: Request, bound: { amount: number } | { seconds: number }): Promise<Omit<Measured, 'store' | 'users' | 'operation'>> {
  const latencies = new Latencies()
  const appBefore = cpuMs(target.pid)
  const postgresBefore = target.postgresPid === undefined ? 0 : treeCpuMs(target.postgresPid, true)
  const instance = autocannon({
    url: `http://${HOST}:${target.port}`,
    connections,
    pipelining: 1,
    timeout: 10,
    ...('amount' in bound ? { amount: bound.amount } : { duration: bound.seconds }),
    requests: [request]
  })
  instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => { latencies.record(responseTime) })
  const result = await instance
  const total = result.requests.total
  const appCpu = cpuMs(target.pid) - appBefore
  const postgresCpu = target.postgresPid === undefined ? Number.NaN : treeCpuMs(target.postgresPid, true) - postgresBefore
  return {
    rps: total / result.duration,
    p50: latencies.percentile(0.5),
    p99: latencies.percentile(0.99),
    appCpuUs: total > 0 ? appCpu * 1000 / total : Number.NaN,
    postgresCpuUs: total > 0 ? postgresCpu * 1000 / total : Number.NaN,
    requests: total,
    unexpected: result.errors + result.timeouts + result.non2xx
  }
}

const scimHeaders = (target: Target): Record<string, string> => ({ authorization: `Bearer ${target.token}`, accept: 'application/scim+json', 'content-type': 'application/scim+json' })
const userName = (index: number): string => `user${index}@customer.example`

/** Creates users `from` to `to - 1` through `POST /Users`; their ids by index in `ids`. */
async function seed (target: Target, ids: string[], from: number, to: number): Promise<Omit<Measured, 'store' | 'users' | 'operation'>> {
  let next = from
  const request: Request = {
    method: 'POST',
    path: `/scim/v2/${CONNECTION}/Users`,
    headers: scimHeaders(target),
    setupRequest: (current) => {
      const index = next++
      return {
        ...current,
        body: JSON.stringify({
          schemas: [USER_SCHEMA], userName: userName(index), externalId: `ext-${index}`, active: true,
          name: { givenName: 'User', familyName: String(index) }, emails: [{ value: userName(index), type: 'work', primary: true }]
        })
      }
    },
    onResponse: (status, body) => {
      if (status !== 201) return
      const created = JSON.parse(body) as { id: string, userName: string }
      ids[Number(/^user(\d+)@/.exec(created.userName)?.[1])] = created.id
    }
  }
  const result = await run(target, request, { amount: to - from })
  // autocannon may build a request it never sends: the ones missing are created one by one.
  for (let index = from; index < to; index++) {
    if (ids[index] !== undefined) continue
    const response = await requestJson(target.port, 'POST', `/scim/v2/${CONNECTION}/Users`, {
      headers: scimHeaders(target), body: { schemas: [USER_SCHEMA], userName: userName(index), externalId: `ext-${index}`, active: true }
    })
    if (response.status !== 201) return { ...result, unexpected: result.unexpected + 1 }
    ids[index] = (response.body as { id: string }).id
  }
  return result
}

/** Rounds of the `eq` listing and of the PATCH loop at the current size. */
async function measure (target: Target, ids: readonly string[], users: number, linked: readonly string[], cursor: { value: number }): Promise<{ list: Array<Omit<Measured, 'store' | 'users' | 'operation'>>, patch: Array<Omit<Measured, 'store' | 'users' | 'operation'>> }> {
  const list = []
  const patch = []
  let lookups = 0
  let wrong = 0
  const listRequest: Request = {
    method: 'GET',
    headers: { authorization: `Bearer ${target.token}`, accept: 'application/scim+json' },
    setupRequest: (current) => {
      // A different user each request, spread over every user created so far.
      const index = (lookups++ * 7919) % users
      return { ...current, path: `/scim/v2/${CONNECTION}/Users?filter=${encodeURIComponent(`userName eq "${userName(index)}"`)}` }
    },
    onResponse: (status, body) => { if (status !== 200 || !body.includes('"totalResults":1,')) wrong++ }
  }
  const patchRequest: Request = {
    method: 'PATCH',
    headers: scimHeaders(target),
    setupRequest: (current) => {
      // Every linked user deactivated in turn, then every one reactivated: a steady loop.
      const step = cursor.value++
      const id = linked[step % linked.length] as string
      const active = Math.floor(step / linked.length) % 2 === 1
      return { ...current, path: `/scim/v2/${CONNECTION}/Users/${id}`, body: JSON.stringify({ schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', path: 'active', value: active }] }) }
    },
    onResponse: (status) => { if (status !== 200) wrong++ }
  }
  if (ids.length < users) throw new Error('fewer users than measured')
  if (cursor.value === 0) {
    // Before the first size only: a bounded warm-up of both requests, so that the first size is not measured cold.
    await run(target, listRequest, { amount: WARMUP })
    await run(target, patchRequest, { amount: WARMUP })
    wrong = 0
  }
  for (let round = 0; round < rounds; round++) {
    const listed = await run(target, listRequest, { seconds: duration })
    list.push({ ...listed, unexpected: listed.unexpected + wrong })
    wrong = 0
    const patched = await run(target, patchRequest, { seconds: duration })
    patch.push({ ...patched, unexpected: patched.unexpected + wrong })
    wrong = 0
    console.error(`provisioning ${users} users round ${round + 1}: eq listing ${listed.rps.toFixed(0)} req/s ${listed.appCpuUs.toFixed(0)} µs/req, PATCH ${patched.rps.toFixed(0)} req/s ${patched.appCpuUs.toFixed(0)} µs/req`)
  }
  return { list, patch }
}

const summary = (store: string, users: number, operation: string, rounds: Array<Omit<Measured, 'store' | 'users' | 'operation'>>): Measured => ({
  store,
  users,
  operation,
  rps: median(rounds.map((r) => r.rps)),
  p50: median(rounds.map((r) => r.p50)),
  p99: median(rounds.map((r) => r.p99)),
  appCpuUs: median(rounds.map((r) => r.appCpuUs)),
  postgresCpuUs: median(rounds.map((r) => r.postgresCpuUs)),
  requests: rounds.reduce((sum, r) => sum + r.requests, 0),
  unexpected: rounds.reduce((sum, r) => sum + r.unexpected, 0)
})

/** The whole sequence against one store: start the app, seed, link, measure at both sizes, stop. */
async function scenario (store: string, appServer: string, env: Record<string, string>, postgresPid: number | undefined): Promise<Measured[]> {
  const port = Number(env.PORT)
  const server = await startServer({ script: appServer, env, port, stdout: openSync('/dev/null', 'w') })
  try {
    const issued = await requestJson(port, 'POST', '/bench-only/connection-token', { body: { connection: CONNECTION } })
    if (issued.status !== 200) throw new Error(`connection token: ${issued.status}`)
    const target: Target = { pid: server.child.pid as number, port, token: (issued.body as { token: string }).token, postgresPid }
    const ids: string[] = []
    const rows: Measured[] = []
    const cursor = { value: 0 }
    let created = 0
    let linked: string[] = []
    for (const users of SIZES) {
      rows.push(summary(store, users, `create (\`POST /Users\`, ${created.toLocaleString('en-US')} → ${users.toLocaleString('en-US')})`, [await seed(target, ids, created, users)]))
      created = users
      if (linked.length === 0) {
        linked = ids.slice(0, Math.min(LINKED, users))
        for (let start = 0; start < linked.length; start += 500) {
          const response = await requestJson(port, 'POST', '/bench-only/link-users', { body: { connection: CONNECTION, ids: linked.slice(start, start + 500) } })
          if (response.status !== 200) throw new Error(`linking users: ${response.status}`)
        }
      }
      const { list, patch } = await measure(target, ids, users, linked, cursor)
      rows.push(summary(store, users, '`userName eq` listing (`GET /Users?filter=`)', list))
      rows.push(summary(store, users, `deactivation / reactivation (\`PATCH /Users/<id>\` \`active\`, ${linked.length.toLocaleString('en-US')} linked users)`, patch))
    }
    return rows
  } finally {
    await stopServer(server.child)
  }
}

const f = (value: number, digits: number): string => Number.isFinite(value) ? value.toFixed(digits) : 'n/a'
const thousands = (value: number): string => Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a'

async function main (): Promise<number> {
  const appServer = appServerAt === -1 ? await bundleAppServer() : process.argv[appServerAt + 1] as string
  const keyMaterial = randomBytes(32)
  const rows: Measured[] = []
  const skipped: string[] = []
  const embeddedPort = await freePort()
  const embedded = provisioningEnvironment(appEnvironment(embeddedPort, keyMaterial, undefined, true))
  const hasSqlite = await import('node:sqlite').then(() => true, () => false)
  rows.push(...await scenario(hasSqlite ? 'Embedded (SQLite, as shipped)' : `Embedded (in memory: no node:sqlite on Node ${process.version})`, appServer, embedded, undefined))
  if (postgresBinaries() === undefined) {
    skipped.push('PostgreSQL: not installed (npm run test:setup installs Debian\'s postgresql)')
  } else {
    const postgres = new PostgresServer()
    try {
      await postgres.start()
      const connectionString = await postgres.createDatabase('bench_provisioning')
      const postmaster = Number(readFileSync(join(postgres.directory, 'data', 'postmaster.pid'), 'utf8').split('\n')[0])
      const port = await freePort()
      rows.push(...await scenario('PostgreSQL (pg, loopback, fsync off)', appServer, provisioningEnvironment(appEnvironment(port, keyMaterial, undefined, false), { postgres: connectionString }), postmaster))
    } finally {
      await postgres.dispose()
    }
  }

  const listing = (store: string, users: number): Measured | undefined => rows.find((row) => row.store === store && row.users === users && row.operation.startsWith('`userName eq`'))
  const flat = [...new Set(rows.map((row) => row.store))].map((store) => {
    const small = listing(store, SIZES[0]) as Measured
    const large = listing(store, SIZES[1]) as Measured
    const cpu = (row: Measured): number => row.appCpuUs + (Number.isFinite(row.postgresCpuUs) ? row.postgresCpuUs : 0)
    const value = cpu(large) / cpu(small)
    return { store, small: cpu(small), large: cpu(large), value, pass: value <= FLAT_LIMIT }
  })

  const lines: string[] = []
  lines.push(`SCIM provisioning through HTTP (\`bench/provisioning.ts\`${quick ? ', --quick' : ''}; issue 41): one connection, its token on every request, ${connections} connections, ` +
    `${rounds} round(s) of ${duration} s per operation and size, Node ${process.version}; the app as in the rows above (bundle, Production, log level info). ` +
    'CPU per request: the app process, and PostgreSQL\'s postmaster and backends (/proc, 10 ms ticks). Creates are one bounded run each.')
  lines.push('')
  lines.push('| Directory store | Users | Operation | req/s | p50 / p99 ms | App CPU µs/req | PostgreSQL CPU µs/req | Requests | Unexpected |')
  lines.push('|---|---:|---|---:|---:|---:|---:|---:|---:|')
  for (const row of rows) {
    lines.push(`| ${row.store} | ${thousands(row.users)} | ${row.operation} | ${thousands(row.rps)} | ${f(row.p50, 2)} / ${f(row.p99, 2)} | ${f(row.appCpuUs, 0)} | ${f(row.postgresCpuUs, 0)} | ${thousands(row.requests)} | ${row.unexpected} |`)
  }
  lines.push('')
  lines.push(`| No full scan per request: \`userName eq\` listing CPU (app + PostgreSQL) at ${thousands(SIZES[1])} users over ${thousands(SIZES[0])} | µs/req ${thousands(SIZES[0])} / ${thousands(SIZES[1])} | Ratio | Limit | Result |`)
  lines.push('|---|---:|---:|---:|---|')
  for (const row of flat) lines.push(`| ${row.store} | ${f(row.small, 0)} / ${f(row.large, 0)} | ${f(row.value, 2)}× | ≤ ${FLAT_LIMIT}× | ${row.pass ? 'pass' : quick ? 'outside (quick run: not asserted)' : '**FAIL**'} |`)
  for (const line of skipped) lines.push(`\nSkipped: ${line}.`)
  console.log(lines.join('\n'))

  if (rows.some((row) => row.unexpected > 0)) {
    console.error(`provisioning: unexpected answers in ${rows.filter((row) => row.unexpected > 0).map((row) => `${row.store} ${row.users} ${row.operation}`).join('; ')}`)
    return 1
  }
  return !quick && flat.some((row) => !row.pass) ? 3 : 0
}

process.on('exit', cleanup)
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => { cleanup(); process.exit(130) })
main().then((code) => { cleanup(); process.exit(code) }, (error: unknown) => {
  console.error(error)
  cleanup()
  process.exit(2)
})
