// @ts-check
/**
 * The generated project, without installing: what is copied (and what is not), the rename, the
 * manifest, the posture of each --authProvider, README, .gitignore and CI workflow; and the
 * write journal that undoes a failure part-way.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CORE_PACKAGE, REGISTRY_SWITCH_COMMAND, findCoreTarball, nextPatchOf, patchLineOf } from '../lib/core-package.mjs'
import { renameText } from '../lib/naming.mjs'
import { planProject } from '../lib/plan.mjs'
import { isExcluded, readTemplateFiles, unclassifiedEntries } from '../lib/template-files.mjs'
import { writeProject } from '../lib/write-project.mjs'
import { PACKAGE_DIR, TEMPLATE_DIR, checkoutCore, generate, snapshot, tempDir, templateNameLeftovers } from './helpers.mjs'

const CORE_DIR = join(PACKAGE_DIR, '..', 'core')
const CORE_VERSION = checkoutCore().version
const CORE_TARBALL = `vendor/project-template-core-${CORE_VERSION}.tgz`

/** Every file below `root` (relative paths), node_modules aside. */
function filesBelow (/** @type {string} */ root, /** @type {string} */ prefix = '') {
  /** @type {string[]} */
  const found = []
  for (const entry of readdirSync(join(root, prefix))) {
    const path = prefix === '' ? entry : `${prefix}/${entry}`
    if (entry === 'node_modules') continue
    if (statSync(join(root, path)).isDirectory()) found.push(...filesBelow(root, path))
    else found.push(path)
  }
  return found
}
const sha256 = (/** @type {Buffer} */ data) => createHash('sha256').update(data).digest('hex')

const sandbox = tempDir('cpt-generate-')
const cookieProject = join(sandbox, 'acme-portal')
const noneProject = join(sandbox, 'open-demo')
const read = (/** @type {string} */ root, /** @type {string} */ path) => readFileSync(join(root, path), 'utf8')
const json = (/** @type {string} */ root, /** @type {string} */ path) => JSON.parse(read(root, path))

/** What the generator printed for each project. */
const printed = { cookie: '', none: '' }

before(async () => {
  const cookie = await generate(['acme-portal', '--skip-install'], { cwd: sandbox })
  assert.equal(cookie.status, 0, cookie.stderr)
  const none = await generate(['open-demo', '--name', 'OpenDemo', '--authProvider', 'none', '--skip-install'], { cwd: sandbox })
  assert.equal(none.status, 0, none.stderr)
  printed.cookie = cookie.stdout
  printed.none = none.stdout
})
after(() => rmSync(sandbox, { recursive: true, force: true }))

