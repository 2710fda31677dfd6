/**
 * The embedded directory store: the conformance suite (src/testing/directory-store.ts) against it
 * in memory and on SQLite (node:sqlite, Node.js 22.13+; skipped, saying so, where it is missing),
 * how it is opened (SQLite beside the state file, owner-only, migrated once; in memory with one
 * warning on a Node.js without node:sqlite), and, with 10,000 users in one connection, the
 * SQLite query plans of the common filters (EXPLAIN QUERY PLAN: an index, never a scan).
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseScimFilter } from '../../src/directory/filter-parser.js'
import { MemoryDirectoryStore } from '../../src/directory/memory-directory-store.js'
import { openEmbeddedDirectoryStore } from '../../src/directory/open-directory-store.js'
import { SqlDirectoryStore } from '../../src/directory/sql-directory-store.js'
import { DIRECTORY_FILE, SqliteDirectoryDatabase } from '../../src/directory/sqlite-directory-database.js'
import { prepareStateFile } from '../../src/state/sqlite-journal.js'
import { loadSqlite } from '../../src/state/sqlite-journal.js'
import { ROOT_KEY } from '../../src/config/schema.js'
import { describeDirectoryStore } from '../../src/testing/directory-store.js'
import { INDEXED_FILTERS, recording, type RecordedStatement } from './recording-database.js'

const sqlite = await loadSqlite()
const noSqlite = sqlite === undefined ? `node:sqlite is missing on Node.js ${process.versions.node} (it needs 22.13 or later); the embedded directory store is in memory there` : false

function temporaryRoot (t: { after: (fn: () => void) => void }): string {
  const root = mkdtempSync(join(tmpdir(), 'pt-directory-'))
  t.after(() => { rmSync(root, { recursive: true, force: true }) })
  return root
}

describeDirectoryStore('memory', async ({ now }) => new MemoryDirectoryStore({ now }))

const roots: string[] = []
process.on('exit', () => { for (const root of roots) rmSync(root, { recursive: true, force: true }) })
describeDirectoryStore('SQLite', async ({ now }) => {
  const root = mkdtempSync(join(tmpdir(), 'pt-directory-'))
  roots.push(root)
  return await openEmbeddedDirectoryStore({ dataDirectory: '.state', contentRoot: root, now })
}, { skip: noSqlite })

describe('opening the embedded directory store', () => {
  test('on a Node.js without node:sqlite: memory, with one warning naming the key', { skip: sqlite === undefined ? false : 'node:sqlite is present here' }, async (t) => {
    const warnings: Array<{ data: object, message: string }> = []
    const log = { info: () => {}, error: () => {}, warn: (data: object, message: string) => { warnings.push({ data, message }) } }
    const store = await openEmbeddedDirectoryStore({ dataDirectory: '.state', contentRoot: temporaryRoot(t), log })
    assert.ok(store instanceof MemoryDirectoryStore)
    assert.equal(warnings.length, 1)
    assert.deepEqual(warnings[0]?.data, { event: 'directory.embedded.not_persisted', node: process.versions.node, key: 'ProjectTemplate:Provisioning:Store:Provider' })
  })

  test('with node:sqlite: directory.sqlite beside the state file, owner-only, and what was written survives a reopening', { skip: noSqlite }, async (t) => {
    const root = temporaryRoot(t)
    const store = await openEmbeddedDirectoryStore({ dataDirectory: '.state', contentRoot: root })
    assert.ok(!(store instanceof MemoryDirectoryStore))
    const ada = await store.createUser('acme', { userName: 'ada', active: true, attributes: {} })
    await store.addToken('acme', { id: 't1', digest: 'sha256:abc' })
    await store.close()
    const file = join(root, '.state', DIRECTORY_FILE)
    assert.equal(statSync(file).mode & 0o777, 0o600)
    assert.equal(statSync(join(root, '.state')).mode & 0o777, 0o700)
    const reopened = await openEmbeddedDirectoryStore({ dataDirectory: '.state', contentRoot: root })
    t.after(async () => { await reopened.close() })
    assert.deepEqual(await reopened.getUser('acme', ada.id), ada)
    assert.deepEqual((await reopened.activeTokens('acme')).map((token) => token.digest), ['sha256:abc'])
  })

  test('no data directory: memory, without a warning', async () => {
    const warnings: unknown[] = []
    const store = await openEmbeddedDirectoryStore({ dataDirectory: undefined, contentRoot: '/nonexistent', log: { info: () => {}, error: () => {}, warn: (data) => { warnings.push(data) } } })
    assert.ok(store instanceof MemoryDirectoryStore)
    assert.deepEqual(warnings, [])
  })
})

test('SQLite: with 10,000 users in one connection the common filters search an index, never scan the table', { skip: noSqlite }, async (t) => {
  if (sqlite === undefined) throw new Error('node:sqlite is missing')
  const file = prepareStateFile('.state', temporaryRoot(t), ROOT_KEY, DIRECTORY_FILE)
  const statements: RecordedStatement[] = []
  const store = new SqlDirectoryStore(recording(SqliteDirectoryDatabase.open(sqlite, file, Date.now(), ROOT_KEY), statements))
  t.after(async () => { await store.close() })
  const ada = await store.createUser('acme', { userName: 'Ada', externalId: 'ext-ada', active: true, attributes: {} })
  const db = new sqlite.DatabaseSync(file) as unknown as { exec: (sql: string) => void, prepare: (sql: string) => { all: (...values: unknown[]) => Array<Record<string, unknown>> }, close: () => void }
  t.after(() => { db.close() })
  db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 11110)
    INSERT INTO directory_users (connection, id, external_id, user_name, user_name_key, active, attributes, created_ms, last_modified_ms, version)
    SELECT CASE WHEN i % 10 = 0 THEN 'other' ELSE 'acme' END, 'u-' || i, 'ext-' || i, 'user' || i, 'user' || i, i % 7 <> 0, '{}', 1700000000000 + i, 1700000000000 + i, 1 FROM n;
    ANALYZE;`)
  for (const text of INDEXED_FILTERS(ada.id, new Date(1_700_000_011_000).toISOString())) {
    statements.length = 0
    const page = await store.listUsers('acme', { filter: parseScimFilter('User', text), startIndex: 1, count: 10 })
    assert.ok(page.totalResults >= 1, text)
    for (const statement of statements) {
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${statement.sql}`).all(...statement.parameters.map((value) => typeof value === 'boolean' ? Number(value) : value))
      const detail = plan.map((row) => String(row.detail)).join('; ')
      // A full scan shows as SCAN (of the table, or of a whole index); a look-up as SEARCH ... USING INDEX
      // on the connection and at least one more column (the connection alone would read all its users).
      assert.doesNotMatch(detail, /\bSCAN directory_users\b/, `${text}: ${statement.sql}`)
      assert.match(detail, /SEARCH directory_users USING (COVERING )?INDEX \w+ \(connection=\? AND /, `${text}: ${statement.sql}: ${detail}`)
    }
  }
})
