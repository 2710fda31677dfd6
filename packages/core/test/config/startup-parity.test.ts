/**
 * `npm run check-config` finds every start-up failure first (issue 13, "Configuration checks that
 * disagree with start-up"): both entry points run as child processes, both exit 1 with the same
 * structured `configuration.invalid` line naming each key, neither repeats a value, the server
 * never listens and prints no stack trace. Before, check-config passed these and the server
 * crashed with a stack (a KnownProxies entry quoted in the fatal line). Each key-directory case
 * has its own in-process test in test/security/key-store.test.ts. Telemetry:Enabled without the
 * OpenTelemetry SDK installed is refused by both, with the same sentence (issue 33, item 7).
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import { isProxyAddress } from '../../src/http/host-trust.js'
import { GENERATED_KEY_FILE } from '../../src/data-protection/key-ring.js'
import { loadSqlite } from '../../src/state/sqlite-journal.js'
import { loadConfiguration } from '../../src/configuration.js'
import { formatSummary, summarizeConfiguration } from '../../src/configuration-summary.js'
import { ROOT_KEY } from '../../src/config/schema.js'
import { APP_ROOT, CORE_ROOT } from '../helpers/app.js'
import { cleanEnv, jsonLines, runEntryPoint, runProcess, type Running } from '../helpers/process.js'

const temp = mkdtempSync(join(tmpdir(), 'pt-parity-'))
after(() => { rmSync(temp, { recursive: true, force: true }) })

const SAML = 'ProjectTemplate__Authentication__Providers__Saml2__'

/**
 * Every case in one configuration: validation collects all problems, so one check-config run and
 * one server run show each is found first, by both, the same way (two child processes in all: the
 * per-case cost of a process start is what keeps this affordable in `npm test`). The key
 * directory is open to others and holds a key file that is not JSON: two problems, one directory.
 */
function brokenConfiguration (): Record<string, string> {
  const directory = join(temp, 'open')
  mkdirSync(directory)
  chmodSync(directory, 0o777)
  writeFileSync(join(directory, GENERATED_KEY_FILE), 'PLANTEDKEYMATERIAL==', { mode: 0o600 })
  return {
    ProjectTemplate__DataProtection__KeyDirectory: directory,
    ProjectTemplate__ForwardedHeaders__Enabled: 'true',
    ProjectTemplate__ForwardedHeaders__KnownProxies__0: '10.0.0.300',
    ProjectTemplate__Hosting__PublicOrigin: 'https://app.example.test/PLANTEDPATH',
    ProjectTemplate__Hosting__RequestTimeoutSeconds: '5',
    ProjectTemplate__Hosting__HeadersTimeoutSeconds: '20',
    [`${SAML}Enabled`]: 'true',
    [`${SAML}EntityId`]: 'https://app.example.test/sp',
    [`${SAML}LoadMetadata`]: 'false',
    [`${SAML}IdpEntityId`]: 'https://idp.example.test',
    [`${SAML}IdpSingleSignOnUrl`]: 'https://idp.example.test/sso',
    [`${SAML}IdpSigningCertificates__0`]: 'PLANTEDNOTACERTIFICATE'
  }
}

const EXPECTED = [
  'ProjectTemplate:Authentication:Providers:Saml2:IdpSigningCertificates:0 is not a PEM or base64 DER X.509 certificate.',
  'ProjectTemplate:ForwardedHeaders:KnownProxies:0 must be an IP address, an address with a prefix length or IPv4 netmask (10.0.0.0/8), or one of loopback, linklocal, uniquelocal.',
  'ProjectTemplate:DataProtection:KeyDirectory must be accessible to its owner only (mode 0700); it has mode 0777. Run chmod 700 on it, and rotate the key if others could read it.',
  `ProjectTemplate:DataProtection:KeyDirectory holds a ${GENERATED_KEY_FILE} that is not valid JSON.`,
  'ProjectTemplate:Hosting:PublicOrigin must be an absolute https origin such as https://app.example.com (scheme, host and optional port; no path, query or fragment; http only in Development).',
  'ProjectTemplate:Hosting:HeadersTimeoutSeconds must not exceed ProjectTemplate:Hosting:RequestTimeoutSeconds.'
]
/** Values that must appear in no output. */
const VALUES = ['10.0.0.300', 'PLANTEDNOTACERTIFICATE', 'PLANTEDKEYMATERIAL', 'PLANTEDPATH', 'ERR_OUT_OF_RANGE']