describe('what is copied', () => {
  test('every top-level entry of the template is either copied or deliberately left out', () => {
    assert.deepEqual(unclassifiedEntries(TEMPLATE_DIR), [])
  })

  test('build output, installed packages, keys, logs, secrets and test output are never copied', () => {
    for (const path of ['node_modules/x/index.js', 'dist/server.js', '.keys/session-keys.json', 'logs/app.log', 'server.log',
      'test/output/page.png', 'src/.keys/k', 'secrets.json', 'config/app.secrets.json', '.env', '.env.local', 'tsconfig.tsbuildinfo']) {
      assert.equal(isExcluded(path), true, path)
    }
    for (const path of ['src/app.ts', 'test/fixtures/saml/idp.pem', 'public/favicon.ico', 'docs/configuration.md', 'test/helpers/output.ts']) {
      assert.equal(isExcluded(path), false, path)
    }
    for (const root of [cookieProject, noneProject]) {
      for (const path of ['node_modules', 'dist', '.keys', 'logs', 'test/output', 'package-lock.json']) {
        assert.equal(existsSync(join(root, path)), false, `${root}: ${path}`)
      }
    }
  })

  test('every template file arrives, renamed; only package.json differs beyond the rename (cookie)', () => {
    const templateFiles = readTemplateFiles(TEMPLATE_DIR)
    assert.ok(templateFiles.some((file) => file.path.startsWith('src/')) && templateFiles.some((file) => file.path.startsWith('test/')))
    for (const file of templateFiles) {
      const path = renameText(file.path, 'AcmePortal')
      const generated = readFileSync(join(cookieProject, path))
      if (path === 'package.json') continue
      if (path === 'public/favicon.ico') {
        assert.ok(generated.equals(file.data), 'binary files are copied byte for byte')
        continue
      }
      assert.equal(generated.toString('utf8'), renameText(file.data.toString('utf8'), 'AcmePortal'), path)
    }
  })

  test('the project adds README.md, .gitignore and a CI workflow', () => {
    for (const root of [cookieProject, noneProject]) {
      for (const path of ['README.md', '.gitignore', '.github/workflows/ci.yml']) assert.ok(existsSync(join(root, path)), path)
    }
  })

  test('the thin app only: at most 60 files, none of them the core\'s code or tests, the core packed in vendor/', () => {
    // The core's code and its test suites (the core's tests build the template's own starter app,
    // and the shared test helpers are the core's `@project-template/core/testing` export).
    const coreFiles = [...filesBelow(CORE_DIR, 'src'), ...filesBelow(CORE_DIR, 'test').filter((path) => /\.(test|soak)\.ts$/.test(path))]
    assert.ok(coreFiles.length > 100, 'the core has its sources and tests')
    const coreHashes = new Set(coreFiles.map((path) => sha256(readFileSync(join(CORE_DIR, path)))))
    for (const root of [cookieProject, noneProject]) {
      const files = filesBelow(root)
      assert.ok(files.length <= 60, `${files.length} files`)
      assert.deepEqual(files.filter((path) => coreHashes.has(sha256(readFileSync(join(root, path))))), [], 'no file is a copy of the core')
      assert.deepEqual(files.filter((path) => path.startsWith('vendor/')), [CORE_TARBALL])
    }
  })

  test('one number of files: the count printed is the files on disk, and README.md and docs/generator.md state it', () => {
    /** @type {number[]} */
    const counts = []
    for (const [root, stdout] of /** @type {const} */ ([[cookieProject, printed.cookie], [noneProject, printed.none]])) {
      const onDisk = filesBelow(root).length
      assert.match(stdout, new RegExp(`--authProvider \\w+\\) in .*: ${onDisk} files\\.\\n`), `${root}: ${stdout}`)
      counts.push(onDisk)
    }
    assert.equal(counts[0], counts[1], 'both postures write the same number of files')
    const repository = join(PACKAGE_DIR, '..', '..')
    const stated = [
      ['README.md', /the thin app \((\d+) files, no core code or core tests\)/],
      ['docs/generator.md', /none of the core's code or tests \((\d+)\s+files in all\)/]
    ]
    for (const [document, pattern] of /** @type {Array<[string, RegExp]>} */ (stated)) {
      const match = pattern.exec(readFileSync(join(repository, document), 'utf8'))
      assert.ok(match !== null, `${document} states the number of files as ${pattern}`)
      assert.equal(Number(match[1]), counts[0], `${document} states ${match[1]} files; the generator writes ${counts[0]}`)
    }
  })

  test('nothing of the generator itself is copied', () => {
    for (const root of [cookieProject, noneProject]) {
      assert.equal(existsSync(join(root, 'bin')), false)
      assert.equal(existsSync(join(root, 'lib')), false)
      assert.equal(existsSync(join(root, 'test', 'posture.test.ts')), true)
      assert.equal(existsSync(join(root, 'overlays')), false)
    }
  })
})

describe('the rename', () => {
  test('no form of ProjectTemplate remains in either project (the generator name create-project-template is the documented exception)', () => {
    assert.deepEqual(templateNameLeftovers(cookieProject), [])
    assert.deepEqual(templateNameLeftovers(noneProject), [])
  })

  // The core takes the name as an option (applicationName): the app names it once, in
  // src/application-name.ts, and hands it to createApp/runServer, runCheckConfig and the reference
  // renderers; end-to-end.test.mjs proves the running app uses it (keys, cookie, title).
  test('the app names itself once, and its settings, schema and docs carry the name', () => {
    assert.match(read(cookieProject, 'src/application-name.ts'), /\nexport const APPLICATION_NAME = 'AcmePortal'\n/)
    assert.match(read(noneProject, 'src/application-name.ts'), /\nexport const APPLICATION_NAME = 'OpenDemo'\n/)
    for (const path of ['src/app.ts', 'src/check-config.ts', 'src/generate-reference.ts']) {
      assert.match(read(cookieProject, path), /import \{ APPLICATION_NAME \} from '\.\/application-name\.js'/, path)
      assert.match(read(cookieProject, path), /applicationName: APPLICATION_NAME|, APPLICATION_NAME\)/, path)
    }
    assert.ok('AcmePortal' in json(cookieProject, 'appsettings.json'))
    assert.ok('OpenDemo' in json(noneProject, 'appsettings.json'))
    assert.ok('AcmePortal' in json(cookieProject, 'appsettings.schema.json').properties)
    assert.equal(json(cookieProject, 'appsettings.schema.json').title, 'AcmePortal application settings')
    assert.match(read(cookieProject, 'docs/configuration.md'), /AcmePortal__Authentication__Enabled/)
    // The settings files ship referencing the schema (the app's own tests check appsettings.json only: the others are the developer's).
    for (const file of ['appsettings.json', 'appsettings.Development.json']) assert.equal(json(cookieProject, file).$schema, './appsettings.schema.json', file)
  })

  test('stable error codes are not renamed', () => {
    const count = (/** @type {string} */ text) => (text.match(/APP_ERR_[A-Z_]+/g) ?? []).length
    // The catalogue itself lives in @project-template/core; the app's files name codes too.
    for (const path of ['docs/authorization.md', 'docs/configuration.md', 'test/routes/api.test.ts']) {
      const template = readFileSync(join(TEMPLATE_DIR, path), 'utf8')
      assert.ok(count(template) > 0, path)
      assert.equal(count(read(cookieProject, path)), count(template), path)
    }
  })
})

