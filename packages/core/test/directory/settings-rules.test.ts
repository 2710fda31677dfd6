/**
 * `Provisioning:Store` through real configuration loading (src/directory/settings-rules.ts): the
 * defaults (provisioning off, the embedded store), PostgreSql without or with an unusable
 * connection string refused at startup naming the key, never the value, and the connection
 * string bound as a secret.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Secret } from '../../src/config/secret.js'
import { loadTestConfiguration } from '../helpers/app.js'

const KEY = 'ProjectTemplate:Provisioning:Store:PostgreSql:ConnectionString'
const errorsWith = (ConnectionString: string): string[] =>
  loadTestConfiguration({ settings: { Provisioning: { Enabled: true, Store: { Provider: 'PostgreSql', PostgreSql: { ConnectionString } } } } }).errors.map((problem) => problem.message)

test('provisioning is off by default, on the embedded store', () => {
  const { config, errors } = loadTestConfiguration()
  assert.deepEqual(errors, [])
  assert.equal(config.Provisioning.Enabled, false)
  assert.equal(config.Provisioning.Store.Provider, 'Embedded')
  assert.equal(config.Provisioning.Store.PostgreSql.MaxConnections, 10)
  assert.equal(config.Provisioning.Store.PostgreSql.TimeoutMilliseconds, 5000)
})

test('PostgreSql needs a connection string', () => {
  const { errors } = loadTestConfiguration({ settings: { Provisioning: { Store: { Provider: 'PostgreSql' } } } })
  assert.deepEqual(errors.map((problem) => problem.message), [`${KEY} is required when ProjectTemplate:Provisioning:Store:Provider is PostgreSql.`])
})

test('an unusable connection string is refused naming the key and never the value', () => {
  const cases: Array<[string, string]> = [
    ['redis://app:Planted-9x@db.example/app', `${KEY} must use postgres:// or postgresql://.`],
    ['app:Planted-9x@db.example', `${KEY} must use postgres:// or postgresql://.`],
    ['not a url Planted-9x', `${KEY} must be a postgres:// or postgresql:// connection string.`],
    ['postgres://app:Planted-9x@db.example', `${KEY} must name a database (postgres://host/<database>).`],
    ['postgres:///app?password=Planted-9x', `${KEY} must name a host (or a socket directory as ?host=/path).`]
  ]
  for (const [value, message] of cases) {
    const errors = errorsWith(value)
    assert.deepEqual(errors, [message], value)
    assert.ok(!errors.join().includes('Planted-9x'))
  }
})

test('a usable connection string passes, bound as a secret', () => {
  for (const value of ['postgres://app:pw@db.example:5432/app?sslmode=verify-full', 'postgresql://db.example/app', 'postgres:///app?host=/var/run/postgresql']) {
    assert.deepEqual(errorsWith(value), [], value)
  }
  const { config } = loadTestConfiguration({ settings: { Provisioning: { Store: { Provider: 'PostgreSql', PostgreSql: { ConnectionString: 'postgres://app:pw@db.example/app' } } } } })
  const secret = config.Provisioning.Store.PostgreSql.ConnectionString
  assert.ok(secret instanceof Secret)
  assert.ok(!JSON.stringify(config).includes('pw@db'))
})
