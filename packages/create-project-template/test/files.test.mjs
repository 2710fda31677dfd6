// @ts-check
/**
 * The generator's own files (files/, fragments/) as files: only listed placeholders, each listed
 * one used; an unknown, misspelt or value-less placeholder fails rendering with its file's name;
 * GitHub's `${{ }}` expressions pass through; the YAML files parse, the Dockerfile passes
 * dockerfile-utils as it is stored, and every text file is tidy (final newline, no trailing
 * blanks, no tabs). A generated project holds each file rendered, at its project path, and the
 * files without placeholders byte for byte. deploy/nginx.conf runs in a real nginx in
 * packages/core/test/deploy (test/helpers/nginx.ts reads files/deploy/nginx.conf).
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { FILES_DIR, FRAGMENTS_DIR, OUTPUT_PATHS, PLACEHOLDERS, placeholdersIn, readFilesDir, renderText } from '../lib/generated-files.mjs'
import { generate, run, tempDir } from './helpers.mjs'

const require = createRequire(import.meta.url)
/** @type {{ load: (text: string) => unknown }} js-yaml ships no types */
const yaml = require('js-yaml')
const LINTER = join(dirname(require.resolve('dockerfile-utils/package.json')), 'bin', 'dockerfile-utils')
const files = readFilesDir(FILES_DIR)
/** A GitHub Actions expression, as the CI workflow has one. */
const EXPRESSION = '$' + '{{ matrix.node }}'
const fragments = readFilesDir(FRAGMENTS_DIR)

describe('placeholders', () => {
  test('files/ and fragments/ use only listed placeholders, and every listed one is used', () => {
    const used = new Set([...files, ...fragments].flatMap((file) => placeholdersIn(file.text)))
    assert.deepEqual([...used].filter((name) => !Object.hasOwn(PLACEHOLDERS, name)), [])
    assert.deepEqual(Object.keys(PLACEHOLDERS).filter((name) => !used.has(name)), [])
  })

  test('an unknown, spaced or value-less placeholder fails with the file\'s name; values are not scanned again', () => {
    const values = { name: 'Shop', testCommand: '{{name}}' }
    assert.throws(() => renderText('a {{nmae}} b', values, 'files/x'), { message: /^files\/x uses the placeholder \{\{nmae\}\}, which is not one of name, projectName, / })
    assert.throws(() => renderText('{{ name }}', values, 'files/x'), { message: /^files\/x uses the placeholder \{\{ name \}\}, which is not one of / })
    assert.throws(() => renderText('{{coreVersion}}', values, 'files/x'), { message: 'files/x uses the placeholder {{coreVersion}}, which was given no value.' })
    assert.equal(renderText(`{{name}} ${EXPRESSION} {{testCommand}}`, values, 'files/x'), `Shop ${EXPRESSION} {{name}}`)
  })
})

describe('files as files', () => {
  test('every text file ends with one newline and has no trailing blanks or tabs', () => {
    for (const { source, text } of [...files, ...fragments]) {
      assert.ok(text.endsWith('\n') && !text.endsWith('\n\n'), `${source}: one final newline`)
      assert.deepEqual(text.split('\n').flatMap((line, index) => (/[ \t]$|\t/.test(line) ? [index + 1] : [])), [], `${source}: lines with trailing blanks or tabs`)
    }
  })

  test('compose.yaml and the CI workflow are valid YAML once rendered, with the shapes they promise', () => {
    const text = (/** @type {string} */ source) => files.find((file) => file.source === source)?.text ?? ''
    const compose = /** @type {any} */ (yaml.load(renderText(text('compose.yaml'), { name: 'Shop', projectName: 'shop' }, 'compose.yaml')))
    assert.deepEqual(Object.keys(compose.services), ['app1', 'app2', 'redis', 'proxy'])
    assert.equal(compose.name, 'shop')
    assert.equal(compose.services.app1.environment.Shop__State__Provider, 'Redis')
    const ci = /** @type {any} */ (yaml.load(renderText(text('.github/workflows/ci.yml'), { testCommand: 'npm test' }, 'ci.yml')))
    assert.equal(ci.jobs.test.container, `node:${EXPRESSION}-bookworm`)
    assert.deepEqual(ci.jobs.test.steps.at(-1), { name: 'Test', run: 'npm test' })
  })

  test('files/Dockerfile, as stored, passes dockerfile-utils lint', async () => {
    const result = await run(process.execPath, [LINTER, 'lint', join(FILES_DIR, 'Dockerfile')])
    assert.equal(result.status, 0, `${result.stdout}${result.stderr}`)
  })
})

describe('in a generated project', () => {
  const sandbox = tempDir('cpt-files-')
  const project = join(sandbox, 'shop-front')
  before(async () => {
    const result = await generate(['shop-front', '--skip-install'], { cwd: sandbox })
    assert.equal(result.status, 0, result.stderr)
  })
  after(() => rmSync(sandbox, { recursive: true, force: true }))

  test('every file of files/ is there at its project path, rendered; those without placeholders byte for byte', () => {
    for (const { source, text } of files) {
      const path = /** @type {Record<string, string>} */ (OUTPUT_PATHS)[source] ?? source
      const written = readFileSync(join(project, path), 'utf8')
      assert.deepEqual(placeholdersIn(written), [], `${path}: nothing left unreplaced`)
      if (placeholdersIn(text).length === 0) assert.equal(written, text, path)
    }
    assert.match(readFileSync(join(project, '.gitignore'), 'utf8'), /^node_modules\/$/m)
  })
})
