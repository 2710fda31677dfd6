/**
 * The embedded store's file belongs to one process, and a file SQLite cannot read stops startup
 * with a configuration message (issue 26, items 3 and 5; src/state/state-file-lock.ts).
 *
 * With real app processes (src/server.ts): a second process on the same DataDirectory exits 1
 * with one `configuration.invalid` line that says the embedded store is for one process and names
 * `State:Provider` Redis, while the first keeps serving; after the first is SIGKILLed, a new
 * process starts on the same directory at once (the operating system dropped the lock). A state
 * file truncated to half its size, or replaced by text, makes startup exit 1 with one
 * `configuration.invalid` line naming the file, `State:Embedded:DataDirectory` and the choices,
 * no stack trace, and the file byte for byte as it was.
 *
 * Needs node:sqlite (Node.js 22.13+): skipped, saying so, on Node.js 20, where the embedded store
 * is kept in memory only and there is no file to share (test/state/in-memory-fallback.test.ts).
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LogCapture, settingsToEnv } from '../helpers/app.js'
import { createApp } from '../../src/create-app.js'
import { loadConfiguration } from '../../src/configuration.js'
import { createKeyRing } from '../../src/data-protection/key-ring.js'
import { createLogger } from '../../src/logger.js'
import { closedPort } from '../helpers/ports.js'
import { cleanEnv, runEntryPoint, type Running } from '../helpers/process.js'
import { ConfigurationError } from '../../src/errors.js'
import { loadSqlite, prepareStateFile, SqliteJournal, STATE_FILE } from '../../src/state/sqlite-journal.js'

const sqlite = await loadSqlite()
const skip = sqlite === undefined ? `node:sqlite is missing on Node.js ${process.versions.node} (it needs 22.13 or later); the embedded store is in memory there, with no file to lock or to corrupt` : false

const ROOT = 'ProjectTemplate'

function envFor (dataDirectory: string, port: number): NodeJS.ProcessEnv {
  const settings = {
    DataProtection: { Keys: [randomBytes(32).toString('base64')] },
    Hosting: { ShutdownDelaySeconds: 0 },
    State: { Provider: 'Embedded', Embedded: { Persist: true, DataDirectory: dataDirectory } }
  }
  return cleanEnv({ ...settingsToEnv(settings), NODE_ENV: 'development', HOST: '127.0.0.1', PORT: String(port), NO_COLOR: '1' })
}

/** The process's JSON log lines. */
function records (run: Running): Array<Record<string, unknown>> {
  return run.stdout().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>)
}

/** Starts a process that must refuse: its exit code and its one configuration.invalid message. */
async function refusal (dataDirectory: string): Promise<{ code: number | string, errors: string[], output: string }> {
  const run = runEntryPoint('src/server.ts', envFor(dataDirectory, await closedPort()))
  const code = await run.exited(60_000)
  const invalid = records(run).filter((record) => record.event === 'configuration.invalid')
  assert.equal(invalid.length, 1, `one configuration.invalid line; stdout: ${run.stdout()} stderr: ${run.stderr()}`)
  return { code, errors: invalid[0]?.errors as string[], output: `${run.stdout()}${run.stderr()}` }
}

const sha256 = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex')

