// @ts-check
/**
 * The command line: help and version, every kind of invalid input (exact message, exit status 2,
 * nothing written), a failure while writing (rolled back, exit status 1), no prompt without a
 * terminal, and the prompts with a terminal.
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { userInfo } from 'node:os'
import { join } from 'node:path'
import { main } from '../lib/cli.mjs'
import { BIN, PACKAGE_DIR, TEMPLATE_DIR, generate, snapshot, tempDir } from './helpers.mjs'

const sandbox = tempDir('cpt-cli-')
after(() => rmSync(sandbox, { recursive: true, force: true }))

const USAGE_HINT = 'Run create-project-template --help for usage. Nothing was written.\n'
const VALID_OPTIONS = 'Valid options: --name, --authProvider, --skip-install, --force, --help, --version.'

test('--help prints the usage with every option and both providers, exit status 0', async () => {
  const result = await generate(['--help'])
  assert.equal(result.status, 0)
  assert.equal(result.stderr, '')
  assert.match(result.stdout, /^Usage: create-project-template <directory> \[options\]/)
  for (const option of ['--name <Name>', '--authProvider <provider>', '--skip-install', '--force', '--help', '--version']) {
    assert.ok(result.stdout.includes(option), option)
  }
  assert.match(result.stdout, /cookie \(default\): closed by default/)
  assert.match(result.stdout, /none: authentication off/)
})

test('--version prints the package version', async () => {
  const result = await generate(['--version'])
  assert.equal(result.status, 0)
  assert.equal(result.stdout, `${JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')).version}\n`)
})

/**
 * A bad-input case whose arguments and message do not depend on the directory it runs in.
 * @param {string} title
 * @param {string[]} args
 * @param {string} message
 */
const fixed = (title, args, message) => ({ title, args: () => args, message: () => message })

/**
 * One bad-input case: a fresh directory `root` prepared by `setup`, the generator run there with
 * `args`; the exact stderr, exit status 2, empty stdout and an unchanged tree are asserted.
 * @type {Array<{ title: string, args: (root: string) => string[], message: (root: string) => string, setup?: (root: string) => void, skip?: string | false }>}
 */
const BAD_INPUT = [
  fixed('an unknown option', ['my-app', '--bogus'], `Unknown option --bogus. ${VALID_OPTIONS}`),
  fixed('an unknown short option', ['my-app', '-x'], `Unknown option -x. ${VALID_OPTIONS}`),
  fixed('a value for a flag', ['my-app', '--force=yes'], 'Option --force does not take a value.'),
  fixed('an invalid --authProvider value, listing the valid ones', ['my-app', '--authProvider', 'saml'], 'Invalid --authProvider value "saml". Valid values: cookie, none.'),
  fixed('an --authProvider in the wrong case', ['my-app', '--authProvider=None'], 'Invalid --authProvider value "None". Valid values: cookie, none.'),
  fixed('--authProvider without a value', ['my-app', '--authProvider'], 'Option --authProvider needs a value.'),
  fixed('an invalid --name', ['my-app', '--name', 'my-app'], 'Invalid --name. The name "my-app" is not valid: expected PascalCase, an upper-case letter followed by letters and digits only (for example MyApp), because it becomes the configuration root key, the environment-variable prefix and part of cookie names.'),
  fixed('a directory that yields no valid name', ['9lives'], 'No valid name can be derived from the directory name "9lives": The name "9lives" is not valid: expected PascalCase, an upper-case letter followed by letters and digits only (for example MyApp), because it becomes the configuration root key, the environment-variable prefix and part of cookie names. Pass --name <Name>.'),
  fixed('two directories', ['one', 'two'], 'Expected one <directory>, got 2: one two.'),
  fixed('no directory and no terminal (nothing is asked)', ['--authProvider', 'none'], 'Missing <directory>: pass the directory to create the project in (no terminal, so nothing is asked).'),
  {
    title: 'a non-empty target directory without --force',
    setup: (root) => { mkdirSync(join(root, 'my-app')); writeFileSync(join(root, 'my-app', 'notes.txt'), 'mine') },
    args: () => ['my-app'],
    message: (root) => `The target directory ${join(root, 'my-app')} is not empty; choose a new or empty directory, or pass --force to write into it (files with the same names are overwritten).`
  },
  {
    title: 'a target that is a file',
    setup: (root) => writeFileSync(join(root, 'my-app'), 'a file'),
    args: () => ['my-app'],
    message: (root) => `The target ${join(root, 'my-app')} exists and is not a directory.`
  },
  {
    title: 'an unwritable target: its parent is a file',
    setup: (root) => writeFileSync(join(root, 'parent'), 'a file'),
    args: () => ['parent/my-app'],
    message: (root) => `The target directory ${join(root, 'parent', 'my-app')} cannot be created: ${join(root, 'parent')} is not a directory.`
  },
  {
    title: 'an unwritable target: a read-only parent directory',
    skip: userInfo().uid === 0 && 'root may write to a read-only directory; the not-a-directory case covers this path as root',
    setup: (root) => { mkdirSync(join(root, 'locked')); chmodSync(join(root, 'locked'), 0o555) },
    args: () => ['locked/my-app'],
    message: (root) => `The target directory ${join(root, 'locked', 'my-app')} cannot be created: ${join(root, 'locked')} is not writable.`
  },
  {
    // As root, access() grants /proc but mkdir fails there: the write-time check answers.
    title: 'an unwritable target: a directory the file system refuses (/proc)',
    skip: !existsSync('/proc/self') && 'no /proc on this system',
    args: () => ['/proc/create-project-template-test'],
    message: () => userInfo().uid === 0
      ? "The target directory /proc/create-project-template-test cannot be created: ENOENT: no such file or directory, mkdir '/proc/create-project-template-test'."
      : 'The target directory /proc/create-project-template-test cannot be created: /proc is not writable.'
  },
  fixed('a target inside the template', [join(TEMPLATE_DIR, 'generated-here')], `The target directory ${join(TEMPLATE_DIR, 'generated-here')} is inside the template (${TEMPLATE_DIR}); choose a directory outside it.`)
]

