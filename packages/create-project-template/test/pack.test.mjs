// @ts-check
/**
 * The published package (`npm create project-template`): `npm pack` carries a copy of the template
 * without installed packages, build output or keys and the packed core (vendor/), leaves no copy
 * behind in the checkout, and
 * the packed generator, outside the monorepo, generates the same project as the checkout's.
 */
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { PACKAGE_DIR, checkoutCore, childEnv, generate, run, snapshot, tempDir, templateNameLeftovers } from './helpers.mjs'

const sandbox = tempDir('cpt-pack-')
after(() => rmSync(sandbox, { recursive: true, force: true }))

test('the packed generator carries the template and generates the same project as the checkout', { timeout: 120_000 }, async () => {
  // A development package: the checkout's core is a release only right after npm run release.
  const packed = await run('npm', ['pack', '--pack-destination', sandbox, '--json'], { cwd: PACKAGE_DIR, env: childEnv({ CREATE_PROJECT_TEMPLATE_DEV_CORE: '1' }), timeoutMs: 100_000 })
  assert.equal(packed.status, 0, packed.stderr)
  assert.equal(existsSync(join(PACKAGE_DIR, 'template')), false, 'postpack removed the copy')
  const [{ filename, files }] = JSON.parse(packed.stdout)
  const paths = files.map((/** @type {{ path: string }} */ file) => file.path)
  assert.ok(paths.includes('template/src/app.ts'))
  assert.ok(paths.includes('template/appsettings.json'))
  assert.deepEqual(paths.filter((/** @type {string} */ path) => path.startsWith('vendor/')), [`vendor/${checkoutCore().fileName}`], 'the packed core travels with the generator')
  assert.equal(existsSync(join(PACKAGE_DIR, 'vendor')), false, 'postpack removed the packed core')
  assert.deepEqual(paths.filter((/** @type {string} */ path) => /(^|\/)(node_modules|dist|\.keys|logs)\//.test(path)), [])
  assert.deepEqual(paths.filter((/** @type {string} */ path) => path.startsWith('test/')), [], 'the generator tests are not published')

  const extracted = join(sandbox, 'extracted')
  const untar = await run('sh', ['-c', `mkdir -p "${extracted}" && tar -xzf "${join(sandbox, filename)}" -C "${extracted}"`], { cwd: sandbox })
  assert.equal(untar.status, 0, untar.stderr)
  const bin = join(extracted, 'package', 'bin', 'create-project-template.mjs')
  const fromPackage = await run(process.execPath, [bin, 'from-package', '--name', 'Shop', '--authProvider', 'none', '--skip-install'], { cwd: sandbox })
  assert.equal(fromPackage.status, 0, fromPackage.stderr)
  const fromCheckout = await generate(['from-checkout', '--name', 'Shop', '--authProvider', 'none', '--skip-install'], { cwd: sandbox })
  assert.equal(fromCheckout.status, 0, fromCheckout.stderr)

  const a = snapshot(join(sandbox, 'from-package'))
  const b = snapshot(join(sandbox, 'from-checkout'))
  assert.ok(a !== null && b !== null)
  // package.json differs only by its fresh userSecretsId.
  delete a['package.json']
  delete b['package.json']
  assert.deepEqual(a, b)
  const manifest = (/** @type {string} */ dir) => ({ ...JSON.parse(readFileSync(join(sandbox, dir, 'package.json'), 'utf8')), userSecretsId: '' })
  assert.deepEqual(manifest('from-package'), manifest('from-checkout'))
  assert.deepEqual(templateNameLeftovers(join(sandbox, 'from-package')), [])
  assert.ok(readdirSync(join(sandbox, 'from-package', 'src')).includes('app.ts'))
})
