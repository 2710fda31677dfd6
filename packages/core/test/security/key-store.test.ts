/**
 * The key directory (issue 13, "Keys"): a key file holding an empty, non-base64 or short key, a
 * key file that is not JSON, an empty key list, a file where the directory should be, a directory
 * where the key file should be, and a directory or key file open to group or others are all
 * refused, by `check-config`'s validation and by startup alike, with a sentence naming
 * ProjectTemplate:DataProtection:KeyDirectory and never the file's content.
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../helpers/app.js'
import { GENERATED_KEY_FILE } from '../../src/data-protection/key-ring.js'
import { ConfigurationError } from '../../src/errors.js'
import { createLogger } from '../../src/logger.js'
import { LogCapture, loadTestConfiguration, APP_ROOT } from '../helpers/app.js'

const temp = mkdtempSync(join(tmpdir(), 'pt-key-store-'))
after(() => { rmSync(temp, { recursive: true, force: true }) })

const KEY = 'ProjectTemplate:DataProtection:KeyDirectory'
/** Key material a broken file might start with; JSON.parse would quote it. */
const PLANTED_MATERIAL = 'PLANTEDKEYMATERIAL4f1e9b'

interface StoreCase {
  readonly name: string
  /** Creates the store under `directory` (which does not exist yet). */
  readonly prepare: (directory: string) => void
  readonly message: string
  /** The configured directory below the prepared path (default: the prepared path itself). */
  readonly below?: string
}

const keyFile = (directory: string, content: string, mode = 0o600): void => {
  mkdirSync(directory, { mode: 0o700 })
  writeFileSync(join(directory, GENERATED_KEY_FILE), content, { mode })
  chmodSync(join(directory, GENERATED_KEY_FILE), mode)
}
const weakEntry = (index: number): string => `${KEY} holds a ${GENERATED_KEY_FILE} whose keys:${index} is not base64 of at least 32 random bytes.`
const STRONG = Buffer.alloc(32, 9).toString('base64')

const cases: StoreCase[] = [
  { name: 'an empty key ({"keys":[""]}, what an unset $KEY writes)', prepare: (d) => { keyFile(d, '{"keys":[""]}') }, message: weakEntry(0) },
  { name: 'a key that is not base64 (["!!!!"])', prepare: (d) => { keyFile(d, '{"keys":["!!!!"]}') }, message: weakEntry(0) },
  { name: 'a one-byte key (["YQ=="])', prepare: (d) => { keyFile(d, '{"keys":["YQ=="]}') }, message: weakEntry(0) },
  { name: 'a weak key after a strong one', prepare: (d) => { keyFile(d, JSON.stringify({ keys: [STRONG, 'YQ=='] })) }, message: weakEntry(1) },
  { name: 'a key that is not a string', prepare: (d) => { keyFile(d, '{"keys":[42]}') }, message: weakEntry(0) },
  { name: 'an empty key list', prepare: (d) => { keyFile(d, '{"keys":[]}') }, message: `${KEY} holds a ${GENERATED_KEY_FILE} without keys; expected {"keys": ["<base64 of at least 32 random bytes>", ...]}.` },
  { name: 'a bare array instead of {"keys": [...]}', prepare: (d) => { keyFile(d, `["${STRONG}"]`) }, message: `${KEY} holds a ${GENERATED_KEY_FILE} without keys; expected {"keys": ["<base64 of at least 32 random bytes>", ...]}.` },
  { name: 'a key file that is not JSON (its content is never quoted)', prepare: (d) => { keyFile(d, `${PLANTED_MATERIAL}==" }`) }, message: `${KEY} holds a ${GENERATED_KEY_FILE} that is not valid JSON.` },
  { name: 'a file where the key directory should be', prepare: (d) => { writeFileSync(d, PLANTED_MATERIAL) }, message: `${KEY} must name a directory; a file is in its place.` },
  { name: 'a directory where the key file should be', prepare: (d) => { mkdirSync(join(d, GENERATED_KEY_FILE), { recursive: true, mode: 0o700 }); chmodSync(d, 0o700) }, message: `${KEY} holds a ${GENERATED_KEY_FILE} that is not a regular file.` },
  { name: 'a key directory that cannot be created (its parent is a file)', prepare: (d) => { writeFileSync(d, 'x') }, below: 'keys', message: `${KEY} does not exist and cannot be created (ENOTDIR). Make it a directory (mode 0700) the user running the application may write, point ${KEY} at one, or configure shared keys in ProjectTemplate:DataProtection:Keys (npm run generate-key makes one).` },
  {
    name: 'a key directory with mode 0777',
    prepare: (d) => { mkdirSync(d); chmodSync(d, 0o777) },
    message: `${KEY} must be accessible to its owner only (mode 0700); it has mode 0777. Run chmod 700 on it, and rotate the key if others could read it.`
  },
  {
    name: 'a key directory with mode 0755 holding a valid key file',
    prepare: (d) => { keyFile(d, JSON.stringify({ keys: [STRONG] })); chmodSync(d, 0o755) },
    message: `${KEY} must be accessible to its owner only (mode 0700); it has mode 0755. Run chmod 700 on it, and rotate the key if others could read it.`
  },
  {
    name: 'a key file with mode 0644',
    prepare: (d) => { keyFile(d, JSON.stringify({ keys: [STRONG] }), 0o644) },
    message: `${KEY} holds a ${GENERATED_KEY_FILE} readable or writable by others (mode 0644; required 0600). Run chmod 600 on it, and rotate the key if others could read it.`
  }
]

describe('key store problems are configuration errors naming the key directory', () => {
  cases.forEach(({ name, prepare, message, below }, index) => {
    test(name, async () => {
      const prepared = join(temp, `case-${index}`)
      prepare(prepared)
      const directory = below === undefined ? prepared : join(prepared, below)
      // check-config's path: loading and validation.
      const loaded = loadTestConfiguration({ settings: { DataProtection: { KeyDirectory: directory } } })
      assert.deepEqual(loaded.errors, [{ key: KEY, message }])
      // Startup's path, should validation have been skipped: the same problem, as a ConfigurationError.
      const logs = new LogCapture()
      await assert.rejects(
        buildApp({ config: loaded.config, environmentName: loaded.environmentName, contentRoot: APP_ROOT, logger: createLogger('info', logs) }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigurationError)
          assert.equal(error.code, 'APP_ERR_CONFIG_INVALID')
          assert.deepEqual(error.problems, [{ key: KEY, message }])
          assert.ok(!error.message.includes(PLANTED_MATERIAL))
          return true
        })
      assert.ok(!logs.text().includes(PLANTED_MATERIAL))
    })
  })

  test('control: a valid 0700/0600 store and a missing directory are accepted', async () => {
    const valid = join(temp, 'valid')
    keyFile(valid, JSON.stringify({ keys: [STRONG] }))
    assert.deepEqual(loadTestConfiguration({ settings: { DataProtection: { KeyDirectory: valid } } }).errors, [])
    assert.deepEqual(loadTestConfiguration({ settings: { DataProtection: { KeyDirectory: join(temp, 'not-yet') } } }).errors, [])
  })

  test('configured keys make the key directory irrelevant (it is not inspected)', () => {
    const open = join(temp, 'open-but-unused')
    mkdirSync(open)
    chmodSync(open, 0o777)
    assert.deepEqual(loadTestConfiguration({ settings: { DataProtection: { KeyDirectory: open, Keys: [STRONG] } } }).errors, [])
  })
})
