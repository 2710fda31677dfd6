/**
 * `npm run check-config` (src/check-config.ts) as a child process: the readable summary and the
 * `--json` document report the same findings; invalid configuration exits 1 listing every
 * sentence, valid exits 0, an unknown argument exits 2; a planted secret appears nowhere in the
 * output, only its key and source.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { EXPECTED_SENTENCES, INVALID_WITH_PLANTED_SECRET, PLANTED_SECRET } from './helpers/planted-secret.js'
import { APP_ROOT } from './helpers/app.js'
import { cleanEnv, runProcess, type Running } from './helpers/process.js'

const P = 'ProjectTemplate:Authentication:Providers'
const checkConfig = (args: string[], env: NodeJS.ProcessEnv): Running =>
  runProcess(process.execPath, ['--import', 'tsx', 'src/check-config.ts', ...args], { cwd: APP_ROOT, env })

describe('check-config', () => {
  let invalidJson: Running
  let invalidText: Running
  let validText: Running
  let typo: Running
  before(() => {
    invalidJson = checkConfig(['--json'], cleanEnv(INVALID_WITH_PLANTED_SECRET))
    invalidText = checkConfig([], cleanEnv(INVALID_WITH_PLANTED_SECRET))
    validText = checkConfig([], cleanEnv({ ProjectTemplate__Authentication__Providers__OpenIdConnect__ClientSecret: PLANTED_SECRET }))
    typo = checkConfig(['--jsn'], cleanEnv({}))
  })
  after(() => { for (const run of [invalidJson, invalidText, validText, typo]) run.kill() })

  test('--json: invalid configuration exits 1 with every sentence, the unknown key, the secret\'s source and no secret value', async () => {
    const run = invalidJson
    assert.equal(await run.exited(60_000), 1)
    const summary = JSON.parse(run.stdout()) as { valid: boolean, environment: string, errors: Array<{ message: string }>, warnings: Array<{ event: string, key: string }>, secrets: Array<{ key: string, source: string }> }
    assert.equal(summary.valid, false)
    assert.equal(summary.environment, 'Production')
    assert.deepEqual(summary.errors.map((problem) => problem.message), EXPECTED_SENTENCES)
    assert.deepEqual(summary.warnings.filter((warning) => warning.event === 'configuration.unknown_key').map((warning) => warning.key), [`${P}:VendorB:ClientSecert`])
    assert.ok(summary.secrets.length > 0 && summary.secrets.every((secret) => secret.source === 'environment'))
    assert.ok(!run.stdout().includes(PLANTED_SECRET), 'the planted secret appears in stdout')
    assert.ok(!run.stderr().includes(PLANTED_SECRET), 'the planted secret appears in stderr')
  })

  test('readable: invalid configuration exits 1 and lists every sentence under Errors', async () => {
    const run = invalidText
    assert.equal(await run.exited(60_000), 1)
    const text = run.stdout()
    assert.match(text, /^Configuration: INVALID \(\d+ errors?\); the application would not start\n/)
    for (const sentence of EXPECTED_SENTENCES) assert.ok(text.includes(`  - ${sentence}\n`), sentence)
    assert.ok(!text.includes(PLANTED_SECRET))
  })

  test('readable: valid configuration exits 0 and names environment, sources, providers and where the secret came from', async () => {
    const run = validText
    assert.equal(await run.exited(60_000), 0)
    const text = run.stdout()
    assert.match(text, /^Configuration: valid\n/)
    assert.match(text, /^Environment: +Production/m)
    assert.match(text, /^Sources: +appsettings\.json -> environment/m)
    assert.match(text, /^Providers: +none enabled/m)
    assert.ok(text.includes(`  ${P}:OpenIdConnect:ClientSecret  from environment\n`))
    assert.ok(!text.includes(PLANTED_SECRET))
    assert.equal(run.stderr(), '')
  })

  test('an unknown argument exits 2 with the usage', async () => {
    assert.equal(await typo.exited(60_000), 2)
    assert.match(typo.stderr(), /unknown argument --jsn/)
  })
})
