/**
 * The key ring's sources: configured keys (first seals, all open), and without them a key
 * generated once into the key directory with 0600 permissions, reused on the next start, and a
 * warning that names no key material.
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../helpers/app.js'
import { GENERATED_KEY_FILE, loadKeyRing } from '../../src/data-protection/key-ring.js'
import { Secret } from '../../src/config/secret.js'
import { ROOT_KEY } from '../../src/config/schema.js'
import { createLogger } from '../../src/logger.js'
import { LogCapture, loadTestConfiguration, APP_ROOT } from '../helpers/app.js'

const temp = mkdtempSync(join(tmpdir(), 'pt-keys-'))
after(() => { rmSync(temp, { recursive: true, force: true }) })

describe('key ring', () => {
  test('with no configured key, one is generated into the key directory: directory 0700, file 0600', () => {
    const directory = join(temp, 'generated', 'keys')
    const source = loadKeyRing([], directory, APP_ROOT, 'Production', ROOT_KEY)
    assert.equal(source.origin, 'generated')
    assert.equal(source.directory, directory)
    const file = join(directory, GENERATED_KEY_FILE)
    assert.equal(statSync(file).mode & 0o777, 0o600)
    assert.equal(statSync(directory).mode & 0o777, 0o700)
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { keys: string[] }
    assert.equal(stored.keys.length, 1)
    assert.equal(Buffer.from(stored.keys[0] ?? '', 'base64').length, 32)
  })

  test('the generated key is reused on the next start (sessions survive a restart)', () => {
    const directory = join(temp, 'reused')
    const first = loadKeyRing([], directory, APP_ROOT, 'Production', ROOT_KEY)
    const second = loadKeyRing([], directory, APP_ROOT, 'Production', ROOT_KEY)
    assert.equal(second.origin, 'key directory')
    assert.equal(second.ring.sealing.id, first.ring.sealing.id)
    assert.ok(second.ring.sealing.key.equals(first.ring.sealing.key))
  })

  test('a relative key directory is resolved against the content root', () => {
    const source = loadKeyRing([], 'relative-keys', temp, 'Production', ROOT_KEY)
    assert.equal(source.directory, join(temp, 'relative-keys'))
    assert.equal(statSync(join(temp, 'relative-keys', GENERATED_KEY_FILE)).mode & 0o777, 0o600)
  })

  test('configured keys win over the key directory: the first seals and every key opens', () => {
    const keys = [randomBytes(32), randomBytes(32)]
    const directory = join(temp, 'unused')
    const source = loadKeyRing(keys.map((key) => new Secret(key.toString('base64'))), directory, APP_ROOT, 'Production', ROOT_KEY)
    assert.equal(source.origin, 'configuration')
    assert.equal(source.ring.opening.size, 2)
    assert.ok(source.ring.opening.has(source.ring.sealing.id))
    assert.throws(() => statSync(directory), /ENOENT/, 'no key directory is created when keys are configured')
  })

  test('the derived key differs from the configured material', () => {
    const material = randomBytes(32)
    const ring = loadKeyRing([new Secret(material.toString('base64'))], temp, APP_ROOT, 'Production', ROOT_KEY).ring
    assert.ok(!ring.sealing.key.equals(material))
  })

  test('buildApp with a generated key warns that multi-instance deployments need shared keys, without key material', async (context) => {
    const directory = join(temp, 'app-keys')
    const loaded = loadTestConfiguration({ settings: { DataProtection: { KeyDirectory: directory } } })
    const logs = new LogCapture()
    const app = await buildApp({ config: loaded.config, environmentName: loaded.environmentName, contentRoot: APP_ROOT, logger: createLogger('info', logs) })
    context.after(async () => { await app.close() })
    const warnings = logs.events('data_protection.local_key')
    assert.equal(warnings.length, 1)
    assert.equal(warnings[0]?.key, 'ProjectTemplate:DataProtection:Keys')
    assert.equal(warnings[0]?.msg, 'session keys are kept in a local key directory; multi-instance deployments must supply shared keys')
    const stored = JSON.parse(readFileSync(join(directory, GENERATED_KEY_FILE), 'utf8')) as { keys: string[] }
    assert.ok(!logs.text().includes(stored.keys[0] ?? 'missing'))
  })

  test('buildApp with configured keys logs no local-key warning', async () => {
    const loaded = loadTestConfiguration({ settings: { DataProtection: { Keys: [randomBytes(32).toString('base64')] } } })
    const logs = new LogCapture()
    const app = await buildApp({ config: loaded.config, environmentName: loaded.environmentName, contentRoot: APP_ROOT, logger: createLogger('info', logs) })
    await app.close()
    assert.equal(logs.events('data_protection.local_key').length, 0)
  })
})