describe('package.json', () => {
  const templateManifest = JSON.parse(readFileSync(join(TEMPLATE_DIR, 'package.json'), 'utf8'))

  test('kebab-case name, the template scripts and dependency versions, the core from vendor/, no workspace links', () => {
    const manifest = json(cookieProject, 'package.json')
    assert.equal(manifest.name, 'acme-portal')
    assert.equal(json(noneProject, 'package.json').name, 'open-demo')
    assert.deepEqual(manifest.scripts, templateManifest.scripts)
    assert.equal(templateManifest.dependencies[CORE_PACKAGE], '^1.0.0')
    assert.deepEqual(manifest.dependencies, { ...templateManifest.dependencies, [CORE_PACKAGE]: `file:${CORE_TARBALL}` })
    assert.deepEqual(manifest.devDependencies, templateManifest.devDependencies)
    assert.deepEqual(manifest.engines, templateManifest.engines)
    assert.equal(manifest.workspaces, undefined)
    const { [CORE_PACKAGE]: core, ...others } = manifest.dependencies
    assert.equal(core, `file:${CORE_TARBALL}`)
    for (const specifier of [...Object.values(others), ...Object.values(manifest.devDependencies)]) {
      assert.doesNotMatch(String(specifier), /^(workspace:|file:|link:|\.)/)
    }
  })

  test('vendor/ holds the core packed from packages/core: its package.json says @project-template/core at the version packing gives it', async () => {
    const listing = await import('node:child_process').then(({ execFileSync }) =>
      execFileSync('tar', ['-xzOf', join(cookieProject, CORE_TARBALL), 'package/package.json'], { encoding: 'utf8' }))
    const packed = JSON.parse(listing)
    assert.equal(packed.name, CORE_PACKAGE)
    assert.equal(packed.version, CORE_VERSION)
    assert.ok(read(cookieProject, 'package.json').includes(`"file:${CORE_TARBALL}"`))
  })

  test('a fresh userSecretsId per project', () => {
    const ids = [json(cookieProject, 'package.json').userSecretsId, json(noneProject, 'package.json').userSecretsId]
    assert.match(ids[0], /^acme-portal-[0-9a-f-]{36}$/)
    assert.match(ids[1], /^open-demo-[0-9a-f-]{36}$/)
    assert.notEqual(ids[0], templateManifest.userSecretsId)
    const again = planProject({ templateDir: TEMPLATE_DIR, name: 'AcmePortal', authProvider: 'cookie', core: findCoreTarball(PACKAGE_DIR, process.env) })
    const manifest = JSON.parse(String(again.find((file) => file.path === 'package.json')?.data))
    assert.notEqual(manifest.userSecretsId, ids[0])
  })
})

