/**
 * A start-up failure (the port is taken) is logged last: every line logged before it comes first,
 * in order, and the fatal line names the cause (EADDRINUSE). One logger, one buffer, and an error
 * line flushes everything before it.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type AddressInfo } from 'node:net'
import { cleanEnv, jsonLines, runEntryPoint } from '../helpers/process.js'

test('with the port taken, the fatal EADDRINUSE line is the last line and the earlier lines keep their order', async () => {
  const blocker = createServer()
  await new Promise<void>((resolve) => { blocker.listen(0, '127.0.0.1', resolve) })
  try {
    const { port } = blocker.address() as AddressInfo
    const run = runEntryPoint('src/server.ts', cleanEnv({ HOST: '127.0.0.1', PORT: String(port), ProjectTemplate__DataProtection__Keys__0: Buffer.alloc(32, 5).toString('base64') }))
    assert.equal(await run.exited(), 1)
    const records = jsonLines(run.stdout())
    const events = records.map((record) => record.event)
    assert.ok(events.length >= 3, run.stdout())
    const last = records.at(-1)
    assert.equal(last?.level, 60)
    assert.equal(last?.event, 'server.start_failed')
    assert.equal(last?.code, 'EADDRINUSE')
    assert.ok(events.indexOf('configuration.loaded') < events.indexOf('authentication.providers'), events.join(', '))
    assert.equal(events.indexOf('configuration.loaded'), 0, events.join(', '))
    const times = records.map((record) => Number(record.time))
    assert.deepEqual(times, [...times].sort((a, b) => a - b), 'lines out of time order')
    assert.equal(run.stderr().includes('EADDRINUSE'), false, 'the cause went to stderr instead of the log')
  } finally {
    blocker.close()
  }
})
