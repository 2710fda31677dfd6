/**
 * The `pg` driver is loaded only when a PostgreSQL directory store opens: an app that imports the
 * core, even one that opens the embedded directory store, never loads it (issue 41: "load pg
 * lazily so apps that don't use it pay nothing at startup"). Checked in a fresh process.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { CORE_ROOT } from '../helpers/app.js'

const SCRIPT = `
const { createRequire } = await import('node:module')
const cache = createRequire(process.cwd() + '/').cache
const loaded = () => Object.keys(cache).some((file) => file.includes('/node_modules/pg/'))
const core = await import('./src/index.ts')
const afterImport = loaded()
const embedded = await core.openEmbeddedDirectoryStore({ dataDirectory: undefined, contentRoot: process.cwd() })
await embedded.close()
const afterEmbedded = loaded()
await core.openPostgresDirectoryStore({ connectionString: 'postgres://app@127.0.0.1:1/app', timeoutMs: 500 }).catch(() => {})
console.log(JSON.stringify({ afterImport, afterEmbedded, afterPostgres: loaded() }))
`

test('importing the core and opening the embedded directory store load no pg; opening a PostgreSQL store does', () => {
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], { cwd: CORE_ROOT, encoding: 'utf8', timeout: 60_000 })
  assert.equal(result.status, 0, result.stderr)
  assert.deepEqual(JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}'), { afterImport: false, afterEmbedded: false, afterPostgres: true })
})