describe('posture', () => {
  test('cookie: appsettings.json is the template file, renamed (closed by default)', () => {
    assert.equal(read(cookieProject, 'appsettings.json'), renameText(readFileSync(join(TEMPLATE_DIR, 'appsettings.json'), 'utf8'), 'AcmePortal'))
    const settings = json(cookieProject, 'appsettings.json').AcmePortal
    assert.equal(settings.Authentication.Enabled, true)
    assert.notEqual(settings.Authentication.Cookie?.Enabled, false)
    assert.equal(settings.Authorization.RequireAuthenticatedUserByDefault, true)
  })

  test('none: Authentication:Enabled, Cookie:Enabled and RequireAuthenticatedUserByDefault are false, nothing else changes', () => {
    const settings = json(noneProject, 'appsettings.json').OpenDemo
    assert.equal(settings.Authentication.Enabled, false)
    assert.equal(settings.Authentication.Cookie.Enabled, false)
    assert.equal(settings.Authorization.RequireAuthenticatedUserByDefault, false)
    const closed = renameText(readFileSync(join(TEMPLATE_DIR, 'appsettings.json'), 'utf8'), 'OpenDemo').split('\n')
    const open = read(noneProject, 'appsettings.json').split('\n')
    // Line by line, allowing one inserted line: what changed and what was added.
    const changed = []
    const added = []
    for (let i = 0, j = 0; i < closed.length || j < open.length;) {
      if (closed[i] === open[j]) { i++; j++; continue }
      if (open[j - 1]?.trim() === '"Cookie": {' && added.length === 0) { added.push(open[j++]?.trim()); continue }
      changed.push([closed[i++]?.trim(), open[j++]?.trim()])
    }
    assert.deepEqual(added, ['"Enabled": false,'])
    assert.deepEqual(changed, [
      ['"Enabled": true,', '"Enabled": false,'],
      ['"RequireAuthenticatedUserByDefault": true,', '"RequireAuthenticatedUserByDefault": false,']
    ])
  })

  test('both variants ship the template posture test, which reads the posture from appsettings.json', () => {
    assert.equal(read(cookieProject, 'test/posture.test.ts'), renameText(readFileSync(join(TEMPLATE_DIR, 'test', 'posture.test.ts'), 'utf8'), 'AcmePortal'))
    const none = read(noneProject, 'test/posture.test.ts')
    assert.equal(none, renameText(readFileSync(join(TEMPLATE_DIR, 'test', 'posture.test.ts'), 'utf8'), 'OpenDemo'))
    assert.match(none, /readFileSync\(join\(APP_ROOT, 'appsettings\.json'\)/)
    assert.match(none, /const open = shipped\?\.Authentication\.Enabled === false/)
  })
})

describe('README, .gitignore and CI', () => {
  test('the README gives the command that runs the project and the command that tests it', () => {
    for (const root of [cookieProject, noneProject]) {
      const readme = read(root, 'README.md')
      assert.match(readme, /## Run it\n\n```sh\nnpm install && (npm run build && )?npm start\n```/)
      assert.match(readme, /## Test it\n\n```sh\nnpm test\n```/)
      assert.match(readme, /It needs nothing beyond\n`npm install` \(no browser, no Redis\)/)
    }
  })

  test('the README leads to the core\'s task guides and says where local settings go, which the tests never read (issue 40, items 8 and 13)', () => {
    for (const root of [cookieProject, noneProject]) {
      const readme = read(root, 'README.md')
      assert.match(readme, /^## Next steps: the task guides$/m)
      assert.ok(readme.includes(`[README.md](node_modules/${CORE_PACKAGE}/docs/guides/README.md)`))
      assert.match(readme.replace(/\s+/g, ' '), /Settings of your machine only \(.+\) go into user secrets or `\.env`/)
      assert.match(readme.replace(/\s+/g, ' '), /`npm test` reads none of them/)
    }
  })

  test('the README says where the core comes from, the one command that upgrades it and the one that switches to the registry', () => {
    const readme = read(cookieProject, 'README.md')
    assert.ok(readme.includes(`\`${CORE_TARBALL}\` (version ${CORE_VERSION})`))
    assert.ok(readme.includes(`(\`"${CORE_PACKAGE}": "file:${CORE_TARBALL}"\`)`))
    // The example is the vendored core's own next patch release, and the patch line is its own (a 1.0.x example once read beside a 1.3.2 core).
    const [major, minor, patch] = CORE_VERSION.split(/[.-]/).map(Number)
    const next = `project-template-core-${major}.${minor}.${CORE_VERSION.includes('-') ? patch : Number(patch) + 1}.tgz`
    assert.ok(readme.includes(`Security fixes are patch releases (${major}.${minor}.x)`))
    assert.ok(readme.includes(`and install it:\n\n\`\`\`sh\nnpm install ./vendor/${next}\n\`\`\``), next)
    assert.ok(readme.includes('switch to the registry\nwith one command'))
    assert.ok(readme.includes(`\`\`\`sh\n${REGISTRY_SWITCH_COMMAND}\n\`\`\``))
    assert.equal(REGISTRY_SWITCH_COMMAND, 'npm install @project-template/core@^1')
  })

  test('a core version\'s patch line and next patch release, as the README names them', () => {
    assert.deepEqual(['1.3.2', '1.3.3-dev.1a2b3c4d', '2.0.0', '1.10.9'].map((version) => [patchLineOf(version), nextPatchOf(version)]),
      [['1.3.x', '1.3.3'], ['1.3.x', '1.3.3'], ['2.0.x', '2.0.1'], ['1.10.x', '1.10.10']])
    assert.throws(() => nextPatchOf('latest'), /not a core version: latest/)
  })

  test('none: the README says plainly that this is not a production identity configuration and how to return to the closed posture', () => {
    const readme = read(noneProject, 'README.md')
    assert.match(readme, /^## Authentication is off: not a production identity configuration$/m)
    assert.match(readme, /This is not a production identity\nconfiguration/)
    assert.match(readme, /To return to the closed-by-default posture:/)
    for (const key of ['`Authentication:Enabled` to true', '`Authorization:RequireAuthenticatedUserByDefault` to true', '`Authentication:Cookie:Enabled` to true']) {
      assert.ok(readme.replace(/\s+/g, ' ').includes(key), key)
    }
    assert.doesNotMatch(read(cookieProject, 'README.md'), /not a production identity/)
    assert.match(read(cookieProject, 'README.md'), /Closed by default/)
  })

  test('the CI workflow runs on Node 22 and 24 (Debian images), installs nothing beyond npm ci and runs the README test command', () => {
    const workflow = read(cookieProject, '.github/workflows/ci.yml')
    assert.match(workflow, /container: node:\$\{\{ matrix\.node \}\}-bookworm\n {4}strategy:\n {6}matrix:\n {8}node: \[22, 24\]\n/)
    assert.doesNotMatch(workflow, /apt-get|chromium|redis/)
    assert.match(workflow, /\n {8}run: npm test\n/)
  })

  test('.gitignore keeps keys, secrets, build output and logs out of source control', () => {
    const ignored = read(cookieProject, '.gitignore').split('\n')
    for (const entry of ['node_modules/', 'dist/', '.keys/', 'logs/', '*.log', '.env', 'secrets.json', 'test/output/']) {
      assert.ok(ignored.includes(entry), entry)
    }
  })
})

describe('writing is undone on failure', () => {
  const file = (/** @type {string} */ path, text = path) => ({ path, data: Buffer.from(text), mode: 0o644 })

  test('into a new directory: the directory and everything below it are removed', () => {
    const root = join(sandbox, 'undo-new')
    mkdirSync(root)
    const before = snapshot(root)
    assert.throws(
      () => writeProject(join(root, 'deep', 'project'), [file('a.txt'), file('sub/b.txt'), file('a.txt/c.txt')]),
      /^Error: Writing .*a\.txt\/c\.txt failed \(.*\); everything written was removed\.$/
    )
    assert.deepEqual(snapshot(root), before)
  })

  test('into an existing directory (--force): overwritten files get their content back, others stay', () => {
    const root = join(sandbox, 'undo-existing')
    mkdirSync(join(root, 'keep'), { recursive: true })
    writeFileSync(join(root, 'a.txt'), 'original')
    writeFileSync(join(root, 'keep', 'mine.txt'), 'mine')
    const before = snapshot(root)
    assert.throws(() => writeProject(root, [file('a.txt', 'new'), file('keep/new.txt'), file('z/y.txt'), file('a.txt/x')]), /everything written was removed/)
    assert.deepEqual(snapshot(root), before)
  })
})
