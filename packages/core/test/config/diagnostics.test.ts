/**
 * Configuration diagnostics: a settings file that is not valid JSON is reported with its line and
 * column (never its content); a secret key with a value in any appsettings*.json file is a warning
 * naming the key and the file (never the value); Cookie:AllowInsecureHttp on is a warning; `.env`
 * (Development) is a source below the real environment; every secret's source is known.
 */
import { after, afterEach, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfiguration } from '../../src/configuration.js'
import { describeJsonErrorPosition, readDotEnv } from '../../src/config/sources.js'
import { createContentRoot, settingsFile, type TempContentRoot } from '../helpers/content-root.js'

const PLANTED = 'PLANTED-SECRET-IN-FILE-4f1a'
const KEY = Buffer.alloc(32, 3).toString('base64')

describe('configuration diagnostics', () => {
  let content: TempContentRoot
  before(() => { content = createContentRoot() })
  after(() => { content.remove() })
  afterEach(() => {
    for (const file of ['appsettings.Development.json', 'appsettings.Staging.json', '.env']) rmSync(join(content.root, file), { force: true })
    content.writeJson('appsettings.json', settingsFile({}))
  })
  const load = (env: Record<string, string> = {}, dotenv?: Record<string, string>) =>
    loadConfiguration({ contentRoot: content.root, env: { XDG_CONFIG_HOME: content.configHome, ...env }, dotenv })

  test('invalid JSON names the file, the line and the column, and never quotes the file', () => {
    content.writeJson('appsettings.json', `{\n  "ProjectTemplate": {\n    "Logging": { "Level": "info" },,\n    "X": "${PLANTED}"\n  }\n}\n`)
    const loaded = load()
    assert.deepEqual(loaded.errors.map((problem) => problem.message), ['appsettings.json is not valid JSON: line 3, column 36.'])
    assert.ok(!JSON.stringify(loaded).includes(PLANTED))
  })

  test('line and column from the parser position, for each way JSON.parse reports it', () => {
    const text = '{\n  "a": 1\n  "b": 2\n}'
    let message = ''
    try { JSON.parse(text) } catch (error) { message = (error as Error).message }
    assert.equal(describeJsonErrorPosition(text, message), 'line 3, column 3')
    assert.equal(describeJsonErrorPosition('{"a":', 'Unexpected end of JSON input'), 'unexpected end of file at line 1, column 6')
    assert.equal(describeJsonErrorPosition('x', 'something else'), 'the parser gave no position')
  })

  test('a secret with a value in any appsettings*.json file is a warning naming the key and the file, never the value', () => {
    content.writeJson('appsettings.json', settingsFile({
      Authentication: { Providers: { OpenIdConnect: { ClientSecret: PLANTED }, VendorA: { ClientSecret: '<client_secret>' }, VendorB: { ClientSecret: '' } } }
    }))
    content.writeJson('appsettings.Staging.json', settingsFile({ DataProtection: { Keys: [KEY] } }))
    const loaded = load({ ProjectTemplate__DataProtection__Keys__0: KEY })
    const found = loaded.warnings.filter((warning) => warning.event === 'configuration.secret_in_file')
    assert.deepEqual(found.map((warning) => [warning.key, warning.file]), [
      ['ProjectTemplate:DataProtection:Keys:0', 'appsettings.Staging.json'],
      ['ProjectTemplate:Authentication:Providers:OpenIdConnect:ClientSecret', 'appsettings.json']
    ])
    assert.match(found[1]?.message ?? '', /^ProjectTemplate:Authentication:Providers:OpenIdConnect:ClientSecret is set in appsettings\.json, a file committed with the code; move it to user secrets/)
    assert.ok(!JSON.stringify(loaded.warnings).includes(PLANTED))
    assert.ok(!JSON.stringify(loaded.warnings).includes(KEY))
  })

  test('no secret in the files: no such warning', () => {
    assert.deepEqual(load().warnings, [])
  })

  test('Cookie:AllowInsecureHttp on is a warning in Development that says what it exposes', () => {
    content.writeJson('appsettings.Development.json', settingsFile({ Authentication: { Cookie: { AllowInsecureHttp: true } } }))
    const loaded = load({ NODE_ENV: 'development' })
    assert.deepEqual(loaded.errors, [])
    const warning = loaded.warnings.find((candidate) => candidate.event === 'configuration.insecure_http')
    assert.equal(warning?.key, 'ProjectTemplate:Authentication:Cookie:AllowInsecureHttp')
    assert.match(warning?.message ?? '', /drop the __Host- prefix and Secure/)
  })

  test('.env is a source below the real environment, and each secret names where it came from', () => {
    writeFileSync(join(content.root, '.env'), `# comment\nProjectTemplate__Authentication__Providers__VendorA__ClientSecret="${PLANTED}"\nProjectTemplate__Logging__Level=debug\nPORT=5050\n`)
    const dotenv = readDotEnv(content.root)
    assert.equal(dotenv?.PORT, '5050')
    const loaded = load({ NODE_ENV: 'development', ProjectTemplate__Logging__Level: 'warn', ProjectTemplate__DataProtection__Keys__0: KEY }, dotenv)
    assert.deepEqual(loaded.sources.slice(-2), ['.env', 'environment'])
    assert.equal(loaded.config.Logging.Level, 'warn', 'the real environment wins over .env')
    assert.equal(loaded.config.Authentication.Providers.VendorA.ClientSecret.reveal(), PLANTED)
    assert.deepEqual(loaded.secretOrigins, [
      { key: 'ProjectTemplate:Authentication:Providers:VendorA:ClientSecret', source: '.env' },
      { key: 'ProjectTemplate:DataProtection:Keys:0', source: 'environment' }
    ])
    assert.equal(readDotEnv(join(content.root, 'missing')), undefined)
  })
})
