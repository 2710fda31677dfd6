/**
 * A real app process (src/server.ts) on Redis that starts late: the app does not listen before its
 * state store is ready, so its first answer is never a 503 for want of Redis; with Redis absent
 * for longer than Hosting:StartupStateWaitSeconds it listens anyway and readiness names the store.
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { settingsToEnv } from '../helpers/app.js'
import { cleanEnv, jsonLines, runEntryPoint, type Running } from '../helpers/process.js'
import { RedisServer } from '../helpers/redis-server.js'

const LISTENING = /^Server listening at (http:\/\/127\.0\.0\.1:\d+)$/
const KEY = randomBytes(32).toString('base64')

const redis = new RedisServer()
const runs: Running[] = []

function start (waitSeconds: number): Running {
  const settings = {
    DataProtection: { Keys: [KEY] },
    Hosting: { StartupStateWaitSeconds: waitSeconds, ShutdownDelaySeconds: 0 },
    State: { Provider: 'Redis', Redis: { ConnectionString: redis.connectionString, TimeoutMilliseconds: 200 } }
  }
  const run = runEntryPoint('src/server.ts', cleanEnv({ ...settingsToEnv(settings), HOST: '127.0.0.1', PORT: '0' }))
  runs.push(run)
  return run
}

const listeningIn = (run: Running): boolean => jsonLines(run.stdout()).some((record) => typeof record.msg === 'string' && LISTENING.test(record.msg))

after(async () => {
  for (const run of runs) run.kill()
  await Promise.all(runs.map(async (run) => await run.exited(10_000).catch(() => undefined)))
  await redis.dispose()
})

describe('startup waits for the state store', () => {
  test('with Redis down the app does not listen; once Redis is up it listens and its first readiness answer is 200', async () => {
    const run = start(60)
    await run.waitForLine((record) => record.event === 'configuration.loaded', 30_000)
    // Long enough for a connect attempt to fail and for an app that did not wait to have listened.
    await run.waitForLine((record) => record.event === 'state.store.unavailable', 10_000)
    await sleep(1000)
    assert.equal(listeningIn(run), false, 'listened before the state store was ready')
    await redis.start()
    const line = await run.waitForLine((record) => typeof record.msg === 'string' && LISTENING.test(record.msg), 20_000)
    const origin = LISTENING.exec(String(line.msg))?.[1] ?? ''
    const ready = await fetch(`${origin}/health/ready`, { signal: AbortSignal.timeout(5000) })
    assert.equal(ready.status, 200)
    const records = jsonLines(run.stdout())
    const readyAt = records.findIndex((record) => record.event === 'state.store.ready')
    const listeningAt = records.findIndex((record) => typeof record.msg === 'string' && LISTENING.test(record.msg))
    assert.ok(readyAt !== -1 && readyAt < listeningAt, 'the store was ready before the app listened')
    assert.ok(!records.some((record) => record.event === 'state.store.not_ready'))
    run.child.kill('SIGTERM')
    assert.equal(await run.exited(10_000), 0)
  })

  test('with Redis down beyond StartupStateWaitSeconds the app listens anyway, readiness 503 naming the store', async () => {
    await redis.stop()
    const run = start(1)
    const warning = await run.waitForLine((record) => record.event === 'state.store.not_ready', 30_000)
    assert.equal(warning.waitedSeconds, 1)
    const line = await run.waitForLine((record) => typeof record.msg === 'string' && LISTENING.test(record.msg), 10_000)
    const origin = LISTENING.exec(String(line.msg))?.[1] ?? ''
    const ready = await fetch(`${origin}/health/ready`, { signal: AbortSignal.timeout(5000) })
    assert.equal(ready.status, 503)
    assert.equal(ready.headers.get('retry-after'), '5')
    const body = await ready.json() as { checks: { state: { status: string, provider: string } } }
    assert.equal(body.checks.state.status, 'Unhealthy')
    assert.equal(body.checks.state.provider, 'Redis')
    assert.equal((await fetch(`${origin}/health/live`, { signal: AbortSignal.timeout(5000) })).status, 200)
  })
})
