/**
 * Startup validation of State:Redis:Sentinel and State:Redis:Cluster (src/state/settings-rules.ts):
 * each problem named by its full key, every problem reported at once, no password or node address
 * repeated in a message; check-config reports the same, and the server refuses to start on one;
 * neither prints the password.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { APP_ROOT, loadTestConfiguration } from '../helpers/app.js'
import { cleanEnv, runEntryPoint, runProcess } from '../helpers/process.js'

const REDIS = 'ProjectTemplate:State:Redis'
const PASSWORD = 'PLANTED-redis-topology-password-3c'

type StateSettings = NonNullable<NonNullable<Parameters<typeof loadTestConfiguration>[0]>['settings']>

const messagesFor = (redis: Record<string, unknown>): string[] =>
  loadTestConfiguration({ settings: { State: { Provider: 'Redis', Redis: redis } } as StateSettings }).errors.map((problem) => problem.message)

describe('Redis Sentinel and Cluster settings', () => {
  test('well-formed Sentinel and Cluster settings pass, passwords included', () => {
    assert.deepEqual(messagesFor({ Sentinel: { MasterName: 'app-primary', Nodes: ['10.0.0.1:26379', 'sentinel-2.internal:26379', '[::1]:26379'], Password: PASSWORD, SentinelPassword: PASSWORD, Tls: true } }), [])
    assert.deepEqual(messagesFor({ Cluster: { Nodes: ['redis-0.redis:6379', '10.0.0.2:6380'], Username: 'app', Password: PASSWORD } }), [])
  })

  const refused: Array<[string, Record<string, unknown>, string[]]> = [
    ['Sentinel nodes without a master name', { Sentinel: { Nodes: ['127.0.0.1:26379'] } },
      [`${REDIS}:Sentinel:MasterName is required when ${REDIS}:Sentinel:Nodes is set.`]],
    ['a master name without sentinels', { Sentinel: { MasterName: 'app-primary' } },
      [`${REDIS}:Sentinel:Nodes is required when ${REDIS}:Sentinel:MasterName is set: list the sentinels as host:port.`]],
    ['a master name with a space', { Sentinel: { MasterName: 'app primary', Nodes: ['127.0.0.1:26379'] } },
      [`${REDIS}:Sentinel:MasterName must be 1 to 128 letters, digits, dots, underscores or hyphens.`]],
    ['malformed nodes, each named by its index', { Sentinel: { MasterName: 'm', Nodes: ['127.0.0.1:26379', 'redis://127.0.0.1:26379', '127.0.0.1', 'host:70000', '[zz]:1'] } },
      [2, 3, 4, 5].map((index) => `${REDIS}:Sentinel:Nodes:${index - 1} must be host:port (a host name or IPv4 address, or [IPv6], and a port from 1 to 65535).`)],
    ['a malformed cluster node', { Cluster: { Nodes: [`:${PASSWORD}@10.0.0.1:6379`] } },
      [`${REDIS}:Cluster:Nodes:0 must be host:port (a host name or IPv4 address, or [IPv6], and a port from 1 to 65535).`]],
    ['Sentinel and Cluster together', { Sentinel: { MasterName: 'm', Nodes: ['127.0.0.1:26379'] }, Cluster: { Nodes: ['127.0.0.1:6379'] } },
      [`${REDIS}:Sentinel and ${REDIS}:Cluster cannot both be set: a Redis is either behind Sentinel or a cluster.`]],
    ['a connection string beside Cluster', { ConnectionString: `redis://:${PASSWORD}@127.0.0.1:6379`, Cluster: { Nodes: ['127.0.0.1:6379'] } },
      [`${REDIS}:ConnectionString must be empty when ${REDIS}:Cluster is set: the nodes, user and password are given there.`]],
    ['a connection string beside Sentinel', { ConnectionString: `redis://:${PASSWORD}@127.0.0.1:6379`, Sentinel: { MasterName: 'm', Nodes: ['127.0.0.1:26379'] } },
      [`${REDIS}:ConnectionString must be empty when ${REDIS}:Sentinel is set: the nodes, user and password are given there.`]]
  ]
  for (const [name, redis, expected] of refused) {
    test(`refused: ${name}`, () => {
      const messages = messagesFor(redis)
      assert.deepEqual(messages, expected)
      assert.ok(!messages.join('\n').includes(PASSWORD))
    })
  }

  test('check-config reports the same sentence for a Sentinel without a master name, with its password only by source', async () => {
    const run = runProcess(process.execPath, ['--import', 'tsx', 'src/check-config.ts', '--json'], {
      cwd: APP_ROOT,
      env: cleanEnv({
        NODE_ENV: 'production',
        ProjectTemplate__State__Provider: 'Redis',
        ProjectTemplate__State__Redis__Sentinel__Nodes__0: '127.0.0.1:26379',
        ProjectTemplate__State__Redis__Sentinel__Password: PASSWORD
      })
    })
    try {
      assert.equal(await run.exited(60_000), 1)
      const summary = JSON.parse(run.stdout()) as { errors: Array<{ message: string }>, secrets: Array<{ key: string, source: string }> }
      assert.deepEqual(summary.errors.map((problem) => problem.message), [`${REDIS}:Sentinel:MasterName is required when ${REDIS}:Sentinel:Nodes is set.`])
      assert.ok(summary.secrets.some((secret) => secret.key === `${REDIS}:Sentinel:Password` && secret.source === 'environment'), run.stdout())
      assert.ok(!(run.stdout() + run.stderr()).includes(PASSWORD))
    } finally {
      run.kill()
    }
  })

  test('the server refuses to start on a malformed cluster node: exit 1, the key named, the password nowhere', async () => {
    const run = runEntryPoint('src/server.ts', cleanEnv({
      NODE_ENV: 'production',
      ProjectTemplate__State__Provider: 'Redis',
      ProjectTemplate__State__Redis__Cluster__Nodes__0: '127.0.0.1',
      ProjectTemplate__State__Redis__Cluster__Password: PASSWORD
    }))
    try {
      assert.equal(await run.exited(60_000), 1)
      const output = run.stdout() + run.stderr()
      assert.ok(output.includes(`${REDIS}:Cluster:Nodes:0 must be host:port`), output)
      assert.ok(!output.includes(PASSWORD), 'the password is not printed')
    } finally {
      run.kill()
    }
  })
})
