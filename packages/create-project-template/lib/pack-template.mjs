// @ts-check
/**
 * `npm pack`/`npm publish` lifecycle: a published package carries the template in
 * `<package>/template` and the packed core in `<package>/vendor/project-template-core-<version>.tgz`
 * (both listed in `files`), since the monorepo's `template/` and `packages/core` are not there.
 * `node lib/pack-template.mjs copy` (prepack) copies exactly the files the generator would read
 * and packs the core (`npm pack` of packages/core, built first when its dist/ is stale);
 * `node lib/pack-template.mjs remove` (postpack) deletes both, so that a checkout keeps using the
 * live `template/` and packs the core on demand.
 *
 * The published generator carries a released core only: `copy` refuses (exit status 1, nothing
 * left behind) when the core's content is not the release of its version (core-package.mjs),
 * unless CREATE_PROJECT_TEMPLATE_DEV_CORE=1 asks for a development package (the generator's own
 * pack test), which then carries the `-dev.` prerelease.
 */
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { packCore, VENDOR_DIRECTORY } from './core-package.mjs'
import { readTemplateFiles } from './template-files.mjs'

const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const COPY = join(PACKAGE_DIR, 'template')
const SOURCE = resolve(PACKAGE_DIR, '..', '..', 'template')
const VENDOR = join(PACKAGE_DIR, VENDOR_DIRECTORY)
const CORE = resolve(PACKAGE_DIR, '..', 'core')

const command = process.argv[2]
if (command === 'copy') {
  if (!existsSync(join(SOURCE, 'package.json'))) throw new Error(`No template at ${SOURCE}.`)
  rmSync(COPY, { recursive: true, force: true })
  for (const file of readTemplateFiles(SOURCE)) {
    const path = join(COPY, ...file.path.split('/'))
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, file.data)
    chmodSync(path, file.mode)
  }
  rmSync(VENDOR, { recursive: true, force: true })
  const core = packCore(CORE, process.env)
  if (core.released !== true && process.env.CREATE_PROJECT_TEMPLATE_DEV_CORE !== '1') {
    rmSync(COPY, { recursive: true, force: true })
    process.stderr.write(`Refusing to pack the generator with the core ${core.version}: ${core.reason}. Cut a release first (npm run release --workspace packages/core -- <patch|minor|major>), or set CREATE_PROJECT_TEMPLATE_DEV_CORE=1 for a development package that is never published.\n`)
    process.exit(1)
  }
  mkdirSync(VENDOR)
  writeFileSync(join(VENDOR, core.fileName), core.data)
} else if (command === 'remove') {
  rmSync(COPY, { recursive: true, force: true })
  rmSync(VENDOR, { recursive: true, force: true })
} else {
  process.stderr.write('usage: node lib/pack-template.mjs copy|remove\n')
  process.exitCode = 2
}
