/**
 * The task guides (docs/guides/*.md) are true of the code (issue 34, item 8): every configuration
 * block a guide marks ```json appsettings, and every block of environment variables it marks
 * ```sh env, is loaded through the real configuration loader (the starter app's appsettings.json
 * under it, as startup does) and must validate with no error; every `npm run <script>` names a
 * script of the starter app's package.json (what a generated app has); every ```ts typecheck
 * block is written to a file and typechecked against the core's own types; and every guide is in
 * the index and short enough to read in one sitting.
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { join } from 'node:path'
import type { TestSettings } from '../../src/testing/app.js'
import { APP_ROOT, CORE_ROOT, loadTestConfiguration } from '../helpers/app.js'

const GUIDES = join(CORE_ROOT, 'docs', 'guides')
const ROOT_KEY = 'ProjectTemplate'
/** Longest guide, in lines: one sitting. */
const MAX_LINES = 160
/**
 * Where a guide's block stands for a secret from the secret store, a fresh one is put (a guide
 * prints no key): the rules that parse and weigh keys then run on a real one.
 */
const PLACEHOLDERS: ReadonlyArray<readonly [string, () => string]> = [
  ['<private key PEM from the secret store>', () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()],
  ['<a key from npm run --silent generate-key>', () => randomBytes(32).toString('base64')]
]

/** `text` with each placeholder replaced (`json`: as a JSON string's content). */
function withSecrets (text: string, json: boolean): string {
  let result = text
  for (const [placeholder, make] of PLACEHOLDERS) result = result.replaceAll(placeholder, () => json ? JSON.stringify(make()).slice(1, -1) : make())
  return result
}

/** A fenced block; `nodeEnv` from a last word of its info string (```json appsettings Development). */
interface Block { readonly guide: string, readonly line: number, readonly text: string, readonly nodeEnv: string | undefined }

function guides (): string[] {
  return readdirSync(GUIDES).filter((file) => file.endsWith('.md') && file !== 'README.md').sort()
}

function read (file: string): string {
  return readFileSync(join(GUIDES, file), 'utf8')
}

/** The fenced blocks of every guide whose info string is `info`, optionally followed by an environment name. */
function blocks (info: string): Block[] {
  const found: Block[] = []
  for (const guide of guides()) {
    const text = read(guide)
    // A fence may be indented under a numbered step: its lines lose that indentation.
    for (const match of text.matchAll(/^( *)```([^\n]*)\n([\s\S]*?)^\1```$/gm)) {
      const indent = match[1] ?? ''
      const words = (match[2] ?? '').trim().split(/\s+/)
      const environment = words.length === info.split(' ').length + 1 ? words.pop() : undefined
      if (words.join(' ') !== info) continue
      assert.ok(environment === undefined || environment === 'Development', `${guide}: unknown environment ${environment}`)
      found.push({ guide, line: text.slice(0, match.index).split('\n').length, text: (match[3] ?? '').split('\n').map((line) => line.startsWith(indent) ? line.slice(indent.length) : line).join('\n'), nodeEnv: environment?.toLowerCase() })
    }
  }
  return found
}

/** `KEY=value` lines (with or without `export`, comments skipped) under the root key as nested settings. */
function settingsFromEnvironment (text: string): TestSettings {
  const settings: TestSettings = {}
  for (const raw of text.split('\n')) {
    const line = raw.replace(/^export /, '').trim()
    if (line === '' || line.startsWith('#')) continue
    const match = /^([A-Za-z][\w]*)=(.*)$/.exec(line)
    assert.ok(match !== null, `not a KEY=value line: ${line}`)
    const [, name = '', value = ''] = match
    const path = name.split('__')
    assert.equal(path[0], ROOT_KEY, `${name} is not under the root key`)
    let node = settings
    for (const segment of path.slice(1, -1)) node = (node[segment] ??= {}) as TestSettings
    node[path.at(-1) ?? ''] = value.replace(/^"(.*)"$/, '$1')
  }
  return settings
}

function problemsOf (settings: TestSettings, nodeEnv: string | undefined): string[] {
  const loaded = loadTestConfiguration({ settings, ...(nodeEnv === undefined ? {} : { nodeEnv }) })
  // A misspelt key is only a warning at startup (typo protection); in a guide it is a mistake.
  const unknownKeys = loaded.warnings.filter((warning) => warning.event === 'configuration.unknown_key')
  return [...loaded.errors, ...unknownKeys].map((problem) => `${problem.key}: ${problem.message}`)
}