describe('check-config and startup agree', () => {
  test('each start-up failure is found by check-config first and reported identically by the server, naming the key, no value, no stack', async () => {
    const variables = cleanEnv({ ...brokenConfiguration(), PORT: '0' })
    const check = runEntryPoint('src/check-config.ts', variables, ['--json'])
    const server = runEntryPoint('src/server.ts', variables)
    try {
      const [checkExit, serverExit] = await Promise.all([check.exited(60_000), server.exited(60_000)])
      assert.equal(checkExit, 1, 'check-config exits 1')
      assert.equal(serverExit, 1, 'the server exits 1')
      const summary = JSON.parse(check.stdout()) as { valid: boolean, errors: Array<{ message: string }> }
      assert.equal(summary.valid, false)
      assert.deepEqual(summary.errors.map((problem) => problem.message), EXPECTED, 'check-config --json')
      for (const [label, run] of [['check-config', check], ['server', server]] as const) {
        if (run === server) {
          const invalid = jsonLines(run.stdout()).filter((record) => record.event === 'configuration.invalid')
          assert.equal(invalid.length, 1, `${label}: one configuration.invalid line`)
          assert.equal(invalid[0]?.code, 'APP_ERR_CONFIG_INVALID')
          assert.deepEqual(invalid[0]?.errors, EXPECTED, label)
        }
        for (const value of VALUES) assert.ok(!run.stdout().includes(value) && !run.stderr().includes(value), `${label}: ${value} appears in the output`)
        assert.ok(!/\n\s+at /.test(run.stdout()), `${label}: a stack trace was printed`)
        assert.equal(run.stderr(), '', `${label}: stderr`)
      }
      assert.ok(!server.stdout().includes('Server listening'))
    } finally {
      check.kill()
      server.kill()
    }
  })
})

/**
 * A Node.js with `node:sqlite` (where startup opens the embedded store's data directory): this
 * one when it has it, else the Node 22 line from scripts/node-line.sh (the npm registry's build).
 */
async function nodeWithSqlite (): Promise<string | undefined> {
  if (await loadSqlite() !== undefined) return process.execPath
  try {
    const bin = execFileSync('bash', [join(CORE_ROOT, '..', '..', 'scripts', 'node-line.sh'), '22'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 120_000 }).trim()
    return join(bin, 'node')
  } catch {
    return undefined
  }
}
const sqliteNode = await nodeWithSqlite()

/** Both entry points on `node`, through tsx as runEntryPoint runs them. */
function runBoth (node: string, variables: NodeJS.ProcessEnv): { check: Running, server: Running } {
  return {
    check: runProcess(node, ['--import', 'tsx', 'src/check-config.ts', '--json'], { cwd: APP_ROOT, env: variables }),
    server: runProcess(node, ['--import', 'tsx', 'src/server.ts'], { cwd: APP_ROOT, env: variables })
  }
}

