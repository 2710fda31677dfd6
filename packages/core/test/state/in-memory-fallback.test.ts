/**
 * Where node:sqlite is missing (Node.js 20, end of life; 22 before 22.13), an app asking for the
 * persisted embedded store starts in memory with one warning that says so
 * (`state.embedded.not_persisted`); where it is present, the store is persisted and no such
 * warning is written. `State:Embedded:Persist` false is memory without a warning. Runs on every
 * Node.js line, each branch asserting what that line must do.
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildTestApp } from '../helpers/app.js'
import { loadSqlite } from '../../src/state/sqlite-journal.js'
import type { EmbeddedStateStore } from '../../src/state/embedded-store.js'

const hasSqlite = await loadSqlite() !== undefined
const root = mkdtempSync(join(tmpdir(), 'in-memory-fallback-'))
after(() => { rmSync(root, { recursive: true, force: true }) })

describe('the embedded store with Persist true (the default)', () => {
  test(hasSqlite
    ? `Node.js ${process.versions.node} has node:sqlite: persisted, no not_persisted warning`
    : `Node.js ${process.versions.node} has no node:sqlite: in memory, with one state.embedded.not_persisted warning`, async () => {
    const directory = join(root, 'default')
    const { app, logs } = await buildTestApp({ settings: { State: { Embedded: { Persist: true, DataDirectory: directory } } } })
    try {
      const warnings = logs.events('state.embedded.not_persisted')
      if (hasSqlite) {
        assert.deepEqual(warnings, [])
        assert.equal((app.state as EmbeddedStateStore).persisted, true)
        assert.equal(logs.events('state.embedded.persisted').length, 1)
        assert.ok(existsSync(join(directory, 'state.sqlite')))
      } else {
        assert.equal(warnings.length, 1)
        assert.equal(warnings[0]?.level, 40)
        assert.equal(warnings[0]?.key, 'ProjectTemplate:State:Embedded:Persist')
        assert.equal(warnings[0]?.msg, 'node:sqlite is not available on this Node.js (it needs 22.13 or later): the embedded state store is kept in memory only, so a restart signs every user out')
        assert.equal((app.state as EmbeddedStateStore).persisted, false)
        assert.equal(existsSync(directory), false, 'no directory made for a file that is never written')
      }
    } finally {
      await app.close()
    }
  })

  test('Persist false: in memory, no file, no warning', async () => {
    const directory = join(root, 'off')
    const { app, logs } = await buildTestApp({ settings: { State: { Embedded: { Persist: false, DataDirectory: directory } } } })
    try {
      assert.deepEqual(logs.events('state.embedded.not_persisted'), [])
      assert.equal((app.state as EmbeddedStateStore).persisted, false)
      assert.equal(existsSync(directory), false)
    } finally {
      await app.close()
    }
  })
})
