// @ts-check
/**
 * The license (issue 26, item 14): MIT, as the ecosystem the project builds on. The repository and
 * each published package (@project-template/core, @project-template/create) carry the same MIT
 * LICENSE file, and their package.json names it with the repository; the packed core holds its
 * LICENSE. A generated app is the team's own: `private: true`, no license imposed, and its README
 * says which license its core dependency carries.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { CORE_LICENSE } from '../lib/project-files.mjs'
import { PACKAGE_DIR, checkoutCore, generate, tempDir } from './helpers.mjs'

const ROOT = join(PACKAGE_DIR, '..', '..')
const CORE_DIR = join(ROOT, 'packages', 'core')
const read = (/** @type {string} */ path) => readFileSync(path, 'utf8')
const manifest = (/** @type {string} */ directory) => JSON.parse(read(join(directory, 'package.json')))

describe('the repository and its published packages are MIT', () => {
  const license = read(join(ROOT, 'LICENSE'))

  test('the root LICENSE is the MIT license text', () => {
    assert.match(license, /^MIT License\n\nCopyright \(c\) \d{4} .+\n\nPermission is hereby granted, free of charge, to any person obtaining a copy\n/)
    assert.match(license, /THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND/)
  })

  for (const [name, directory] of [['@project-template/core', CORE_DIR], ['@project-template/create', PACKAGE_DIR]]) {
    test(`${name}: the same LICENSE file, and package.json says MIT with its repository directory`, () => {
      assert.equal(read(join(directory, 'LICENSE')), license)
      const packageJson = manifest(directory)
      assert.equal(packageJson.name, name)
      assert.equal(packageJson.license, 'MIT')
      assert.equal(packageJson.repository?.type, 'git')
      assert.match(packageJson.repository?.url ?? '', /^git\+https:\/\/.+\.git$/)
      assert.equal(packageJson.repository?.directory, directory === CORE_DIR ? 'packages/core' : 'packages/create-project-template')
      assert.notEqual(packageJson.private, true, 'a published package')
    })
  }

  test('the README of a generated app states the license the core carries', () => {
    assert.equal(CORE_LICENSE, manifest(CORE_DIR).license)
  })
})

describe('a generated app', () => {
  const sandbox = tempDir('cpt-license-')
  const project = join(sandbox, 'acme-portal')
  before(async () => {
    const result = await generate(['acme-portal', '--skip-install'], { cwd: sandbox })
    assert.equal(result.status, 0, result.stderr)
  })
  after(() => rmSync(sandbox, { recursive: true, force: true }))

  test('is private and carries no license of ours', () => {
    const packageJson = manifest(project)
    assert.equal(packageJson.private, true)
    assert.equal(packageJson.license, undefined)
    assert.throws(() => read(join(project, 'LICENSE')), { code: 'ENOENT' })
  })

  test('its README says the core is MIT, where its LICENSE is, and where the bundle\'s notices are', () => {
    const readme = read(join(project, 'README.md'))
    assert.match(readme, /## License\n\nThis project is yours: the generator sets no license for it/)
    assert.match(readme, /Its\nsecurity core, `@project-template\/core`, is under the MIT license\n\(`node_modules\/@project-template\/core\/LICENSE` after `npm install`\)/)
    assert.match(readme, /`dist\/THIRD-PARTY-NOTICES\.txt`/)
  })

  test('the packed core in vendor/ holds its LICENSE and says MIT', () => {
    const tarball = join(project, 'vendor', checkoutCore().fileName)
    assert.equal(execFileSync('tar', ['-xzOf', tarball, 'package/LICENSE'], { encoding: 'utf8' }), read(join(ROOT, 'LICENSE')))
    assert.equal(JSON.parse(execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' })).license, 'MIT')
  })
})