describe('the task guides', () => {
  test('there is a guide per task, each listed in the index and short enough to read in one sitting', () => {
    assert.deepEqual(guides(), [
      'add-an-identity-provider.md', 'api-keys.md', 'call-another-api.md', 'customers-idps-at-runtime.md', 'enterprise.md', 'get-started.md', 'observe.md',
      'production-checklist.md', 'protect-an-api.md', 'protect-an-mcp-server.md', 'provision-users.md', 'several-instances.md', 'several-providers.md'
    ])
    const index = read('README.md')
    for (const guide of guides()) {
      assert.match(index, new RegExp(`\\]\\(${guide.replace('.', '\\.')}\\)`), `${guide} is not in the index`)
      const lines = read(guide).split('\n').length
      assert.ok(lines <= MAX_LINES, `${guide} has ${lines} lines`)
    }
  })

  test('every ```json appsettings block loads through the configuration loader with no error', () => {
    const found = blocks('json appsettings')
    assert.ok(found.length >= 8, `only ${found.length} configuration blocks`)
    for (const block of found) {
      const document = JSON.parse(withSecrets(block.text, true)) as Record<string, unknown>
      assert.deepEqual(Object.keys(document), [ROOT_KEY], `${block.guide}:${block.line} is one ${ROOT_KEY} section`)
      assert.deepEqual(problemsOf(document[ROOT_KEY] as TestSettings, block.nodeEnv), [], `${block.guide}:${block.line}`)
    }
  })

  test('every ```sh env block of environment variables loads through the configuration loader with no error', () => {
    const found = blocks('sh env')
    assert.ok(found.length >= 2, `only ${found.length} environment blocks`)
    for (const block of found) {
      assert.deepEqual(problemsOf(settingsFromEnvironment(withSecrets(block.text, false)), block.nodeEnv), [], `${block.guide}:${block.line}`)
    }
  })

  test('the check has teeth: a misspelt key and a missing required key are reported', () => {
    const loaded = loadTestConfiguration({ settings: { Hosting: { PublicOrigin: 'https://app.example.com' }, Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: 'https://login.example.com' } } } } })
    assert.ok(loaded.errors.some((problem) => problem.key.endsWith(':OpenIdConnect:ClientId')), 'a missing ClientId is an error')
    const misspelt = problemsOf({ Telemetry: { Enabled: true, Prometheus: { Enabled: true, Prot: 9464 } } }, undefined)
    assert.ok(misspelt.some((problem) => problem.startsWith('ProjectTemplate:Telemetry:Prometheus:Prot')), misspelt.join('\n'))
    assert.deepEqual(settingsFromEnvironment('export ProjectTemplate__State__Redis__KeyPrefix="a:"\n# comment\nProjectTemplate__Hosting__AllowedHosts__0=b'),
      { State: { Redis: { KeyPrefix: 'a:' } }, Hosting: { AllowedHosts: { 0: 'b' } } })
    // The placeholder itself is no key: the substitution is what makes such a block valid.
    const withPlaceholder = { Hosting: { PublicOrigin: 'https://app.example.com' }, Authentication: { Providers: { OpenIdConnect: { Enabled: true, Authority: 'https://login.example.com', ClientId: 'c', TokenEndpointAuthMethod: 'private_key_jwt', ClientAssertionKeys: [PLACEHOLDERS[0]?.[0] ?? ''] } } } }
    assert.ok(problemsOf(withPlaceholder, undefined).some((problem) => problem.includes(':ClientAssertionKeys')))
    assert.deepEqual(problemsOf(JSON.parse(withSecrets(JSON.stringify(withPlaceholder), true)) as TestSettings, undefined), [])
  })

  test('every `npm run <script>` names a script of the app', () => {
    const scripts = Object.keys((JSON.parse(readFileSync(join(APP_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts)
    let checked = 0
    for (const guide of [...guides(), 'README.md']) {
      for (const [, script] of read(guide).matchAll(/npm run (?:--silent )?([\w:-]+)/g)) {
        checked++
        assert.ok(script !== undefined && scripts.includes(script), `${guide}: npm run ${script}`)
      }
    }
    assert.ok(checked >= 10, `only ${checked} commands`)
  })

  describe('every ```ts typecheck block typechecks against the core\'s types', () => {
    const output = join(CORE_ROOT, 'test', 'output', 'guides-typecheck')
    after(() => rmSync(output, { recursive: true, force: true }))

    test('tsc reports nothing', () => {
      const found = blocks('ts typecheck')
      assert.ok(found.length >= 3, `only ${found.length} TypeScript blocks`)
      rmSync(output, { recursive: true, force: true })
      mkdirSync(output, { recursive: true })
      const files = found.map((block, index) => {
        const file = `${block.guide.replace(/\.md$/, '')}-${block.line}-${index}.ts`
        // Each block is a module of its own (an example may declare what another declares too).
        writeFileSync(join(output, file), `${block.text}\nexport {}\n`)
        return file
      })
      writeFileSync(join(output, 'tsconfig.json'), JSON.stringify({
        extends: '../../../tsconfig.json',
        compilerOptions: { noEmit: true, noUnusedLocals: false, rootDir: '../../../../..' },
        include: files
      }))
      const tsc = join(CORE_ROOT, 'node_modules', '.bin', 'tsc')
      let report = ''
      try {
        execFileSync(existsSync(tsc) ? tsc : join(CORE_ROOT, '..', '..', 'node_modules', '.bin', 'tsc'), ['-p', join(output, 'tsconfig.json')], { encoding: 'utf8', stdio: 'pipe' })
      } catch (error) {
        report = String((error as { stdout?: string }).stdout ?? error)
      }
      assert.equal(report, '')
    })
  })
})
