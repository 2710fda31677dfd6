/**
 * The embedded store written through to SQLite (issue 20, item 7): the same behaviour and bounds
 * as in memory (the suites of test/state/state-stores.test.ts, unchanged, against the persisted
 * variant); everything comes back after a reopen (values, sets, counts, characters, the session
 * eviction order), deletions and evictions stay done, expired rows are swept; the directory is
 * 0700 and the file 0600, an open directory is refused. Needs node:sqlite (Node.js 22.13+):
 * skipped, saying so, where it is missing. The Node 20 fallback is in-memory-fallback.test.ts.
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EmbeddedStateStore, type EmbeddedStoreLimits } from '../../src/state/embedded-store.js'
import { loadSqlite, prepareStateFile, SqliteJournal, STATE_FILE } from '../../src/state/sqlite-journal.js'
import { ConfigurationError } from '../../src/errors.js'
import { ROOT_KEY } from '../../src/config/schema.js'
import { StateStoreUnavailableError } from '../../src/state/state-store.js'
import { waitFor } from '../helpers/wait.js'
import { behavesLikeAStore, embeddedStoreBounds } from '../helpers/store-behaviour.js'

const sqlite = await loadSqlite()
const skip = sqlite === undefined ? `node:sqlite is missing on Node.js ${process.versions.node} (it needs 22.13 or later); the store stays in memory there` : false

const root = mkdtempSync(join(tmpdir(), 'embedded-persistence-'))
after(() => { rmSync(root, { recursive: true, force: true }) })
let directories = 0
const newDirectory = (): string => join(root, `store-${++directories}`)

const LIMITS: EmbeddedStoreLimits = { maxEntries: { session: 100, index: 100, flow: 100, replay: 100, lock: 10 }, maxCharacters: 1_000_000 }

/** A persisted store in `directory`, loaded from what is there. */
function open (directory: string, limits: EmbeddedStoreLimits = LIMITS, now: () => number = Date.now): EmbeddedStateStore {
  if (sqlite === undefined) throw new Error('node:sqlite is missing')
  const { journal, records } = SqliteJournal.open(sqlite, prepareStateFile(directory, root, ROOT_KEY), now(), {}, ROOT_KEY)
  const store = new EmbeddedStateStore(limits, now, journal)
  store.load(records)
  return store
}

/** Rows in the file, read by a second connection. */
function rows (directory: string): Array<{ key: string, member: string }> {
  if (sqlite === undefined) throw new Error('node:sqlite is missing')
  const db = new sqlite.DatabaseSync(join(directory, STATE_FILE))
  try {
    return (db.prepare('SELECT key, member FROM state ORDER BY key, member').all() as Array<{ key: string, member: string }>).map(({ key, member }) => ({ key, member }))
  } finally {
    db.close()
  }
}