describe('the embedded store\'s data directory (Node.js with node:sqlite, as on 22.13+)', { skip: sqliteNode === undefined ? 'no Node.js with node:sqlite available' : false }, () => {
  const cases = [
    {
      name: 'a data directory that cannot be created (a file stands where its parent should be)',
      prepare: (): string => { writeFileSync(join(temp, 'state-blocker'), 'x'); return join(temp, 'state-blocker', 'state') },
      message: 'ProjectTemplate:State:Embedded:DataDirectory does not exist and cannot be created (ENOTDIR). Make it a directory (mode 0700) the user running the application may write, point ProjectTemplate:State:Embedded:DataDirectory at one, or set ProjectTemplate:State:Embedded:Persist to false (the store is then kept in memory: a restart signs every user out).'
    },
    {
      name: 'a data directory open to others (mode 0755)',
      prepare: (): string => { const directory = join(temp, 'state-open'); mkdirSync(directory); chmodSync(directory, 0o755); return directory },
      message: 'ProjectTemplate:State:Embedded:DataDirectory must be accessible to its owner only (mode 0700); it has mode 0755. Run chmod 700 on it.'
    }
  ]
  for (const { name, prepare, message } of cases) {
    test(`${name}: check-config refuses it as startup does, with the same sentence`, async () => {
      const directory = prepare()
      const variables = cleanEnv({ PORT: '0', ProjectTemplate__State__Embedded__Persist: 'true', ProjectTemplate__State__Embedded__DataDirectory: directory })
      const { check, server } = runBoth(sqliteNode ?? process.execPath, variables)
      try {
        const [checkExit, serverExit] = await Promise.all([check.exited(60_000), server.exited(60_000)])
        assert.equal(checkExit, 1, `check-config exits 1: ${check.stdout()}`)
        assert.equal(serverExit, 1, 'the server exits 1')
        const summary = JSON.parse(check.stdout()) as { valid: boolean, errors: Array<{ key: string, message: string }> }
        assert.deepEqual(summary.errors, [{ key: 'ProjectTemplate:State:Embedded:DataDirectory', message }])
        const invalid = jsonLines(server.stdout()).filter((record) => record.event === 'configuration.invalid')
        assert.equal(invalid.length, 1)
        assert.deepEqual(invalid[0]?.errors, [message])
        assert.ok(!server.stdout().includes('Server listening'))
        for (const run of [check, server]) {
          // Node 22 announces node:sqlite as experimental on stderr; nothing else may be there.
          assert.deepEqual(run.stderr().split('\n').filter((line) => line.trim() !== '' && !/ExperimentalWarning: SQLite|--trace-warnings/.test(line)), [])
          assert.ok(!/\n\s+at /.test(run.stdout()), 'no stack trace')
        }
      } finally {
        check.kill()
        server.kill()
      }
    })
  }
})

/**
 * Issue 33, item 7: with Telemetry:Enabled and the OpenTelemetry SDK missing, check-config said
 * "valid" while startup refused. Both now import the SDK packages the settings need through the
 * same table (telemetry/sdk.ts); the packages are hidden by a resolve hook
 * (test/helpers/without-telemetry-sdk.ts), as in an app that never installed them.
 */
describe('Telemetry:Enabled with the OpenTelemetry SDK not installed', () => {
  const WITHOUT_SDK = ['--import', 'tsx', '--import', join(CORE_ROOT, 'test', 'helpers', 'without-telemetry-sdk.ts')]
  const MESSAGE = 'ProjectTemplate:Telemetry:Enabled is true but the OpenTelemetry SDK is not installed; add it to the app: npm install @opentelemetry/sdk-metrics @opentelemetry/resources @opentelemetry/exporter-prometheus @opentelemetry/exporter-metrics-otlp-http @opentelemetry/sdk-trace-node @opentelemetry/exporter-trace-otlp-http @fastify/otel.'
  const telemetryOn = (): NodeJS.ProcessEnv => cleanEnv({ PORT: '0', ProjectTemplate__Telemetry__Enabled: 'true', ProjectTemplate__Telemetry__Prometheus__Enabled: 'true' })

  test('check-config refuses it as startup does: exit 1, the same sentence, no stack', async () => {
    const check = runProcess(process.execPath, [...WITHOUT_SDK, 'src/check-config.ts', '--json'], { cwd: APP_ROOT, env: telemetryOn() })
    const text = runProcess(process.execPath, [...WITHOUT_SDK, 'src/check-config.ts'], { cwd: APP_ROOT, env: telemetryOn() })
    const server = runProcess(process.execPath, [...WITHOUT_SDK, 'src/server.ts'], { cwd: APP_ROOT, env: telemetryOn() })
    try {
      const [checkExit, textExit, serverExit] = await Promise.all([check.exited(60_000), text.exited(60_000), server.exited(60_000)])
      assert.equal(serverExit, 1, 'the server exits 1')
      const invalid = jsonLines(server.stdout()).filter((record) => record.event === 'configuration.invalid')
      assert.equal(invalid.length, 1, server.stdout())
      assert.deepEqual(invalid[0]?.errors, [MESSAGE])
      assert.ok(!server.stdout().includes('Server listening'))
      assert.equal(checkExit, 1, `check-config exits 1: ${check.stdout()}`)
      const summary = JSON.parse(check.stdout()) as { valid: boolean, errors: Array<{ key: string, message: string }> }
      assert.equal(summary.valid, false)
      assert.deepEqual(summary.errors, [{ key: 'ProjectTemplate:Telemetry:Enabled', message: MESSAGE }])
      assert.equal(textExit, 1)
      assert.match(text.stdout(), /^Configuration: INVALID \(1 error\); the application would not start\n/)
      assert.ok(text.stdout().includes(`  - ${MESSAGE}\n`), text.stdout())
      for (const run of [check, text, server]) {
        assert.equal(run.stderr(), '')
        assert.ok(!/\n\s+at /.test(run.stdout()), 'no stack trace')
        assert.ok(!run.stdout().includes('ERR_MODULE_NOT_FOUND'))
      }
    } finally {
      for (const run of [check, text, server]) run.kill()
    }
  })

  test('control: with the SDK installed, the same configuration is valid', async () => {
    const run = runEntryPoint('src/check-config.ts', telemetryOn(), ['--json'])
    try {
      assert.equal(await run.exited(60_000), 0, run.stdout())
      assert.equal((JSON.parse(run.stdout()) as { valid: boolean }).valid, true)
    } finally {
      run.kill()
    }
  })
})

