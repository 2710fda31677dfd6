// @ts-check
/**
 * Run once before the unit test files (package.json `test:unit`), which run two at a time: most of
 * them generate a project, and generating from a checkout packs its core, building it first when
 * its dist/ is older than its sources (lib/core-package.mjs). Two files doing that build at once
 * would delete each other's dist/; building here first leaves every file a fresh core to pack.
 * pack.test.mjs runs after the others, alone: `npm pack` of this package copies the template and
 * the packed core into the package directory for its duration (lib/pack-template.mjs), which a
 * generation running meanwhile would take for a published package's.
 */
import { spawnSync } from 'node:child_process'
import { coreIsBuilt } from '../lib/core-package.mjs'
import { CORE_DIR } from './helpers.mjs'

if (!coreIsBuilt(CORE_DIR)) {
  process.stderr.write(`building ${CORE_DIR} (its dist/ is older than its sources)\n`)
  const built = spawnSync('npm', ['run', 'build'], { cwd: CORE_DIR, stdio: 'inherit' })
  process.exitCode = built.status ?? 1
}
