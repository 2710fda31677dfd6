/**
 * `npm run generate-key` prints one key in the form the key ring expects: base64 of 32 random
 * bytes, accepted by the startup rule on ProjectTemplate:DataProtection:Keys, different each run.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { createKeyRing, loadConfiguration } from '@project-template/core'
import { APPLICATION_NAME } from '../../src/application-name.js'
import { APP_ROOT } from '../helpers/app.js'

const run = promisify(execFile)

async function generateKey (): Promise<string> {
  const { stdout } = await run('npm', ['run', '--silent', 'generate-key'], { cwd: APP_ROOT, timeout: 30_000 })
  return stdout
}

test('generate-key prints one base64 line of 32 bytes that configuration accepts as a data-protection key', async () => {
  const [first, second] = await Promise.all([generateKey(), generateKey()])
  for (const output of [first, second]) {
    assert.match(output, /^[A-Za-z0-9+/]{43}=\n$/)
    assert.equal(Buffer.from(output.trim(), 'base64').length, 32)
  }
  assert.notEqual(first, second, 'each run prints a new key')
  const loaded = loadConfiguration({
    env: { ProjectTemplate__DataProtection__Keys__0: first.trim(), ProjectTemplate__DataProtection__Keys__1: second.trim() },
    contentRoot: APP_ROOT,
    applicationName: APPLICATION_NAME
  })
  assert.deepEqual(loaded.errors.filter((problem) => problem.key.includes('DataProtection')), [])
  assert.deepEqual(loaded.config.DataProtection.Keys.map((key) => key.reveal()), [first.trim(), second.trim()])
  const ring = createKeyRing(loaded.config.DataProtection.Keys.map((key) => Buffer.from(key.reveal(), 'base64')), '', APPLICATION_NAME)
  assert.equal(ring.opening.size, 2)
})