describe('check-config says where the environment name came from', () => {
  test('NODE_ENV unset: Production is the default, not "from NODE_ENV"', async () => {
    const variables = cleanEnv({})
    delete variables.NODE_ENV
    const run = runEntryPoint('src/check-config.ts', variables)
    try {
      assert.equal(await run.exited(60_000), 0, run.stdout())
      const lines = run.stdout().split('\n')
      assert.ok(lines.includes('Environment:   Production (the default: NODE_ENV is not set; NODE_ENV=development selects Development)'), run.stdout())
      assert.ok(!run.stdout().includes('from NODE_ENV'))
    } finally {
      run.kill()
    }
  })

  test('a .env that was not read (outside Development) is named as such', () => {
    const loaded = loadConfiguration({ env: cleanEnv({}), contentRoot: APP_ROOT })
    const lines = formatSummary(summarizeConfiguration(loaded, { environmentFrom: 'default', dotenvIgnored: true }), ROOT_KEY).split('\n')
    assert.ok(lines.includes('  .env is not read: it is read in Development only (NODE_ENV=development, as npm run dev sets)'), lines.join('\n'))
    assert.ok(!formatSummary(summarizeConfiguration(loaded, { environmentFrom: 'default', dotenvIgnored: false }), ROOT_KEY).includes('.env'))
  })

  test('NODE_ENV=production: from NODE_ENV', async () => {
    const run = runEntryPoint('src/check-config.ts', cleanEnv({ NODE_ENV: 'production' }))
    try {
      assert.equal(await run.exited(60_000), 0, run.stdout())
      assert.ok(run.stdout().split('\n').includes('Environment:   Production (from NODE_ENV)'), run.stdout())
    } finally {
      run.kill()
    }
  })
})

describe('KnownProxies rule and Fastify agree', () => {
  const accepted = ['10.0.0.1', '10.0.0.0/8', '10.0.0.0/255.0.0.0', '::1', 'fd00::/8', '2001:db8::1/128', 'loopback', 'linklocal', 'uniquelocal', '255.255.255.255/32']
  const refused = ['10.0.0.300', '10.0.0.0/33', '10.0.0.0/0', '::1/129', '10.0.0.0/255.0.255.0', 'proxy.example.test', '10.0.0.1, 10.0.0.2', '', ' 10.0.0.1', '10.0.0.0/x', 'Loopback']
  for (const value of accepted) {
    test(`${JSON.stringify(value)} is accepted by the rule and by Fastify`, () => {
      assert.equal(isProxyAddress(value), true)
      assert.doesNotThrow(() => Fastify({ trustProxy: [value] }))
    })
  }
  for (const value of refused) {
    test(`${JSON.stringify(value)} is refused by the rule${value === '' ? '' : ' (Fastify would crash or mistrust)'}`, () => {
      assert.equal(isProxyAddress(value), false)
    })
  }
  test('every value Fastify refuses, the rule refuses', () => {
    for (const value of [...accepted, ...refused]) {
      let fastifyAccepts = true
      try { Fastify({ trustProxy: [value] }) } catch { fastifyAccepts = false }
      if (!fastifyAccepts) assert.equal(isProxyAddress(value), false, JSON.stringify(value))
    }
  })
})
