/**
 * `npx tsx bench/directory-store.ts [--quick]`: the directory store under provisioning's hot
 * operations (issue 41, "Speed and memory"), with 10,000 users in one connection (1,000 with
 * --quick): a `userName eq "..."` listing (the filter parsed each time, as a SCIM request would)
 * and an atomic deactivation (`updateUser` flipping `active`), against the embedded store in
 * memory, on SQLite (node:sqlite, Node.js 22.13+) and on PostgreSQL (Debian's, started in a
 * temporary directory by test/helpers/postgres-server.ts; skipped, saying so, when it is not
 * installed). Reports CPU per operation of this process (for PostgreSQL the server's own CPU is
 * not in it) and the median wall time; no budget is asserted. Prints a Markdown table; `npm run
 * bench` appends it to its own.
 */
import { performance } from 'node:perf_hooks'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { DirectoryStore } from '../packages/core/src/directory/directory-store.ts'
import { parseScimFilter } from '../packages/core/src/directory/filter-parser.ts'
import { MemoryDirectoryStore } from '../packages/core/src/directory/memory-directory-store.ts'
import { openEmbeddedDirectoryStore, openPostgresDirectoryStore } from '../packages/core/src/directory/open-directory-store.ts'
import { loadSqlite } from '../packages/core/src/state/sqlite-journal.ts'
import { PostgresServer, postgresBinaries } from '../packages/core/test/helpers/postgres-server.ts'

const quick = process.argv.includes('--quick')
const USERS = quick ? 1_000 : 10_000
const OPERATIONS = quick ? 200 : 2_000
const CONNECTION = 'bench-customer'
const SEED_CONCURRENCY = 8

interface Result {
  readonly store: string
  readonly seedMs: number
  readonly lookupCpuUs: number
  readonly lookupP50Ms: number
  readonly deactivateCpuUs: number
  readonly deactivateP50Ms: number
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

async function seed (store: DirectoryStore): Promise<string[]> {
  const ids: string[] = new Array(USERS)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < USERS) {
      const index = next++
      const user = await store.createUser(CONNECTION, {
        userName: `user${index}@customer.example`,
        externalId: `ext-${index}`,
        active: true,
        attributes: { name: { givenName: 'User', familyName: String(index) }, emails: [{ value: `user${index}@customer.example`, type: 'work', primary: true }] }
      })
      ids[index] = user.id
    }
  }
  await Promise.all(Array.from({ length: SEED_CONCURRENCY }, worker))
  // Another connection, so that every query has rows to leave out.
  for (let index = 0; index < 100; index++) await store.createUser('bench-other', { userName: `user${index}@customer.example`, active: true, attributes: {} })
  return ids
}

/** CPU µs per operation of this process and the median wall time, over `count` sequential runs of `operation`. */
async function measure (count: number, operation: (index: number) => Promise<void>): Promise<{ cpuUs: number, p50Ms: number }> {
  for (let index = 0; index < Math.min(50, count); index++) await operation(index)
  const times: number[] = []
  const cpu = process.cpuUsage()
  for (let index = 0; index < count; index++) {
    const started = performance.now()
    await operation(index)
    times.push(performance.now() - started)
  }
  const used = process.cpuUsage(cpu)
  return { cpuUs: (used.user + used.system) / count, p50Ms: median(times) }
}

async function run (name: string, store: DirectoryStore): Promise<Result> {
  try {
    const started = performance.now()
    const ids = await seed(store)
    const seedMs = performance.now() - started
    const lookup = await measure(OPERATIONS, async (index) => {
      const page = await store.listUsers(CONNECTION, { filter: parseScimFilter('User', `userName eq "USER${(index * 7919) % USERS}@customer.example"`), startIndex: 1, count: 1 })
      if (page.totalResults !== 1) throw new Error(`${name}: a userName eq look-up found ${page.totalResults}`)
    })
    const deactivate = await measure(OPERATIONS, async (index) => {
      const id = ids[(index * 104_729) % USERS] as string
      const update = await store.updateUser(CONNECTION, id, (current) => ({ ...current, active: !current.active }))
      if (update?.changed !== true) throw new Error(`${name}: the deactivation changed nothing`)
    })
    return { store: name, seedMs, lookupCpuUs: lookup.cpuUs, lookupP50Ms: lookup.p50Ms, deactivateCpuUs: deactivate.cpuUs, deactivateP50Ms: deactivate.p50Ms }
  } finally {
    await store.close()
  }
}

const results: Result[] = []
const skipped: string[] = []
const directory = mkdtempSync(join(tmpdir(), 'bench-directory-'))
let postgres: PostgresServer | undefined
try {
  results.push(await run('Embedded, in memory (the Node.js 20 fallback)', new MemoryDirectoryStore()))
  if (await loadSqlite() === undefined) skipped.push(`Embedded on SQLite: node:sqlite is missing on Node ${process.version} (22.13+ has it)`)
  else results.push(await run('Embedded, SQLite (directory.sqlite)', await openEmbeddedDirectoryStore({ dataDirectory: '.state', contentRoot: directory })))
  if (postgresBinaries() === undefined) skipped.push('PostgreSQL: not installed (npm run test:setup installs Debian\'s postgresql)')
  else {
    postgres = new PostgresServer()
    await postgres.start()
    results.push(await run('PostgreSQL (pg, loopback, fsync off)', await openPostgresDirectoryStore({ connectionString: await postgres.createDatabase('bench') })))
  }
} finally {
  await postgres?.dispose()
  rmSync(directory, { recursive: true, force: true })
}

const f = (value: number, digits: number): string => Number.isFinite(value) ? value.toFixed(digits) : 'n/a'
console.log(`Directory store, ${USERS.toLocaleString('en-US')} users in one connection, ${OPERATIONS.toLocaleString('en-US')} operations each, Node ${process.version} (\`bench/directory-store.ts\`${quick ? ', --quick' : ''}). ` +
  'CPU is this process\'s (PostgreSQL\'s server CPU is not in it); no budget is asserted.')
console.log('')
console.log('| Directory store | Seed (create every user) | `userName eq` listing: CPU µs/op | p50 ms | Atomic deactivation: CPU µs/op | p50 ms |')
console.log('|---|---:|---:|---:|---:|---:|')
for (const result of results) {
  console.log(`| ${result.store} | ${f(result.seedMs / 1000, 1)} s | ${f(result.lookupCpuUs, 0)} | ${f(result.lookupP50Ms, 3)} | ${f(result.deactivateCpuUs, 0)} | ${f(result.deactivateP50Ms, 3)} |`)
}
for (const line of skipped) console.log(`\nSkipped: ${line}.`)
