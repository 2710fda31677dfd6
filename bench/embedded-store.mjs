/**
 * `node bench/embedded-store.mjs`: what writing the embedded store through to SQLite costs
 * (issue 20, item 7), in process, against the same store in memory: sign-in-shaped writes (a
 * sealed session of about 1.5 KB, its subject index entry, a completed-flow replay record) from
 * `CONCURRENCY` concurrent writers, each awaiting its writes as a request does. Reports writes
 * per second, the latency of one awaited write (p50 / p99: the time until it is committed), and
 * how long the event loop was blocked (p99 / max of perf_hooks' event-loop delay: what a read on
 * another request waits for at worst while a batch commits). Needs node:sqlite (Node 22.13+);
 * uses the built core (npm run build:core). Prints a Markdown table.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import { randomBytes } from 'node:crypto'
import { EmbeddedStateStore } from '../packages/core/dist/state/embedded-store.js'
import { loadSqlite, prepareStateFile, SqliteJournal } from '../packages/core/dist/state/sqlite-journal.js'

const SIGN_INS = Number(process.env.SIGN_INS ?? 20_000)
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 10)
const LIMITS = { maxEntries: { session: 50_000, index: 150_000, flow: 20_000, replay: 100_000, lock: 50_000 }, maxCharacters: 256 * 1_048_576 }
const SEALED = randomBytes(1100).toString('base64url')

const sqlite = await loadSqlite()
if (sqlite === undefined) {
  console.error(`node:sqlite is missing on Node ${process.version}: nothing to measure (run on Node 22.13+ or 24)`)
  process.exit(0)
}

function percentile (sorted, fraction) {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]
}

/** Times every commit of `journal` (each blocks the event loop for its duration). */
function timeCommits (journal) {
  const durations = []
  const flush = journal.flush.bind(journal)
  journal.flush = () => {
    const started = performance.now()
    flush()
    durations.push(performance.now() - started)
  }
  return durations
}

async function measure (name, store, commits = []) {
  const latencies = []
  const cpuBefore = process.cpuUsage()
  const delay = monitorEventLoopDelay({ resolution: 1 })
  let next = 0
  const writer = async () => {
    while (next < SIGN_INS) {
      const index = next++
      const started = performance.now()
      await store.set(`session:${index}`, SEALED, 3_600_000)
      await store.addMember(`index:subject:${index % 1000}`, String(index), 3_600_000)
      await store.add(`replay:sign-in-flow:${index}`, 'used', 600_000)
      latencies.push(performance.now() - started)
    }
  }
  delay.enable()
  const started = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, writer))
  const seconds = (performance.now() - started) / 1000
  delay.disable()
  const cpu = process.cpuUsage(cpuBefore)
  latencies.sort((a, b) => a - b)
  const sortedCommits = [...commits].sort((a, b) => a - b)
  return {
    name,
    signInsPerSecond: SIGN_INS / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    loopP99: delay.percentile(99) / 1e6,
    loopMax: delay.max / 1e6,
    cpuUs: (cpu.user + cpu.system) / SIGN_INS,
    commits: sortedCommits.length,
    commitP50: percentile(sortedCommits, 0.5),
    commitP99: percentile(sortedCommits, 0.99),
    commitMax: sortedCommits.at(-1) ?? NaN
  }
}

const directory = mkdtempSync(join(tmpdir(), 'bench-embedded-store-'))
try {
  const memory = await measure('in memory', new EmbeddedStateStore(LIMITS))
  const { journal, records } = SqliteJournal.open(sqlite, prepareStateFile(join(directory, 'state'), directory), Date.now())
  const persisted = new EmbeddedStateStore(LIMITS, Date.now, journal)
  persisted.load(records)
  const onDisk = await measure('SQLite (WAL, synchronous=NORMAL, one transaction per event-loop turn)', persisted, timeCommits(journal))
  await persisted.close()
  const reopenStarted = performance.now()
  const reopened = SqliteJournal.open(sqlite, prepareStateFile(join(directory, 'state'), directory), Date.now())
  const store = new EmbeddedStateStore(LIMITS, Date.now, reopened.journal)
  store.load(reopened.records)
  const loadMs = performance.now() - reopenStarted
  await store.close()
  const f = (value, digits = 2) => Number.isFinite(value) ? value.toFixed(digits) : 'n/a'
  console.log(`Node ${process.version}, ${SIGN_INS.toLocaleString('en-US')} sign-in-shaped write sets (session ~1.5 KB + index entry + replay record), ${CONCURRENCY} concurrent writers\n`)
  console.log('| Embedded store | Sign-ins/s | CPU µs per sign-in | Awaited write set p50 / p99 ms | Commits | Commit (loop blocked) p50 / p99 / max ms | Event-loop delay p99 / max ms |')
  console.log('|---|---:|---:|---:|---:|---:|---:|')
  for (const result of [memory, onDisk]) {
    console.log(`| ${result.name} | ${Math.round(result.signInsPerSecond).toLocaleString('en-US')} | ${f(result.cpuUs, 0)} | ${f(result.p50, 3)} / ${f(result.p99, 3)} | ${result.commits} | ` +
      `${result.commits === 0 ? 'none' : `${f(result.commitP50, 3)} / ${f(result.commitP99, 3)} / ${f(result.commitMax)}`} | ${f(result.loopP99)} / ${f(result.loopMax)} |`)
  }
  console.log(`\nLoading ${(SIGN_INS * 2 + Math.min(SIGN_INS, 1000)).toLocaleString('en-US')} records back at start: ${f(loadMs, 0)} ms`)
} finally {
  rmSync(directory, { recursive: true, force: true })
}
