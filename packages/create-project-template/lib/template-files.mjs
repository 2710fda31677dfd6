// @ts-check
/**
 * What is copied from the template: an explicit list of top-level entries (anything else, such as
 * node_modules, dist, .keys or logs, stays behind), minus build output, keys, logs and secrets at
 * any depth. Reading only; see write-project.mjs for writing.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, sep } from 'node:path'

/** Top-level directories copied whole (minus {@link isExcluded} entries). */
export const COPIED_DIRECTORIES = ['src', 'test', 'docs', 'public']
/** Top-level files copied; package.json is rewritten (see project-files.mjs). */
export const COPIED_FILE_PATTERN = /^(appsettings(\.[A-Za-z0-9]+)?\.json|appsettings\.schema\.json|tsconfig(\.[a-z]+)?\.json|eslint\.config\.js|package\.json)$/
/**
 * Top-level entries of the template that the generator writes itself instead: the generated
 * README.md states the project's posture and the commands that run and test it.
 */
export const REPLACED_ENTRIES = ['README.md']
/**
 * Top-level entries of the template that are deliberately not copied: installed packages, build
 * output, generated keys, logs. The generator's test fails on any entry that is in neither list,
 * so that a new file in the template gets a decision.
 */
export const LEFT_OUT_ENTRIES = ['node_modules', 'dist', '.keys', '.state', 'logs', 'coverage', 'test-results', '.env', 'package-lock.json']

const EXCLUDED_NAMES = new Set(['node_modules', 'dist', '.keys', '.state', 'logs', 'coverage', '.DS_Store', 'secrets.json'])
const EXCLUDED_PATTERN = /(\.log|\.tsbuildinfo|\.secrets\.json)$|^\.env(\..*)?$/

/**
 * True for a path (relative to the template, `/`-separated) that is never copied: build output,
 * keys, logs, secrets, and test output (`test/output`).
 * @param {string} path
 * @returns {boolean}
 */
export function isExcluded (path) {
  const parts = path.split('/')
  if (parts[0] === 'test' && parts[1] === 'output') return true
  return parts.some((part) => EXCLUDED_NAMES.has(part) || EXCLUDED_PATTERN.test(part))
}

/**
 * The template directory: `template/` inside the package when published (copied in at pack time),
 * else the monorepo's `template/` two levels up, as in a checkout.
 * @param {string} packageDir
 * @returns {string | undefined}
 */
export function findTemplateDir (packageDir) {
  for (const candidate of [join(packageDir, 'template'), join(packageDir, '..', '..', 'template')]) {
    if (existsSync(join(candidate, 'package.json')) && existsSync(join(candidate, 'src'))) return candidate
  }
  return undefined
}

/**
 * @typedef {object} TemplateFile
 * @property {string} path relative, `/`-separated
 * @property {Buffer} data
 * @property {number} mode permission bits
 */

/**
 * Every file the template contributes, read into memory (so that all reading happens before any
 * writing), in a stable order.
 * @param {string} templateDir
 * @returns {TemplateFile[]}
 */
export function readTemplateFiles (templateDir) {
  /** @type {TemplateFile[]} */
  const files = []
  /** @param {string} absolute */
  const visit = (absolute) => {
    const path = relative(templateDir, absolute).split(sep).join('/')
    if (isExcluded(path)) return
    const stats = statSync(absolute)
    if (stats.isDirectory()) {
      for (const entry of readdirSync(absolute).sort()) visit(join(absolute, entry))
    } else if (stats.isFile()) {
      files.push({ path, data: readFileSync(absolute), mode: stats.mode & 0o777 })
    }
  }
  for (const entry of readdirSync(templateDir).sort()) {
    const absolute = join(templateDir, entry)
    const isDirectory = statSync(absolute).isDirectory()
    if (isDirectory ? COPIED_DIRECTORIES.includes(entry) : COPIED_FILE_PATTERN.test(entry)) visit(absolute)
  }
  return files
}

/**
 * Template entries that are neither copied nor deliberately left out.
 * @param {string} templateDir
 * @returns {string[]}
 */
export function unclassifiedEntries (templateDir) {
  return readdirSync(templateDir).sort().filter((entry) => {
    const isDirectory = statSync(join(templateDir, entry)).isDirectory()
    if (isDirectory ? COPIED_DIRECTORIES.includes(entry) : COPIED_FILE_PATTERN.test(entry)) return false
    return !LEFT_OUT_ENTRIES.includes(entry) && !REPLACED_ENTRIES.includes(entry) && !EXCLUDED_PATTERN.test(entry)
  })
}

/**
 * Text or binary: a file is text when it has no NUL byte and survives a UTF-8 round trip.
 * @param {Buffer} data
 * @returns {boolean}
 */
export function isText (data) {
  return !data.includes(0) && Buffer.from(data.toString('utf8'), 'utf8').equals(data)
}
