/**
 * Per-line cost of the stdout log destinations the app could use, measured in one process: a
 * request-like child logger writing one completion line per iteration, stdout redirected by the
 * caller (a file, a pipe or /dev/null). Prints µs per line (CPU: user + system) for each option.
 *
 *   npx tsx bench/log-destinations.mjs [lines, default 200000] > /tmp/log.out   (results on stderr)
 *   npx tsx bench/log-destinations.mjs | cat > /dev/null                   (stdout a pipe)
 *
 * Run from the repository root after `npm ci` (imports the template's logger options).
 */
import { pino } from 'pino'

const lines = Number(process.argv[2] ?? 200_000)
const { loggerOptions, BatchedDestination } = await import('../packages/core/src/logger.ts')

function measure (name, makeDestination) {
  const { destination, flush } = makeDestination()
  const logger = pino(loggerOptions('info'), destination)
  const warm = Math.min(20_000, lines / 10)
  for (let i = 0; i < warm; i++) logger.child({ reqId: 'warm' }).info({ event: 'request.completed', method: 'GET', path: '/health/live', statusCode: 200, durationMs: 0.42 }, 'request completed')
  flush()
  const start = process.cpuUsage()
  for (let i = 0; i < lines; i++) {
    logger.child({ reqId: `0b6f1c1e-6a35-4f7e-9d70-${String(i).padStart(12, '0')}` })
      .info({ event: 'request.completed', method: 'GET', path: '/health/live', statusCode: 200, durationMs: 0.42 }, 'request completed')
  }
  flush()
  const used = process.cpuUsage(start)
  process.stderr.write(`${name.padEnd(58)} ${((used.user + used.system) / lines).toFixed(2)} µs/line\n`)
}

const stdout = (options) => () => {
  const stream = pino.destination({ dest: 1, ...options })
  return { destination: stream, flush: () => { stream.flushSync() } }
}
measure('pino.destination sync (one write(2) per line)', stdout({ sync: true }))
measure('pino.destination sync, minLength 8192', stdout({ sync: true, minLength: 8192 }))
measure('pino.destination async, minLength 8192', stdout({ sync: false, minLength: 8192 }))
measure('BatchedDestination(8 KB) -> pino.destination sync', () => {
  const batched = new BatchedDestination(pino.destination({ dest: 1, sync: true }))
  return { destination: batched, flush: () => { batched.flushSync() } }
})
