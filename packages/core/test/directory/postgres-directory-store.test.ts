/**
 * The PostgreSQL directory store against a real PostgreSQL (test/helpers/postgres-server.ts):
 * the conformance suite, the indexes the common filters use with 10,000 users in one connection
 * (EXPLAIN of the statements the store sends: no sequential scan), migrations applied once by
 * instances opening together, two instances sharing one database, and a lost server answered as
 * "unavailable" without the connection string.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { DirectoryStoreUnavailableError } from '../../src/directory/directory-errors.js'
import type { DirectoryStore } from '../../src/directory/directory-store.js'
import { parseScimFilter } from '../../src/directory/filter-parser.js'
import { openPostgresDirectoryStore } from '../../src/directory/open-directory-store.js'
import { PostgresDirectoryDatabase } from '../../src/directory/postgres-directory-database.js'
import { SqlDirectoryStore } from '../../src/directory/sql-directory-store.js'
import { MIGRATION_VERSIONS } from '../../src/directory/sql-schema.js'
import { describeDirectoryStore } from '../../src/testing/directory-store.js'
import { PostgresServer } from '../helpers/postgres-server.js'
import { INDEXED_FILTERS, recording, type RecordedStatement } from './recording-database.js'

const server = new PostgresServer()
before(async () => { await server.start() })
after(async () => { await server.dispose() })

let databases = 0
const freshDatabase = async (): Promise<string> => await server.createDatabase(`directory_${++databases}`)

describeDirectoryStore('PostgreSQL', async ({ now }) => await openPostgresDirectoryStore({ connectionString: await freshDatabase(), now }))

describe('PostgreSQL directory store: indexes, migrations, instances, outages', () => {
  test('with 10,000 users in one connection the common filters read an index, never the whole table', async (t) => {
    const connectionString = await freshDatabase()
    const statements: RecordedStatement[] = []
    const store = new SqlDirectoryStore(recording(await PostgresDirectoryDatabase.open({ connectionString }, Date.now()), statements))
    t.after(async () => { await store.close() })
    const ada = await store.createUser('acme', { userName: 'Ada', externalId: 'ext-ada', active: true, attributes: {} })
    await store.createGroup('acme', { displayName: 'Staff', externalId: 'g-1', attributes: {} })
    // 9,999 more users, 3,000 groups (and a second connection) written directly: the store's own statements are what is examined.
    await server.sql(`INSERT INTO directory_users (connection, id, external_id, user_name, user_name_key, active, attributes, created_ms, last_modified_ms, version)
      SELECT CASE WHEN n % 10 = 0 THEN 'other' ELSE 'acme' END, 'u-' || n, 'ext-' || n, 'user' || n, 'user' || n, n % 7 <> 0, '{}'::jsonb, 1700000000000 + n, 1700000000000 + n, 1
      FROM generate_series(1, 11110) AS n`, [], `directory_${databases}`)
    await server.sql(`INSERT INTO directory_groups (connection, id, external_id, display_name, display_name_key, attributes, created_ms, last_modified_ms, version)
      SELECT 'acme', 'g-' || n, 'gx-' || n, 'Group ' || n, 'group ' || n, '{}'::jsonb, 1700000000000 + n, 1700000000000 + n, 1 FROM generate_series(1, 3000) AS n`, [], `directory_${databases}`)
    await server.sql('ANALYZE', [], `directory_${databases}`)
    for (const text of INDEXED_FILTERS(ada.id, new Date(1_700_000_011_000).toISOString())) {
      statements.length = 0
      const page = await store.listUsers('acme', { filter: parseScimFilter('User', text), startIndex: 1, count: 10 })
      assert.ok(page.totalResults >= 1, text)
      await assertNoSequentialScan(statements, text, `directory_${databases}`)
    }
    statements.length = 0
    await store.listGroups('acme', { filter: parseScimFilter('Group', 'displayName eq "staff"'), startIndex: 1, count: 10 })
    await store.updateUser('acme', ada.id, (current) => ({ ...current, active: false }))
    await assertNoSequentialScan(statements, 'displayName eq and the deactivation', `directory_${databases}`)
  })

  test('instances opening together apply each migration once; a reopened store applies none', async () => {
    const connectionString = await freshDatabase()
    const stores = await Promise.all([1, 2, 3].map(async () => await openPostgresDirectoryStore({ connectionString })))
    const versions = await server.sql('SELECT version FROM directory_schema_migrations ORDER BY version', [], `directory_${databases}`)
    assert.deepEqual(versions.map((row) => row.version), MIGRATION_VERSIONS)
    await Promise.all(stores.map(async (store) => { await store.close() }))
    const reopened = await openPostgresDirectoryStore({ connectionString })
    assert.equal((await server.sql('SELECT COUNT(*)::int AS n FROM directory_schema_migrations', [], `directory_${databases}`))[0]?.n, MIGRATION_VERSIONS.length)
    await reopened.close()
  })

  test('two instances on one database see each other\'s writes and keep one uniqueness rule', async (t) => {
    const connectionString = await freshDatabase()
    const [one, two] = await Promise.all([openPostgresDirectoryStore({ connectionString }), openPostgresDirectoryStore({ connectionString })]) as [DirectoryStore, DirectoryStore]
    t.after(async () => { await one.close(); await two.close() })
    const ada = await one.createUser('acme', { userName: 'ada', active: true, attributes: {} })
    const update = await two.updateUser('acme', ada.id, (current) => ({ ...current, active: false }))
    assert.equal(update?.after.active, false)
    assert.equal((await one.getUser('acme', ada.id))?.active, false)
    await assert.rejects(two.createUser('acme', { userName: 'ADA', active: true, attributes: {} }), { name: 'DirectoryConflictError' })
    await one.addToken('acme', { id: 't1', digest: 'sha256:1' })
    await two.addToken('acme', { id: 't2', digest: 'sha256:2' })
    await assert.rejects(one.addToken('acme', { id: 't3', digest: 'sha256:3' }), { name: 'DirectoryConflictError' })
    assert.equal(await two.revokeToken('acme', 't1'), true)
    assert.deepEqual((await one.activeTokens('acme')).map((token) => token.id), ['t2'])
  })

  test('a server that cannot be reached is "unavailable", and no message names the connection string', async () => {
    const secret = 'p4ss-w0rd-never-shown'
    const unreachable = `postgres://app:${secret}@127.0.0.1:1/directory`
    await assert.rejects(openPostgresDirectoryStore({ connectionString: unreachable, timeoutMs: 1000 }), (error: unknown) => {
      assert.ok(error instanceof DirectoryStoreUnavailableError)
      assert.equal(error.reason, 'unreachable')
      assert.ok(!error.message.includes(secret) && !error.message.includes('127.0.0.1'))
      return true
    })
  })
})

async function assertNoSequentialScan (statements: readonly RecordedStatement[], what: string, database: string): Promise<void> {
  const reads = statements.filter((statement) => /^\s*(SELECT|UPDATE|DELETE)/i.test(statement.sql) && !statement.sql.includes('pg_advisory'))
  assert.ok(reads.length > 0, what)
  for (const statement of reads) {
    let index = 0
    const sql = statement.sql.replace(/\?/g, () => `$${++index}`)
    const plan = await server.sql(`EXPLAIN ${sql}`, [...statement.parameters], database)
    const text = plan.map((row) => String(row['QUERY PLAN'])).join('\n')
    assert.ok(!/Seq Scan on directory_users|Seq Scan on directory_groups/.test(text), `${what}: ${sql}\n${text}`)
    // An index read on the connection alone would read all its rows: the condition names more.
    assert.ok(!/Index Cond: \(connection = [^)]*\)\s*$/m.test(text), `${what}: ${sql}\n${text}`)
  }
}
