/**
 * The store metrics on a real Redis (Debian's redis-server, on a unix socket): operations and
 * latencies labelled store="Redis", availability 1 while it answers and 0 once it is gone, the
 * outage counted from the store's own event, and no active-sessions gauge (Redis cannot count
 * without a scan).
 */
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { build, signIn, standardUser } from '../helpers/app.js'
import { RedisServer } from '../helpers/redis-server.js'
import { waitFor } from '../helpers/wait.js'

const server = new RedisServer()
before(async () => { await server.start() })
after(async () => { await server.stop() })

function sample (body: string, name: string, labels: string): number | undefined {
  const line = body.split('\n').find((candidate) => candidate.startsWith(`${name}{${labels},otel_scope_name=`))
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1))
}

test('Redis operations, availability and outages are measured, and sessions are not counted', { timeout: 30_000 }, async (t) => {
  const { app } = await build(t, {
    settings: {
      State: { Provider: 'Redis', Redis: { ConnectionString: server.connectionString, TimeoutMilliseconds: 200 } },
      Telemetry: { Enabled: true, Prometheus: { Enabled: true, AllowAnonymous: true } }
    }
  })
  await waitFor(() => app.state.status().available, 'the Redis store to connect')
  await signIn(app, standardUser())
  const up = (await app.inject({ url: '/metrics' })).body
  assert.equal(sample(up, 'app_state_store_available', 'store="Redis"'), 1)
  assert.equal(sample(up, 'app_state_store_operations_total', 'store="Redis",operation="set",outcome="ok"'), 1)
  assert.equal(sample(up, 'app_state_store_duration_count', 'store="Redis",operation="set"'), 1)
  assert.equal(sample(up, 'app_sessions_active', 'store="Redis"'), undefined)

  await server.kill()
  await waitFor(() => !app.state.status().available, 'the Redis store to notice the outage')
  // Either connection may notice first (under load the subscriber often does): the commands
  // connection's outage is logged, and so counted, when its own client reports it.
  let down = ''
  await waitFor(async () => {
    down = (await app.inject({ url: '/metrics' })).body
    return sample(down, 'app_state_store_outages_total', 'store="Redis",connection="commands"') !== undefined
  }, 'the commands connection\'s outage to be counted', 5_000, 50)
  assert.equal(sample(down, 'app_state_store_available', 'store="Redis"'), 0)
  assert.equal(sample(down, 'app_state_store_outages_total', 'store="Redis",connection="commands"'), 1)
})