describe('invalid input: exact message, exit status 2, nothing written', () => {
  let index = 0
  for (const { title, args, message, setup, skip } of BAD_INPUT) {
    const root = join(sandbox, `bad-${index++}`)
    test(title, { skip }, async () => {
      mkdirSync(root)
      setup?.(root)
      const before = snapshot(root)
      const result = await generate(args(root), { cwd: root })
      assert.equal(result.stderr, `create-project-template: ${message(root)}\n${USAGE_HINT}`)
      assert.equal(result.status, 2)
      assert.equal(result.stdout, '')
      assert.deepEqual(snapshot(root), before)
      assert.equal(existsSync(join(TEMPLATE_DIR, 'generated-here')), false)
      chmodSync(root, 0o755)
    })
  }
})

test('a failure while writing removes everything written and keeps what was there, exit status 1', async () => {
  const root = join(sandbox, 'midway')
  const target = join(root, 'my-app')
  // A directory where the generator writes README.md: the files sorted before it are written
  // first (.github/workflows/ci.yml, .gitignore), then writing README.md fails.
  mkdirSync(join(target, 'README.md'), { recursive: true })
  writeFileSync(join(target, 'README.md', 'keep.txt'), 'mine')
  const before = snapshot(root)
  const result = await generate(['my-app', '--force', '--skip-install'], { cwd: root })
  assert.equal(result.status, 1)
  assert.equal(result.stderr, `create-project-template: Writing ${join(target, 'README.md')} failed (${join(target, 'README.md')} exists and is not a file.); everything written was removed.\n`)
  assert.deepEqual(snapshot(root), before)
})

