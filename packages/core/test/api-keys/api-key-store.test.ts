/**
 * The API key stores (issue 42, item 3): the conformance suite (src/testing/api-key-store.ts)
 * against the memory store, SQLite (node:sqlite, Node.js 22.13+; skipped, saying so, where it is
 * missing) and a real PostgreSQL (test/helpers/postgres-server.ts), each sharing its directory
 * store's database; and migration 200 applied to a directory database of the previous release
 * (version 1 only), keeping its users.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { apiKeyStoreBeside } from '../../src/api-keys/open-api-key-store.js'
import { MemoryApiKeyStore } from '../../src/api-keys/memory-api-key-store.js'
import { SqlApiKeyStore } from '../../src/api-keys/sql-api-key-store.js'
import type { ApiKeyStore } from '../../src/api-keys/api-key-store.js'
import type { DirectoryStore } from '../../src/directory/directory-store.js'
import { MemoryDirectoryStore } from '../../src/directory/memory-directory-store.js'
import { openEmbeddedDirectoryStore, openPostgresDirectoryStore } from '../../src/directory/open-directory-store.js'
import { MIGRATION_VERSIONS } from '../../src/directory/sql-schema.js'
import { loadSqlite } from '../../src/state/sqlite-journal.js'
import { describeApiKeyStore } from '../../src/testing/api-key-store.js'
import { PostgresServer } from '../helpers/postgres-server.js'

const sqlite = await loadSqlite()
const noSqlite = sqlite === undefined ? `node:sqlite is missing on Node.js ${process.versions.node} (it needs 22.13 or later)` : false

/** The key store beside `directory`, closing the directory with it. */
function beside (directory: DirectoryStore, now: () => number): ApiKeyStore {
  const store = apiKeyStoreBeside(directory, { now })
  assert.ok(store !== undefined)
  return Object.assign(store, { close: async () => { await directory.close() } })
}

describeApiKeyStore('memory', async ({ now }) => new MemoryApiKeyStore({ now }))

const roots: string[] = []
process.on('exit', () => { for (const root of roots) rmSync(root, { recursive: true, force: true }) })
describeApiKeyStore('SQLite', async ({ now }) => {
  const root = mkdtempSync(join(tmpdir(), 'pt-api-keys-'))
  roots.push(root)
  return beside(await openEmbeddedDirectoryStore({ dataDirectory: '.state', contentRoot: root, now }), now)
}, { skip: noSqlite })

const server = new PostgresServer()
before(async () => { await server.start() })
after(async () => { await server.dispose() })
let databases = 0

describeApiKeyStore('PostgreSQL', async ({ now }) => beside(await openPostgresDirectoryStore({ connectionString: await server.createDatabase(`api_keys_${++databases}`), now }), now))

test('the key store shares the directory store\'s database on SQL stores, memory beside memory, none beside an app\'s own', async () => {
  assert.ok(apiKeyStoreBeside(new MemoryDirectoryStore()) instanceof MemoryApiKeyStore)
  const directory = await openPostgresDirectoryStore({ connectionString: await server.createDatabase(`api_keys_${++databases}`) })
  try {
    assert.ok(apiKeyStoreBeside(directory) instanceof SqlApiKeyStore)
  } finally {
    await directory.close()
  }
  assert.equal(apiKeyStoreBeside({ provider: 'Mine' } as unknown as DirectoryStore), undefined)
})

test('PostgreSQL: a directory database of the previous release (migration 1 only) gains the API key table at the next opening, its users kept', async () => {
  const name = `api_keys_${++databases}`
  const connectionString = await server.createDatabase(name)
  const first = await openPostgresDirectoryStore({ connectionString })
  const ada = await first.createUser('acme', { userName: 'ada', active: true, attributes: {} })
  await first.close()
  await server.sql('DROP TABLE directory_api_keys', [], name)
  await server.sql('DELETE FROM directory_schema_migrations WHERE version = 200', [], name)
  const reopened = await openPostgresDirectoryStore({ connectionString })
  try {
    assert.deepEqual((await server.sql('SELECT version FROM directory_schema_migrations ORDER BY version', [], name)).map((row) => row.version), MIGRATION_VERSIONS)
    assert.deepEqual(MIGRATION_VERSIONS, [1, 200])
    assert.deepEqual(await reopened.getUser('acme', ada.id), ada)
    const keys = apiKeyStoreBeside(reopened)
    assert.deepEqual(await keys?.listApiKeys({ kind: 'tenant', tenant: 'acme' }), [])
  } finally {
    await reopened.close()
  }
})