describe('the embedded state file is one process\'s', { skip }, () => {
  let directory = ''
  const running: Running[] = []

  before(() => { directory = mkdtempSync(join(tmpdir(), 'state-file-lock-')) })
  after(async () => {
    for (const run of running) run.kill()
    await Promise.all(running.map(async (run) => await run.exited(10_000).catch(() => undefined)))
    rmSync(directory, { recursive: true, force: true })
  })

  async function start (dataDirectory: string): Promise<{ run: Running, port: number }> {
    const port = await closedPort()
    const run = runEntryPoint('src/server.ts', envFor(dataDirectory, port))
    running.push(run)
    await run.waitForLine((record) => typeof record.msg === 'string' && record.msg.startsWith('Server listening at'), 60_000)
    return { run, port }
  }

  test('a second process on the same DataDirectory refuses to start, naming State:Provider Redis; after a SIGKILL of the first, a new one starts', { timeout: 120_000 }, async () => {
    const dataDirectory = join(directory, 'shared')
    const first = await start(dataDirectory)
    const second = await refusal(dataDirectory)
    assert.equal(second.code, 1)
    assert.deepEqual(second.errors, [
      `${ROOT}:State:Embedded:DataDirectory (${dataDirectory}) is in use by another process: the embedded state store is for one process only. ` +
      `To run several instances, set ${ROOT}:State:Provider to Redis (docs/scale-out.md); to run one, stop the other process or give this one its own ${ROOT}:State:Embedded:DataDirectory.`
    ])
    assert.doesNotMatch(second.output, /\n\s+at /, 'no stack trace')
    const health = await fetch(`http://127.0.0.1:${first.port}/health/live`, { signal: AbortSignal.timeout(10_000) })
    assert.equal(health.status, 200, 'the first process keeps serving')

    first.run.child.kill('SIGKILL')
    assert.equal(await first.run.exited(20_000), 'SIGKILL')
    const third = await start(dataDirectory)
    assert.ok(records(third.run).some((record) => record.event === 'state.embedded.persisted'), 'the new process opened the file')
  })

  for (const [name, damage] of [
    ['truncated to half its size', (file: string) => { truncateSync(file, Math.floor(statSync(file).size / 2)) }],
    ['replaced by text', (file: string) => { writeFileSync(file, 'not a database\n'.repeat(64)) }]
  ] as const) {
    test(`a state file ${name}: one configuration.invalid line naming the file, the setting and the choices; exit 1; the file untouched`, { timeout: 60_000 }, async () => {
      assert.ok(sqlite !== undefined)
      const dataDirectory = join(directory, name.replaceAll(' ', '-'))
      const file = prepareStateFile(dataDirectory, directory, ROOT)
      const { journal } = SqliteJournal.open(sqlite, file, Date.now(), {}, ROOT)
      for (let index = 0; index < 2000; index++) journal.put(`session:${index}`, 'session', 'v'.repeat(200), Date.now() + 3_600_000)
      await journal.committed()
      await journal.close()
      damage(file)
      const before = sha256(file)
      const refused = await refusal(dataDirectory)
      assert.equal(refused.code, 1)
      assert.equal(refused.errors.length, 1)
      const [message] = refused.errors
      assert.match(message ?? '', new RegExp(`^${ROOT}:State:Embedded:DataDirectory: the embedded state store's file ${file.replaceAll('.', '\\.')} is corrupt or truncated \\(SQLite: (database disk image is malformed|file is not a database)\\); it was left untouched\\. `))
      assert.ok(message?.includes('Restore it from a backup; or move it (with any state.sqlite-wal and -shm beside it) aside to start with an empty store (every user signs in again); ' +
        `or set ${ROOT}:State:Embedded:Persist to false to keep state in memory only.`), message)
      assert.doesNotMatch(refused.output, /\n\s+at |vvvvvvvv/, 'no stack trace, no file content')
      assert.equal(sha256(file), before, 'the file is left as it was')
      assert.equal(file, join(dataDirectory, STATE_FILE))
    })
  }

  test('under an application name the message names that root key (Contoso:State:Provider)', async () => {
    assert.ok(sqlite !== undefined)
    const root = join(directory, 'contoso')
    const dataDirectory = join(root, 'state')
    const file = prepareStateFile(dataDirectory, root, ROOT)
    writeFileSync(join(root, 'appsettings.json'), JSON.stringify({ Contoso: { Logging: { Level: 'error' } } }))
    mkdirSync(join(root, 'public'))
    const { journal } = SqliteJournal.open(sqlite, file, Date.now(), {}, ROOT)
    try {
      const loaded = loadConfiguration({
        env: { Contoso__Authentication__Enabled: 'true', Contoso__State__Embedded__Persist: 'true', Contoso__State__Embedded__DataDirectory: dataDirectory, XDG_CONFIG_HOME: '/nonexistent-test-config' },
        contentRoot: root,
        applicationName: 'Contoso'
      })
      assert.deepEqual(loaded.errors, [])
      await assert.rejects(createApp({
        config: loaded.config,
        environmentName: loaded.environmentName,
        contentRoot: root,
        logger: createLogger('error', new LogCapture()),
        keyRing: createKeyRing([randomBytes(32)], '', 'Contoso'),
        applicationName: 'Contoso'
      }), (error: unknown) => error instanceof ConfigurationError &&
        error.problems[0]?.key === 'Contoso:State:Embedded:DataDirectory' &&
        error.message.includes('set Contoso:State:Provider to Redis') && !error.message.includes('ProjectTemplate'))
    } finally {
      await journal.close()
    }
  })

  test('in one process too: a second journal on an open file is refused; once the first is closed it opens', async () => {
    assert.ok(sqlite !== undefined)
    const file = prepareStateFile(join(directory, 'in-process'), directory, ROOT)
    const { journal } = SqliteJournal.open(sqlite, file, Date.now(), {}, ROOT)
    assert.throws(() => SqliteJournal.open(sqlite, file, Date.now(), {}, ROOT), (error: unknown) =>
      error instanceof ConfigurationError && error.problems[0]?.key === `${ROOT}:State:Embedded:DataDirectory` && /is in use by another process/.test(error.message))
    await journal.close()
    const again = SqliteJournal.open(sqlite, file, Date.now(), {}, ROOT)
    await again.journal.close()
  })
})
