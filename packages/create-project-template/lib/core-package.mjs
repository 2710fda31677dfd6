// @ts-check
/**
 * The packed security core (`@project-template/core`) that a generated app installs from its
 * `vendor/` directory until the package is on a registry. A published generator carries the
 * tarball in `<package>/vendor/` (put there by `prepack`, see pack-template.mjs); in a checkout it
 * is produced on demand with `npm pack` of `packages/core`.
 *
 * A version names one content (packages/core/scripts/release-record.mjs, releases.json): a packed
 * core whose content digest is the record of its package.json version keeps that version; any
 * other content is renamed to the development prerelease `<next patch>-dev.<digest8>` (so an app
 * generated from a checkout with unreleased changes never vendors them under a released
 * version), and publishing the generator refuses it (pack-template.mjs).
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
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

/**
 * The parts of a core version (`1.3.2`, or a prerelease such as `1.3.3-dev.1`).
 * @param {string} version
 * @returns {{ major: number, minor: number, patch: number, prerelease: boolean }}
 */
function versionParts (version) {
  const match = /^(\d+)\.(\d+)\.(\d+)(-.+)?$/.exec(version)
  if (match === null) throw new Error(`not a core version: ${version}`)
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]), prerelease: match[4] !== undefined }
}

/**
 * The patch line of a version, what its security fixes are released as: `1.3.x` for `1.3.2`.
 * @param {string} version
 */
export const patchLineOf = (version) => {
  const { major, minor } = versionParts(version)
  return `${major}.${minor}.x`
}

/**
 * The next patch release after a version: `1.3.3` for `1.3.2` (and for the prerelease `1.3.3-dev.1`).
 * @param {string} version
 */
export const nextPatchOf = (version) => {
  const { major, minor, patch, prerelease } = versionParts(version)
  return `${major}.${minor}.${prerelease ? patch : patch + 1}`
}

/** The command (README) that moves a generated app from the vendored core to the registry's. */
export const REGISTRY_SWITCH_COMMAND = `npm install ${CORE_PACKAGE}@^1`

/**
 * @typedef {object} CoreTarball
 * @property {string} version
 * @property {string} fileName `project-template-core-<version>.tgz`
 * @property {Buffer} data
 * @property {boolean} [released] false for a development build (`-dev.` prerelease) of a checkout's core
 * @property {string} [reason] why it is or is not a release
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
 * The packed core of a checkout: `npm pack` of `coreDir`, kept as it is when its content is the
 * release of its version, else repacked as the development prerelease (module comment).
 * @param {string} coreDir
 * @param {NodeJS.ProcessEnv} env
 * @returns {CoreTarball}
 */
export function packCore (coreDir, env) {
  const packed = npmPack(coreDir, env, !coreIsBuilt(coreDir))
  // The core's own rule, from the checkout (a published generator carries a packed core and never packs).
  /** @type {typeof import('../../core/scripts/release-record.mjs')} */
  const record = createRequire(import.meta.url)(join(coreDir, 'scripts', 'release-record.mjs'))
  const decided = record.packedVersion({ version: packed.version, digest: record.contentDigest(packed.data), releases: record.readReleases(coreDir) })
  if (decided.released) return { ...packed, released: true, reason: decided.reason }
  const copy = mkdtempSync(join(tmpdir(), 'cpt-core-dev-'))
  try {
    for (const entry of record.tarEntries(packed.data)) {
      const path = join(copy, ...entry.path.split('/'))
      mkdirSync(dirname(path), { recursive: true })
      writeFileSync(path, entry.path === 'package/package.json' ? JSON.stringify({ ...JSON.parse(entry.data.toString('utf8')), version: decided.version }, null, 2) + '\n' : entry.data)
    }
    return { ...npmPack(join(copy, 'package'), env, false), released: false, reason: decided.reason }
  } finally {
    rmSync(copy, { recursive: true, force: true })
  }
}

/**
 * `npm pack` of a package directory into a temporary directory, read into memory. The core's
 * `prepack` (its build) runs only when `build` is set (dist/ missing or older than a source
 * file), so that a checkout packs what its sources say without rebuilding on every generation.
 * The core has no install-time script (`prepare`), so the tarball installs without running
 * anything.
 * @param {string} directory
 * @param {NodeJS.ProcessEnv} env
 * @param {boolean} build
 * @returns {CoreTarball}
 */
function npmPack (directory, env, build) {
  const destination = mkdtempSync(join(tmpdir(), 'cpt-core-'))
  try {
    const { command, prefix, shell } = npmCommand(env)
    const args = [...prefix, 'pack', '--json', '--pack-destination', destination]
    if (!build) args.push('--ignore-scripts')
    const result = spawnSync(command, args, { cwd: directory, env: npmEnvironment(env), encoding: 'utf8', shell, maxBuffer: 64 * 1024 * 1024 })
    if (result.status !== 0) throw new Error(`npm pack of ${directory} failed (exit status ${result.status}): ${result.stderr.trim().split('\n').slice(-5).join(' ')}`)
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
export function coreIsBuilt (coreDir) {
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