describe('the embedded store written through to SQLite', { skip }, () => {
  behavesLikeAStore('Embedded (SQLite)', async () => open(newDirectory()))
  embeddedStoreBounds('Embedded (SQLite)', async (limits) => open(newDirectory(), limits))

  test('after a reopen: the same values, sets, counts and characters; deleted and removed stay gone', async () => {
    const directory = newDirectory()
    const first = open(directory)
    await first.set('session:1', 'sealed-1', 60_000)
    await first.set('session:2', 'sealed-2', 60_000)
    await first.addMember('index:subject:s', '1', 60_000)
    await first.addMember('index:subject:s', '2', 60_000)
    await first.removeMember('index:subject:s', '2')
    await first.delete(['session:2'])
    assert.equal(await first.add('replay:sign-in-flow:f', 'used', 60_000), true)
    await first.set('flow:saml2-logout:r', 'pending', 60_000)
    assert.equal(await first.replace('flow:saml2-logout:r', 'used'), 'pending')
    assert.equal(await first.update('session:1', 'sealed-1b', 60_000), true)
    const characters = first.characters
    const counts = first.counts()
    await first.close()

    const second = open(directory)
    assert.equal(await second.get('session:1'), 'sealed-1b')
    assert.equal(await second.get('session:2'), undefined, 'a deleted session (a logout) stays deleted')
    assert.deepEqual(await second.members('index:subject:s'), ['1'], 'a removed member stays removed')
    assert.equal(await second.add('replay:sign-in-flow:f', 'again', 60_000), false, 'a used flow stays used')
    assert.equal(await second.replace('flow:saml2-logout:r', 'used'), 'used', 'a used pending sign-out stays used')
    assert.equal(second.characters, characters)
    assert.deepEqual(second.counts(), counts)
    await second.close()
  })

  test('the least recently written session is still the first evicted after a reopen', async () => {
    const directory = newDirectory()
    const limits: EmbeddedStoreLimits = { ...LIMITS, maxEntries: { ...LIMITS.maxEntries, session: 3 } }
    const first = open(directory, limits)
    await first.set('session:a', 'a', 60_000)
    await first.set('session:b', 'b', 60_000)
    await first.set('session:a', 'a2', 60_000)
    await first.close()
    const second = open(directory, limits)
    await second.set('session:c', 'c', 60_000)
    await second.set('session:d', 'd', 60_000)
    assert.equal(await second.get('session:b'), undefined, 'b was written least recently')
    assert.equal(await second.get('session:a'), 'a2')
    await second.close()
  })

  test('an evicted session and its index entries stay gone after a reopen, and its eviction was announced', async () => {
    const directory = newDirectory()
    const limits: EmbeddedStoreLimits = { ...LIMITS, maxEntries: { ...LIMITS.maxEntries, session: 1 } }
    const first = open(directory, limits)
    const announced: string[] = []
    first.subscribe({ onInvalidate: (message) => { announced.push(message) }, onReset: () => {} })
    await first.set('session:old', 'old', 60_000)
    await first.addMember('index:subject:u', 'old', 60_000)
    await first.set('session:new', 'new', 60_000)
    assert.deepEqual(announced, ['sessions:old'])
    await first.close()
    const second = open(directory, limits)
    assert.equal(await second.get('session:old'), undefined)
    assert.deepEqual(await second.members('index:subject:u'), [])
    assert.deepEqual(rows(directory), [{ key: 'session:new', member: '' }])
    await second.close()
  })

  test('a set keeps the longest lifetime of its members after a reopen', async () => {
    let clock = 1_000_000
    const directory = newDirectory()
    const first = open(directory, LIMITS, () => clock)
    await first.addMember('index:subject:x', 'long', 60_000)
    await first.addMember('index:subject:x', 'short', 1_000)
    await first.close()
    clock += 30_000
    const second = open(directory, LIMITS, () => clock)
    assert.deepEqual((await second.members('index:subject:x')).sort(), ['long', 'short'])
    await second.close()
  })

  test('expired records are not loaded and are swept from the file; a record written after expiry replaces the old rows', async () => {
    let clock = 2_000_000
    const directory = newDirectory()
    const first = open(directory, LIMITS, () => clock)
    await first.set('lock:token-refresh:s', '1', 1_000)
    await first.addMember('index:subject:e', 'gone', 1_000)
    await first.set('session:kept', 'kept', 60_000)
    clock += 2_000
    await first.addMember('index:subject:e', 'fresh', 60_000)
    await first.close()
    const second = open(directory, LIMITS, () => clock)
    assert.equal(await second.get('lock:token-refresh:s'), undefined)
    assert.deepEqual(await second.members('index:subject:e'), ['fresh'], 'the expired member did not come back with the new one')
    second.sweep()
    await second.set('session:other', 'x', 60_000)
    assert.deepEqual(rows(directory).map((row) => row.key), ['index:subject:e', 'session:kept', 'session:other'])
    await second.close()
  })

  test('a write resolves once committed: a second connection sees it at once', async () => {
    const directory = newDirectory()
    const store = open(directory)
    await store.add('replay:saml2-assertion:h', 'used', 60_000)
    assert.deepEqual(rows(directory), [{ key: 'replay:saml2-assertion:h', member: '' }])
    await store.delete(['replay:saml2-assertion:h'])
    assert.deepEqual(rows(directory), [])
    await store.close()
  })

  test('a commit that fails makes the store unavailable and the write reject; it recovers by itself once commits succeed', async () => {
    if (sqlite === undefined) return
    const directory = newDirectory()
    const failures: unknown[] = []
    let recovered = 0
    const { journal } = SqliteJournal.open(sqlite, prepareStateFile(directory, root, ROOT_KEY), Date.now(), {
      onWriteFailed: (error) => { failures.push(error) },
      onWriteRecovered: () => { recovered++ }
    }, ROOT_KEY)
    const store = new EmbeddedStateStore(LIMITS, Date.now, journal)
    await store.set('session:before', 'kept', 60_000)
    // Another connection takes the table away: every commit of the store fails from now on.
    const other = new sqlite.DatabaseSync(join(directory, STATE_FILE))
    other.exec('ALTER TABLE state RENAME TO broken')
    await assert.rejects(store.add('replay:sign-in-flow:x', 'used', 60_000), (error: unknown) => error instanceof StateStoreUnavailableError && error.reason === 'write_failed')
    assert.deepEqual(store.status(), { available: false, reason: 'write_failed' })
    assert.equal(failures.length, 1)
    other.exec('ALTER TABLE broken RENAME TO state')
    other.close()
    await waitFor(() => store.status().available, 'the retried commit', 5000)
    assert.equal(recovered, 1)
    await store.close()
    assert.deepEqual(rows(directory), [{ key: 'replay:sign-in-flow:x', member: '' }, { key: 'session:before', member: '' }], 'the failed write was kept and committed on retry')
  })

  test('the directory is created 0700 and the file 0600', async () => {
    const directory = newDirectory()
    const store = open(directory)
    await store.set('session:m', 'm', 60_000)
    assert.equal(statSync(directory).mode & 0o777, 0o700)
    for (const name of [STATE_FILE, `${STATE_FILE}-wal`]) assert.equal(statSync(join(directory, name)).mode & 0o777, 0o600, name)
    await store.close()
  })

  test('a directory open to others is refused, naming the setting', () => {
    const directory = newDirectory()
    mkdirSync(directory, { mode: 0o755 })
    chmodSync(directory, 0o755)
    assert.throws(() => prepareStateFile(directory, root, ROOT_KEY), (error: unknown) => error instanceof ConfigurationError &&
      error.problems[0]?.message === 'ProjectTemplate:State:Embedded:DataDirectory must be accessible to its owner only (mode 0700); it has mode 0755. Run chmod 700 on it.')
  })
})
