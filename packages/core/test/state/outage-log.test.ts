/**
 * A Redis outage is logged once per change of state and connection, never once per refused
 * request: down (one warning per connection), still down (one warning per interval, with the
 * failures counted), back (one line per connection, with the outage length). Counted against a
 * real password-protected redis-server that is killed under requests and started again; the
 * password never reaches the log.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import pino from 'pino'
import { createOutageLog } from '../../src/plugins/state.js'
import { buildTestApp, LogCapture, signIn, standardUser, type TestApp } from '../helpers/app.js'
import { closedPort } from '../helpers/ports.js'
import { RedisServer } from '../helpers/redis-server.js'
import { waitFor } from '../helpers/wait.js'

const API = '/api/application-information'
const OUTAGE_EVENTS = ['state.store.unavailable', 'state.store.still_unavailable', 'state.store.recovered', 'state.store.ready']

describe('outage log lines, from the store events', () => {
  test('per connection: one line down, one per interval while down with a count, one back with the length', () => {
    const capture = new LogCapture()
    let clock = 1_000_000
    const log = createOutageLog(pino({ level: 'debug' }, capture), () => clock, 10_000)
    const refused = { kind: 'error', errorName: 'Error', errorCode: 'ECONNREFUSED' } as const
    log({ ...refused, connection: 'commands' })
    log({ ...refused, connection: 'subscriber' })
    for (let second = 1; second <= 25; second++) {
      clock += 1000
      log({ ...refused, connection: 'commands' })
      log({ ...refused, connection: 'subscriber' })
    }
    log({ kind: 'connected', connection: 'subscriber' })
    clock += 500
    log({ kind: 'connected', connection: 'commands' })
    log({ kind: 'ready' })
    const lines = capture.records().map((record) => [record.event, record.connection, record.failures, record.outageMs])
    assert.deepEqual(lines, [
      ['state.store.unavailable', 'commands', undefined, undefined],
      ['state.store.unavailable', 'subscriber', undefined, undefined],
      ['state.store.still_unavailable', 'commands', 11, 10_000],
      ['state.store.still_unavailable', 'subscriber', 11, 10_000],
      ['state.store.still_unavailable', 'commands', 21, 20_000],
      ['state.store.still_unavailable', 'subscriber', 21, 20_000],
      ['state.store.recovered', 'subscriber', 26, 25_000],
      ['state.store.recovered', 'commands', 26, 25_500],
      ['state.store.ready', undefined, undefined, undefined]
    ])
  })
})

describe('a real Redis outage under requests', () => {
  const password = `pw-${randomBytes(12).toString('hex')}`
  let redis: RedisServer
  let t: TestApp

  before(async () => {
    redis = new RedisServer({ password, port: await closedPort() })
    await redis.start()
    t = await buildTestApp({ settings: { State: { Provider: 'Redis', Redis: { ConnectionString: redis.connectionString, TimeoutMilliseconds: 200 } } } })
    await waitFor(() => t.app.state.status().available, 'the store to be ready', 10_000)
  })

  after(async () => {
    await t?.app.close()
    await redis?.dispose()
  })

  test('200 refused requests and reconnect attempts log one line down and one line back per connection, no password', async () => {
    const cookie = await signIn(t.app, standardUser())
    assert.equal((await t.app.inject({ url: API, headers: { cookie, accept: 'application/json' } })).statusCode, 200)
    const before = t.logs.lines.length
    await redis.kill()
    await waitFor(() => !t.app.state.status().available, 'the store to notice the outage', 10_000)
    let refused = 0
    for (let index = 0; index < 200; index++) {
      const response = await t.app.inject({ url: API, headers: { cookie, accept: 'application/json' } })
      if (response.statusCode === 503) refused++
    }
    assert.equal(refused, 200)
    // Long enough for several reconnect attempts (capped backoff), each failing.
    await new Promise((resolve) => setTimeout(resolve, 2500))
    await redis.start()
    await waitFor(() => t.app.state.status().available, 'the store to be back', 15_000)
    // The store answers again (the killed test server kept nothing, so the session is gone: 401).
    assert.equal((await t.app.inject({ url: API, headers: { cookie, accept: 'application/json' } })).statusCode, 401)

    const during = t.logs.records().slice(before)
    const outage = during.filter((record) => OUTAGE_EVENTS.includes(String(record.event)))
    // Measurement for the report.
    console.log(JSON.stringify({ outageLog: { refusedRequests: refused, warnOrAbove: during.filter((record) => Number(record.level) >= 40).length, lines: outage.map((record) => `${String(record.event)} ${String(record.connection ?? '')}`) } }))
    const count = (event: string, connection?: string): number => outage.filter((record) => record.event === event && (connection === undefined || record.connection === connection)).length
    for (const connection of ['commands', 'subscriber']) {
      assert.equal(count('state.store.unavailable', connection), 1, `${connection} down`)
      assert.equal(count('state.store.recovered', connection), 1, `${connection} back`)
    }
    assert.equal(count('state.store.still_unavailable'), 0, 'the outage was shorter than the interval')
    assert.equal(count('state.store.ready'), 1)
    const recovered = outage.filter((record) => record.event === 'state.store.recovered')
    assert.ok(recovered.every((record) => typeof record.outageMs === 'number' && record.outageMs >= 2500), 'the outage length is given')
    // Nothing at warn or above but the two "down" lines: no line per refused request.
    assert.deepEqual(during.filter((record) => Number(record.level) >= 40).map((record) => record.event), ['state.store.unavailable', 'state.store.unavailable'])
    assert.ok(!t.logs.text().includes(password), 'the Redis password is in the log')
  })
})
