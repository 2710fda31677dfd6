/**
 * Every refusal names the setting and the next step in the app's own root key (issue 26, item 9):
 * an app named AcmePortal hears about `AcmePortal:...` keys, never `ProjectTemplate:...`. A key
 * directory or data directory that cannot be created says what to do (make it writable, point
 * the key elsewhere, or the alternative that needs no directory); the 400 for a host that is not
 * allowed names `PublicOrigin` and `AllowedHosts` on the page and in the problem, never the host
 * sent, while the log line names the host for the operator. The data-directory case needs
 * `node:sqlite` (Node.js 22.13+), where startup opens that directory; on Node.js 20 the store
 * stays in memory and the warning that says so is checked instead.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { ConfigurationError, createApp, createKeyRing, createLogger, loadConfiguration } from '../src/index.js'
import { loadEntryPointConfiguration } from '../src/startup.js'
import { loadSqlite } from '../src/state/sqlite-journal.js'
import { LogCapture } from './helpers/app.js'

const NAME = 'AcmePortal'
const root = mkdtempSync(join(tmpdir(), 'core-refusals-'))
mkdirSync(join(root, 'public'))
writeFileSync(join(root, 'appsettings.json'), JSON.stringify({ [NAME]: { Logging: { Level: 'info' } } }))
// A file where a directory's parent should be: creating below it fails (ENOTDIR), even as root.
const blocker = join(root, 'blocker')
writeFileSync(blocker, 'not a directory')
after(() => { rmSync(root, { recursive: true, force: true }) })

const base = { AcmePortal__Authentication__Enabled: 'true', XDG_CONFIG_HOME: '/nonexistent-test-config' }
const sqlite = await loadSqlite()

async function acmePortal (settings: Record<string, string>, keyRing = true): Promise<{ app: Awaited<ReturnType<typeof createApp>>, logs: LogCapture }> {
  const loaded = loadConfiguration({ env: { ...base, ...settings }, contentRoot: root, applicationName: NAME })
  const logs = new LogCapture()
  const app = await createApp({
    config: loaded.config,
    environmentName: loaded.environmentName,
    contentRoot: root,
    logger: createLogger('info', logs),
    ...(keyRing ? { keyRing: createKeyRing([randomBytes(32)], '', NAME) } : {}),
    applicationName: NAME
  })
  await app.ready()
  return { app, logs }
}

describe('a key directory that cannot be created', () => {
  const settings = { AcmePortal__DataProtection__KeyDirectory: join(blocker, 'keys'), AcmePortal__State__Embedded__Persist: 'false' }
  const expected = 'AcmePortal:DataProtection:KeyDirectory does not exist and cannot be created (ENOTDIR). ' +
    'Make it a directory (mode 0700) the user running the application may write, point AcmePortal:DataProtection:KeyDirectory at one, ' +
    'or configure shared keys in AcmePortal:DataProtection:Keys (npm run generate-key makes one).'

  test('check-config\'s path (validation) names the key, the error code and the remedy under AcmePortal', () => {
    const loaded = loadConfiguration({ env: { ...base, ...settings }, contentRoot: root, applicationName: NAME })
    assert.deepEqual(loaded.errors, [{ key: 'AcmePortal:DataProtection:KeyDirectory', message: expected }])
  })

  test('startup\'s path (createApp) refuses with the same problem', async () => {
    await assert.rejects(acmePortal(settings, false), (error: unknown) => {
      assert.ok(error instanceof ConfigurationError)
      assert.deepEqual(error.problems, [{ key: 'AcmePortal:DataProtection:KeyDirectory', message: expected }])
      return true
    })
  })
})

describe('the embedded store\'s data directory', () => {
  const expected = 'AcmePortal:State:Embedded:DataDirectory does not exist and cannot be created (ENOTDIR). ' +
    'Make it a directory (mode 0700) the user running the application may write, point AcmePortal:State:Embedded:DataDirectory at one, ' +
    'or set AcmePortal:State:Embedded:Persist to false (the store is then kept in memory: a restart signs every user out).'
  const settings = { AcmePortal__State__Embedded__DataDirectory: join(blocker, 'state') }

  test('cannot be created: check-config and startup refuse with the same sentence (node:sqlite)', { skip: sqlite === undefined ? 'no node:sqlite on this Node.js: the store is not persisted' : false }, async () => {
    const { loaded } = await loadEntryPointConfiguration({ ...base, ...settings }, root, NAME)
    assert.deepEqual(loaded.errors, [{ key: 'AcmePortal:State:Embedded:DataDirectory', message: expected }])
    await assert.rejects(acmePortal(settings), (error: unknown) => {
      assert.ok(error instanceof ConfigurationError)
      assert.deepEqual(error.problems, [{ key: 'AcmePortal:State:Embedded:DataDirectory', message: expected }])
      return true
    })
  })

  test('without node:sqlite the in-memory warning names AcmePortal:State:Embedded:Persist', { skip: sqlite === undefined ? false : 'node:sqlite is present: the store is persisted' }, async (t) => {
    const { loaded } = await loadEntryPointConfiguration({ ...base, ...settings }, root, NAME)
    assert.deepEqual(loaded.errors, [], 'startup does not open the directory here, so check-config does not refuse it')
    const { app, logs } = await acmePortal(settings)
    t.after(async () => { await app.close() })
    const warnings = logs.events('state.embedded.not_persisted')
    assert.equal(warnings.length, 1)
    assert.equal(warnings[0]?.key, 'AcmePortal:State:Embedded:Persist')
    assert.doesNotMatch(logs.text(), /ProjectTemplate/)
  })
})

describe('a host that is not allowed', () => {
  const detail = 'The request\'s host is not one this application answers for. Use the address in AcmePortal:Hosting:PublicOrigin; ' +
    'to answer for another host name, an operator adds it to AcmePortal:Hosting:AllowedHosts.'
  const settings = { AcmePortal__Hosting__PublicOrigin: 'https://portal.example.test', AcmePortal__State__Embedded__Persist: 'false' }

  test('the page and the problem name the settings, never the host sent; the log names both', async (t) => {
    const { app, logs } = await acmePortal(settings)
    t.after(async () => { await app.close() })
    const page = await app.inject({ url: '/', headers: { host: 'Intruder.Example:8443', accept: 'text/html' } })
    assert.equal(page.statusCode, 400)
    assert.ok(page.body.includes(detail.replace('\'', '&#39;')), page.body)
    assert.doesNotMatch(page.body, /intruder|ProjectTemplate/i)
    const problem = await app.inject({ url: '/', headers: { host: 'intruder.example', accept: 'application/json' } })
    assert.equal(problem.statusCode, 400)
    assert.deepEqual({ ...(problem.json() as Record<string, unknown>), requestId: undefined }, { type: 'about:blank', title: 'Host not allowed', status: 400, detail, code: 'APP_ERR_HOST_NOT_ALLOWED', requestId: undefined })
    const refusals = logs.events('request.host_refused')
    assert.deepEqual(refusals.map((record) => [record.reason, record.host, record.settings]), [
      ['not_allowed', 'intruder.example', ['AcmePortal:Hosting:PublicOrigin', 'AcmePortal:Hosting:AllowedHosts']],
      ['not_allowed', 'intruder.example', ['AcmePortal:Hosting:PublicOrigin', 'AcmePortal:Hosting:AllowedHosts']]
    ])
  })

  test('a malformed host is neither echoed nor logged', async (t) => {
    const { app, logs } = await acmePortal(settings)
    t.after(async () => { await app.close() })
    const page = await app.inject({ url: '/', headers: { host: '<script>x</script>', accept: 'text/html' } })
    assert.equal(page.statusCode, 400)
    assert.doesNotMatch(page.body, /<script>x/)
    const [refusal] = logs.events('request.host_refused')
    assert.equal(refusal?.reason, 'malformed')
    assert.equal(refusal?.host, undefined)
    assert.doesNotMatch(logs.text(), /script/)
  })
})