test('--force writes into a non-empty directory and keeps unrelated files', async () => {
  const root = join(sandbox, 'forced')
  mkdirSync(join(root, 'my-app'), { recursive: true })
  writeFileSync(join(root, 'my-app', 'notes.txt'), 'mine')
  writeFileSync(join(root, 'my-app', 'README.md'), 'old')
  const result = await generate(['my-app', '--force', '--skip-install'], { cwd: root })
  assert.equal(result.status, 0, result.stderr)
  assert.equal(readFileSync(join(root, 'my-app', 'notes.txt'), 'utf8'), 'mine')
  // The count is what was written: every file but notes.txt, README.md among them.
  const written = readdirSync(join(root, 'my-app'), { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).length - 1
  assert.match(result.stdout, new RegExp(`: ${written} files \\(1 overwritten\\)\\.\\n`), result.stdout)
  assert.equal(JSON.parse(readFileSync(join(root, 'my-app', 'package.json'), 'utf8')).name, 'my-app')
})

test('a directory holding only .git counts as empty', async () => {
  const root = join(sandbox, 'git-only')
  mkdirSync(join(root, 'my-app', '.git'), { recursive: true })
  const result = await generate(['my-app', '--skip-install'], { cwd: root })
  assert.equal(result.status, 0, result.stderr)
})

describe('prompts (a terminal)', () => {
  /**
   * Fake @clack/prompts answering from a list; records the questions.
   * @param {unknown[]} answers
   */
  function fakePrompts (answers) {
    const CANCEL = Symbol('cancel')
    /** @type {string[]} */
    const asked = []
    /** @param {{ message: string }} question */
    const answer = async (question) => {
      asked.push(question.message)
      const next = answers.shift()
      return next === 'CANCEL' ? CANCEL : next
    }
    return {
      asked,
      prompts: {
        intro () {},
        outro () {},
        cancel () {},
        isCancel: (/** @type {unknown} */ value) => value === CANCEL,
        text: answer,
        select: answer,
        confirm: answer
      }
    }
  }

  /** @param {string} cwd @param {unknown[]} answers @param {string[]} [argv] */
  async function runInteractive (cwd, answers, argv = []) {
    const fake = fakePrompts(answers)
    let stdout = ''
    let stderr = ''
    const status = await main({
      argv,
      cwd,
      env: {},
      stdout: { write: (text) => { stdout += text } },
      stderr: { write: (text) => { stderr += text } },
      interactive: true,
      // @ts-expect-error a partial fake of the prompts module
      loadPrompts: async () => fake.prompts,
      install: async () => { throw new Error('install must not run') }
    })
    return { status, stdout, stderr, asked: fake.asked }
  }

  test('without a directory, asks for directory, name and authentication, then generates', async () => {
    const root = join(sandbox, 'prompted')
    mkdirSync(root)
    const result = await runInteractive(root, ['shop-front', 'ShopFront', 'none'], ['--skip-install'])
    assert.equal(result.status, 0, result.stderr)
    assert.deepEqual(result.asked, ['Directory for the new project', 'Project name (PascalCase)', 'Authentication'])
    const settings = JSON.parse(readFileSync(join(root, 'shop-front', 'appsettings.json'), 'utf8'))
    assert.equal(settings.ShopFront.Authentication.Enabled, false)
  })

  test('values given as options are not asked again', async () => {
    const root = join(sandbox, 'prompted-partly')
    mkdirSync(root)
    const result = await runInteractive(root, ['api'], ['--name', 'Backend', '--authProvider', 'cookie', '--skip-install'])
    assert.equal(result.status, 0, result.stderr)
    assert.deepEqual(result.asked, ['Directory for the new project'])
    assert.equal(JSON.parse(readFileSync(join(root, 'api', 'package.json'), 'utf8')).name, 'backend')
  })

  test('a non-empty directory is written into only after a confirmation; declining writes nothing', async () => {
    const root = join(sandbox, 'prompted-confirm')
    mkdirSync(join(root, 'busy'), { recursive: true })
    writeFileSync(join(root, 'busy', 'notes.txt'), 'mine')
    const before = snapshot(root)
    const result = await runInteractive(root, ['busy', 'Busy', 'cookie', false], ['--skip-install'])
    assert.equal(result.status, 2)
    assert.match(result.stderr, /is not empty/)
    assert.deepEqual(snapshot(root), before)
  })

  test('cancelling a prompt writes nothing, exit status 130', async () => {
    const root = join(sandbox, 'prompted-cancel')
    mkdirSync(root)
    const before = snapshot(root)
    const result = await runInteractive(root, ['later', 'CANCEL'])
    assert.equal(result.status, 130)
    assert.deepEqual(snapshot(root), before)
  })
})

test('the bin is executable and starts with a node shebang', () => {
  assert.match(readFileSync(BIN, 'utf8'), /^#!\/usr\/bin\/env node\n/)
})
