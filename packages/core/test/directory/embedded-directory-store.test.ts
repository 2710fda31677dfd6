/**
 * The embedded directory store: the conformance suite (src/testing/directory-store.ts) against it
 * in memory and on SQLite (node:sqlite, Node.js 22.13+; skipped, saying so, where it is missing),
 * and how it is opened: SQLite beside the state file, owner-only, migrated once; in memory with
 * one warning on a Node.js without node:sqlite.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MemoryDirectoryStore } from '../../src/directory/memory-directory-store.js'
import { openEmbeddedDirectoryStore } from '../../src/directory/open-directory-store.js'
import { DIRECTORY_FILE } from '../../src/directory/sqlite-directory-database.js'
import { loadSqlite } from '../../src/state/sqlite-journal.js'
import { describeDirectoryStore } from '../../src/testing/directory-store.js'

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
