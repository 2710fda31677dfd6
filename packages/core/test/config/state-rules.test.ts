/**
 * Startup validation of ProjectTemplate:State (src/state/settings-rules.ts stateStoreSettings): each bad
 * value is named by its key, and a connection string's password never appears in a message or in
 * the output of a server that refuses to start.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { loadTestConfiguration } from '../helpers/app.js'
import { cleanEnv, runEntryPoint } from '../helpers/process.js'

const KEY = 'ProjectTemplate:State:Redis:ConnectionString'
const PASSWORD = 'PLANTED-redis-password-5be1'

type StateSettings = NonNullable<NonNullable<Parameters<typeof loadTestConfiguration>[0]>['settings']>

const messagesFor = (state: StateSettings): string[] =>
  loadTestConfiguration({ settings: { State: state } }).errors.map((problem) => problem.message)

describe('State settings', () => {
  test('the embedded default and well-formed Redis connection strings pass', () => {
    assert.deepEqual(messagesFor({}), [])
    for (const value of ['redis://127.0.0.1:6379', `redis://:${PASSWORD}@localhost:6379/2`, `rediss://user:${PASSWORD}@redis.example.test`, 'unix:/run/redis/redis.sock', 'unix:///run/redis.sock']) {
      assert.deepEqual(messagesFor({ Provider: 'Redis', Redis: { ConnectionString: value } }), [], value.replace(PASSWORD, '***'))
    }
  })

  test('an unknown provider is refused, naming State:Provider', () => {
    const messages = messagesFor({ Provider: 'Memcached' })
    assert.equal(messages.length, 1)
    assert.match(messages[0] ?? '', /^ProjectTemplate:State:Provider /)
  })

  test('Redis without a connection string is refused, naming the key', () => {
    assert.deepEqual(messagesFor({ Provider: 'Redis' }), [`${KEY} is required when ProjectTemplate:State:Provider is Redis.`])
  })

  const malformed: Array<[string, string]> = [
    [`http://:${PASSWORD}@localhost:6379`, `${KEY} must use redis://, rediss:// or unix:.`],
    [`redis//:${PASSWORD}@localhost`, `${KEY} must be a redis://, rediss:// or unix: connection string.`],
    [`redis://:${PASSWORD}@localhost:6379/queue`, `${KEY} may name only a database number as its path.`],
    [`unix:relative/${PASSWORD}.sock`, `${KEY} must be unix: followed by an absolute socket path.`],
    [`redis://:${PASSWORD}@localhost:99999`, `${KEY} must be a redis://, rediss:// or unix: connection string.`]
  ]
  for (const [value, message] of malformed) {
    test(`a malformed connection string is refused without repeating it (${message.slice(KEY.length + 1)})`, () => {
      const messages = messagesFor({ Provider: 'Redis', Redis: { ConnectionString: value } })
      assert.deepEqual(messages, [message])
      assert.ok(!messages.join('\n').includes(PASSWORD))
    })
  }

  test('the server refuses to start on a malformed connection string: exit 1, the key named, the password nowhere', async () => {
    const run = runEntryPoint('src/server.ts', cleanEnv({
      NODE_ENV: 'production',
      ProjectTemplate__State__Provider: 'Redis',
      ProjectTemplate__State__Redis__ConnectionString: `http://:${PASSWORD}@localhost:6379`
    }))
    try {
      assert.equal(await run.exited(60_000), 1)
      const output = run.stdout() + run.stderr()
      assert.ok(output.includes(`${KEY} must use redis://, rediss:// or unix:.`), output)
      assert.ok(!output.includes(PASSWORD), 'the password is not printed')
    } finally {
      run.kill()
    }
  })
})
