// @ts-check
/**
 * The packed security core (`@project-template/core`) that a generated app installs from its
 * `vendor/` directory until the package is on a registry. A published generator carries the
 * tarball in `<package>/vendor/` (put there by `prepack`, see pack-template.mjs); in a checkout it
 * is produced on demand with `npm pack` of `packages/core`.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { npmCommand, npmEnvironment } from './install.mjs'

/** The core's package name, as the template's package.json depends on it. */
export const CORE_PACKAGE = '@project-template/core'

/** The directory of a generated app that holds the packed core. */
export const VENDOR_DIRECTORY = 'vendor'

/**
 * npm's file name for a packed version of the core: `project-template-core-1.0.0.tgz`.
 * @param {string} version
 */
export const coreTarballName = (version) => `${CORE_PACKAGE.slice(1).replace('/', '-')}-${version}.tgz`

/** The command (README) that moves a generated app from the vendored core to the registry's. */
export const REGISTRY_SWITCH_COMMAND = `npm install ${CORE_PACKAGE}@^1`

/**
 * @typedef {object} CoreTarball
 * @property {string} version
 * @property {string} fileName `project-template-core-<version>.tgz`
 * @property {Buffer} data
 */

/**
 * The packed core: the published generator's `vendor/*.tgz`, else `npm pack` of the checkout's
 * `packages/core` (building it first when its `dist/` is missing or older than `src/`).
 * @param {string} packageDir the generator package's directory
 * @param {NodeJS.ProcessEnv} env
 * @returns {CoreTarball}
 */
export function findCoreTarball (packageDir, env) {
  const vendored = join(packageDir, VENDOR_DIRECTORY)
  if (existsSync(vendored)) {
    const tarballs = readdirSync(vendored).filter((file) => /^project-template-core-\d+\.\d+\.\d+.*\.tgz$/.test(file))
    if (tarballs.length !== 1) throw new Error(`${vendored} must hold exactly one packed ${CORE_PACKAGE}, found ${tarballs.length}.`)
    const fileName = /** @type {string} */ (tarballs[0])
    const version = fileName.slice('project-template-core-'.length, -'.tgz'.length)
    return { version, fileName, data: readFileSync(join(vendored, fileName)) }
  }
  const coreDir = join(packageDir, '..', 'core')
  if (!existsSync(join(coreDir, 'package.json'))) throw new Error(`Neither ${vendored} nor the checkout's packages/core was found.`)
  return packCore(coreDir, env)
}

/**
 * `npm pack` of a core directory into a temporary directory, read into memory. The core's
 * `prepack` (its build) runs only when `dist/` is missing or older than a source file, so that a
 * checkout packs what its sources say without rebuilding on every generation. The core has no
 * install-time script (`prepare`), so the tarball installs without running anything.
 * @param {string} coreDir
 * @param {NodeJS.ProcessEnv} env
 * @returns {CoreTarball}
 */
export function packCore (coreDir, env) {
  const destination = mkdtempSync(join(tmpdir(), 'cpt-core-'))
  try {
    const { command, prefix, shell } = npmCommand(env)
    const args = [...prefix, 'pack', '--json', '--pack-destination', destination]
    if (isBuilt(coreDir)) args.push('--ignore-scripts')
    const result = spawnSync(command, args, { cwd: coreDir, env: npmEnvironment(env), encoding: 'utf8', shell, maxBuffer: 64 * 1024 * 1024 })
    if (result.status !== 0) throw new Error(`npm pack of ${coreDir} failed (exit status ${result.status}): ${result.stderr.trim().split('\n').slice(-5).join(' ')}`)
    const [{ filename, version }] = JSON.parse(result.stdout.slice(result.stdout.indexOf('[')))
    return { version, fileName: filename, data: readFileSync(join(destination, filename)) }
  } finally {
    rmSync(destination, { recursive: true, force: true })
  }
}

/**
 * True when `dist/index.js` exists and is newer than every file below `src/`.
 * @param {string} coreDir
 */
function isBuilt (coreDir) {
  const entry = join(coreDir, 'dist', 'index.js')
  if (!existsSync(entry)) return false
  const built = statSync(entry).mtimeMs
  /** @param {string} directory @returns {boolean} */
  const fresh = (directory) => readdirSync(directory, { withFileTypes: true }).every((item) => {
    const path = join(directory, item.name)
    return item.isDirectory() ? fresh(path) : statSync(path).mtimeMs <= built
  })
  return !existsSync(join(coreDir, 'src')) || fresh(join(coreDir, 'src'))
}
