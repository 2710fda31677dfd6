// @ts-check
/**
 * The core's release record, `releases.json`: for each released version the date and the content
 * digest of the packed package. A version names one content: `npm run release -- <patch|minor|major>`
 * (scripts/release.mjs) is the only writer, and packing (the generator's lib/core-package.mjs)
 * compares what it packed with the record:
 *
 * - the content digest equals the record of the package.json version: the tarball is that
 *   release and keeps its version;
 * - otherwise (sources changed since the release, or the version has no record): the tarball is a
 *   development build and is renamed `<next patch>-dev.<first 8 hex of the digest>`, a prerelease
 *   that sorts above the last release and below any next release, so two different contents never
 *   share a version. Publishing the generator refuses such a core (pack-template.mjs copy).
 *
 * The digest is of the packed files, not of the tarball's bytes (gzip and tar headers vary with
 * npm's version): `sha256-<hex>` over the sorted lines `<path> <sha256 of the file>`, with
 * package.json's `version` field left out, so that the bump a release makes does not change it.
 * Node.js only, no dependencies: it is read by the core's release script and by the generator.
 */
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'

/** The record's file name, beside the core's package.json. */
export const RELEASES_FILE = 'releases.json'

/**
 * @typedef {object} ReleaseRecord
 * @property {string} date `YYYY-MM-DD`, as in the CHANGELOG heading
 * @property {string} digest `sha256-<hex>`, {@link contentDigest} of the released tarball
 * @property {number} [publicNames] how many names the API reports (etc/core.api.md and
 *   etc/core-testing.api.md) export at the release: the count goes up only with a CHANGELOG line
 *   `Public API: <n> names (+<k> since <previous>)` that says why (test/api-report.test.ts)
 */

/** The API reports whose exported names are the public API, beside the core's package.json. */
export const API_REPORTS = ['etc/core.api.md', 'etc/core-testing.api.md']

/**
 * The names an API report declares as exported.
 * @param {string} report the report's text
 * @returns {string[]}
 */
export function exportedNames (report) {
  const names = [...report.matchAll(/^export (?:declare )?(?:abstract )?(?:function|const|let|class|interface|type|enum|namespace) ([A-Za-z_$][\w$]*)/gm)].map((match) => match[1] ?? '')
  return [...new Set(names)].sort()
}

/**
 * How many public names the core's API reports export (each report's names counted once).
 * @param {string} coreDir
 * @returns {number}
 */
export function publicNameCount (coreDir) {
  return API_REPORTS.reduce((count, report) => count + exportedNames(readFileSync(join(coreDir, report), 'utf8')).length, 0)
}

/**
 * The regular files of a gzipped tar (npm pack's format: ustar, with pax headers for long
 * paths), in archive order.
 * @param {Buffer} tarball
 * @returns {Array<{ path: string, data: Buffer }>}
 */
export function tarEntries (tarball) {
  const archive = gunzipSync(tarball)
  /** @type {Array<{ path: string, data: Buffer }>} */
  const entries = []
  /** @type {string | undefined} */
  let paxPath
  const text = (/** @type {number} */ start, /** @type {number} */ length) => archive.subarray(start, start + length).toString('utf8').replace(/\0.*$/s, '')
  for (let offset = 0; offset + 512 <= archive.length;) {
    if (archive.subarray(offset, offset + 512).every((byte) => byte === 0)) break
    const size = Number.parseInt(text(offset + 124, 12).trim() || '0', 8)
    const type = text(offset + 156, 1) || '0'
    const prefix = text(offset + 345, 155)
    const name = prefix === '' ? text(offset, 100) : `${prefix}/${text(offset, 100)}`
    const data = archive.subarray(offset + 512, offset + 512 + size)
    if (type === 'x') {
      paxPath = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(data.toString('utf8'))?.[1]
    } else {
      if (type === '0') entries.push({ path: paxPath ?? name, data: Buffer.from(data) })
      paxPath = undefined
    }
    offset += 512 + Math.ceil(size / 512) * 512
  }
  return entries
}

/**
 * The content digest of a packed core (see the module comment).
 * @param {Buffer} tarball
 * @returns {string}
 */
export function contentDigest (tarball) {
  const sha256 = (/** @type {Buffer | string} */ data) => createHash('sha256').update(data).digest('hex')
  const lines = tarEntries(tarball).map(({ path, data }) => {
    if (path !== 'package/package.json') return `${path} ${sha256(data)}`
    const { version: _version, ...manifest } = JSON.parse(data.toString('utf8'))
    return `${path} ${sha256(JSON.stringify(manifest))}`
  })
  return `sha256-${sha256(lines.sort().join('\n'))}`
}

/**
 * The record, `{}` when the file does not exist yet.
 * @param {string} coreDir
 * @returns {Record<string, ReleaseRecord>}
 */
export function readReleases (coreDir) {
  const path = join(coreDir, RELEASES_FILE)
  return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : {}
}

/** @param {string} version @returns {[number, number, number]} */
function parseRelease (version) {
  const match = /^(\d+)\.(\d+)\.(\d+)$/.exec(version)
  if (match === null) throw new Error(`${version} is not a release version (major.minor.patch).`)
  return [Number(match[1]), Number(match[2]), Number(match[3])]
}

/**
 * The version after `version` for a release of the given kind.
 * @param {string} version
 * @param {'patch' | 'minor' | 'major'} kind
 */
export function bumpVersion (version, kind) {
  const [major, minor, patch] = parseRelease(version)
  if (kind === 'major') return `${major + 1}.0.0`
  if (kind === 'minor') return `${major}.${minor + 1}.0`
  return `${major}.${minor}.${patch + 1}`
}

/**
 * The version a packed core gets: its package.json version when its content is that version's
 * release, else the development prerelease `<next patch>-dev.<digest8>`.
 * @param {{ version: string, digest: string, releases: Readonly<Record<string, ReleaseRecord>> }} packed
 * @returns {{ version: string, released: boolean, reason: string }}
 */
export function packedVersion ({ version, digest, releases }) {
  const record = releases[version]
  if (record !== undefined && record.digest === digest) return { version, released: true, reason: `the content of release ${version} (${record.date})` }
  const reason = record === undefined
    ? `${version} has no record in ${RELEASES_FILE}`
    : `the content differs from release ${version} (${record.date}): changes since the release`
  return { version: `${bumpVersion(version, 'patch')}-dev.${digest.replace(/^sha256-/, '').slice(0, 8)}`, released: false, reason }
}

/**
 * The latest recorded release before `version` (compared by major.minor.patch; a prerelease
 * `1.0.1-dev.x` comes after 1.0.0 and before 1.0.1), or undefined.
 * @param {Readonly<Record<string, ReleaseRecord>>} releases
 * @param {string} version
 * @returns {string | undefined}
 */
export function previousRelease (releases, version) {
  const current = parseRelease(version.split('-')[0] ?? '')
  const compare = (/** @type {number[]} */ a, /** @type {number[]} */ b) => (a[0] ?? 0) - (b[0] ?? 0) || (a[1] ?? 0) - (b[1] ?? 0) || (a[2] ?? 0) - (b[2] ?? 0)
  return Object.keys(releases)
    .filter((candidate) => compare(parseRelease(candidate), current) < 0)
    .sort((a, b) => compare(parseRelease(a), parseRelease(b)))
    .at(-1)
}
