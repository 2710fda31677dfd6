// @ts-check
/**
 * `npm run release --workspace packages/core -- <patch|minor|major>`: cuts a release of the core
 * (README.md, "Versioning policy"; docs/generator.md, "The core in vendor/").
 *
 * 1. Refuses unless `## [Unreleased]` in CHANGELOG.md has entries and opens with the upgrade
 *    notes (a paragraph before its first `###` heading), and the new version has no record yet.
 * 2. Bumps package.json (and the workspace's entry in the root package-lock.json).
 * 3. Moves the `[Unreleased]` entries under `## [x.y.z] - YYYY-MM-DD`, leaving `[Unreleased]`
 *    empty.
 * 4. Packs the core (`npm pack`, which builds it) and records the version's date, content
 *    digest and count of public names in releases.json (scripts/release-record.mjs).
 *
 * On any failure every file it changed is restored. It does not commit: review the diff and
 * commit the four files together.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { RELEASES_FILE, bumpVersion, contentDigest, publicNameCount, readReleases } from './release-record.mjs'

const CORE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const LOCK_FILE = join(CORE_DIR, '..', '..', 'package-lock.json')
const UNRELEASED = '## [Unreleased]\n'

/**
 * The CHANGELOG with the `[Unreleased]` entries moved under a new release heading.
 * @param {string} changelog
 * @param {string} version
 * @param {string} date
 * @returns {string}
 */
export function moveUnreleased (changelog, version, date) {
  const start = changelog.indexOf(UNRELEASED)
  if (start < 0) throw new Error(`CHANGELOG.md has no "${UNRELEASED.trim()}" heading.`)
  const bodyStart = start + UNRELEASED.length
  const next = changelog.slice(bodyStart).search(/^## \[/m)
  const bodyEnd = next < 0 ? changelog.length : bodyStart + next
  const body = changelog.slice(bodyStart, bodyEnd).trim()
  if (body === '') throw new Error('The [Unreleased] section of CHANGELOG.md is empty: there is nothing to release.')
  if (/^###/.test(body)) throw new Error('The [Unreleased] section of CHANGELOG.md must open with the upgrade notes (a paragraph before its first ### heading): what an app notices and does when it takes this release.')
  return `${changelog.slice(0, bodyStart)}\n## [${version}] - ${date}\n\n${body}\n\n${changelog.slice(bodyEnd)}`
}

/**
 * @param {string[]} argv
 * @param {{ coreDir?: string, lockFile?: string, now?: Date, pack?: (coreDir: string) => Buffer }} [options] tests release a copy, without the lock file, with their own packing
 * @returns {{ version: string, digest: string }}
 */
export function release (argv, options = {}) {
  const kind = argv[0]
  if (kind !== 'patch' && kind !== 'minor' && kind !== 'major') throw new Error('usage: npm run release --workspace packages/core -- <patch|minor|major>')
  const date = (options.now ?? new Date()).toISOString().slice(0, 10)
  const coreDir = options.coreDir ?? CORE_DIR
  const lockFile = options.lockFile ?? (coreDir === CORE_DIR ? LOCK_FILE : undefined)
  /** @type {Record<string, string>} */
  const paths = { manifest: join(coreDir, 'package.json'), changelog: join(coreDir, 'CHANGELOG.md'), releases: join(coreDir, RELEASES_FILE) }
  if (lockFile !== undefined) paths.lock = lockFile
  /** @type {Record<string, string | undefined>} */
  const original = {}
  for (const [key, path] of Object.entries(paths)) {
    try { original[key] = readFileSync(path, 'utf8') } catch { original[key] = undefined }
  }
  const manifest = JSON.parse(original.manifest ?? '{}')
  const version = bumpVersion(manifest.version, kind)
  const releases = readReleases(coreDir)
  if (releases[version] !== undefined) throw new Error(`${version} is already recorded in ${RELEASES_FILE} (${releases[version].date}).`)
  const changelog = moveUnreleased(original.changelog ?? '', version, date)
  try {
    writeFileSync(paths.manifest, JSON.stringify({ ...manifest, version }, null, 2) + '\n')
    writeFileSync(paths.changelog, changelog)
    if (paths.lock !== undefined && original.lock !== undefined) {
      const lock = JSON.parse(original.lock)
      const entry = lock.packages?.['packages/core']
      if (entry !== undefined) {
        entry.version = version
        writeFileSync(paths.lock, JSON.stringify(lock, null, 2) + '\n')
      }
    }
    const digest = contentDigest((options.pack ?? pack)(coreDir))
    const publicNames = publicNameCount(coreDir)
    writeFileSync(paths.releases, JSON.stringify({ ...releases, [version]: { date, digest, publicNames } }, null, 2) + '\n')
    return { version, digest }
  } catch (error) {
    for (const [key, path] of Object.entries(paths)) {
      const text = original[key]
      if (text === undefined) rmSync(path, { force: true })
      else writeFileSync(path, text)
    }
    throw error
  }
}

/**
 * `npm pack` of the core (its prepack builds it) into a temporary directory.
 * @param {string} coreDir
 * @returns {Buffer}
 */
function pack (coreDir) {
  const destination = mkdtempSync(join(tmpdir(), 'core-release-'))
  try {
    const result = spawnSync('npm', ['pack', '--json', '--pack-destination', destination], { cwd: coreDir, encoding: 'utf8', shell: process.platform === 'win32', maxBuffer: 64 * 1024 * 1024 })
    if (result.status !== 0) throw new Error(`npm pack failed (exit status ${result.status}): ${result.stderr.trim().split('\n').slice(-5).join(' ')}`)
    const [{ filename }] = JSON.parse(result.stdout.slice(result.stdout.indexOf('[')))
    return readFileSync(join(destination, filename))
  } finally {
    rmSync(destination, { recursive: true, force: true })
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const { version, digest } = release(process.argv.slice(2))
    process.stdout.write(`Released @project-template/core ${version} (${digest}).\n` +
      `Review and commit together: packages/core/package.json, CHANGELOG.md, ${RELEASES_FILE}, package-lock.json.\n` +
      'The generator now vendors this version; a major also needs the template\'s dependency range (template/package.json) raised.\n')
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  }
}
