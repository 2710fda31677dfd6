/**
 * `npm run check-config` (src/check-config.ts) as a child process: invalid configuration exits 1
 * with one structured error line listing every sentence, and a planted secret appears nowhere in
 * its output; valid configuration exits 0.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { EXPECTED_SENTENCES, INVALID_WITH_PLANTED_SECRET, PLANTED_SECRET } from './helpers/planted-secret.js'
import { cleanEnv, jsonLines, runEntryPoint, type Running } from './helpers/process.js'

const P = 'ProjectTemplate:Authentication:Providers'

describe('check-config', () => {
  let invalidRun: Running
  let validRun: Running
  before(() => {
    invalidRun = runEntryPoint('src/check-config.ts', cleanEnv(INVALID_WITH_PLANTED_SECRET))
    validRun = runEntryPoint('src/check-config.ts', cleanEnv({ ProjectTemplate__Authentication__Providers__OpenIdConnect__ClientSecret: PLANTED_SECRET }))
  })
  after(() => { invalidRun.kill(); validRun.kill() })

  test('invalid configuration exits 1 with one structured error listing every sentence and no secret value', async () => {
    const run = invalidRun
    assert.equal(await run.exited(), 1)
    const records = jsonLines(run.stdout())
    const invalid = records.filter((record) => record.event === 'configuration.invalid')
    assert.equal(invalid.length, 1)
    assert.equal(invalid[0]?.code, 'APP_ERR_CONFIG_INVALID')
    assert.equal(invalid[0]?.level, 50)
    assert.deepEqual(invalid[0]?.errors, EXPECTED_SENTENCES)
    const unknown = records.filter((record) => record.event === 'configuration.unknown_key')
    assert.deepEqual(unknown.map((record) => record.key), [`${P}:VendorB:ClientSecert`])
    assert.ok(!run.stdout().includes(PLANTED_SECRET), 'the planted secret appears in stdout')
    assert.ok(!run.stderr().includes(PLANTED_SECRET), 'the planted secret appears in stderr')
    assert.ok(!records.some((record) => record.event === 'configuration.valid'))
  })

  test('valid configuration exits 0 and says so', async () => {
    const run = validRun
    assert.equal(await run.exited(), 0)
    const valid = jsonLines(run.stdout()).filter((record) => record.event === 'configuration.valid')
    assert.equal(valid.length, 1)
    assert.equal(valid[0]?.environment, 'Production')
    assert.ok(!run.stdout().includes(PLANTED_SECRET))
    assert.equal(run.stderr(), '')
  })
})
