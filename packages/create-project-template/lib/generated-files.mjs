// @ts-check
/**
 * The files a generated project has that the template does not (README.md, .gitignore, the CI
 * workflow, Dockerfile, .dockerignore, compose.yaml, deploy/nginx.conf) are real files in
 * `files/`, at the path they get in the project, rendered by one small substitution step:
 *
 * - A placeholder is `{{camelCaseName}}`: two braces, a name from {@link PLACEHOLDERS}, no spaces.
 *   Double braces right after a `$` are not placeholders (`${{ matrix.node }}` in the CI workflow
 *   is a GitHub Actions expression and is copied as it is).
 * - A placeholder not in the list, a listed one given no value, or a value given for a
 *   placeholder no file uses fails generation (and the generator's tests) before anything is
 *   written; nothing is left unreplaced.
 * - Values are inserted once and never scanned again, so a value that contains braces stays as
 *   it is.
 * - `files/gitignore` becomes `.gitignore`: npm leaves every `.gitignore` out of a package, and
 *   git would apply it to `files/` itself (the create-react-app convention).
 * - README sections that depend on an option are files in `fragments/`, rendered with the same
 *   values and put in through a placeholder (`{{postureSection}}`).
 *
 * Reading and rendering only; plan.mjs puts the result into the project.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CORE_PACKAGE, coreTarballName, nextPatchOf, patchLineOf, REGISTRY_SWITCH_COMMAND } from './core-package.mjs'
import { GENERATOR_NAME, kebabName } from './naming.mjs'
import { POSTURE_SUMMARY } from './posture.mjs'
import { CORE_LICENSE, TEST_COMMAND, runCommand } from './project-files.mjs'

const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..')
/** The generated project's own files, at the paths they get in the project (see {@link OUTPUT_PATHS}). */
export const FILES_DIR = join(PACKAGE_DIR, 'files')
/** README sections chosen by an option. */
export const FRAGMENTS_DIR = join(PACKAGE_DIR, 'fragments')

/** Files in `files/` stored under another name than the one they get in the project. */
export const OUTPUT_PATHS = Object.freeze({ gitignore: '.gitignore' })

/** Every placeholder a file in `files/` or `fragments/` may use, with what it becomes. */
export const PLACEHOLDERS = Object.freeze({
  name: 'PascalCase project name: configuration root key and environment variable prefix',
  projectName: 'kebab-case project name: npm package name and compose project name',
  generatorName: 'the generator\'s command name',
  authProvider: 'the --authProvider option',
  postureSummary: 'one line on the security posture of --authProvider',
  postureSection: 'README section of the posture: fragments/readme-posture-<closed|none>.md, rendered',
  runCommand: 'the one command that installs, builds and starts the project',
  testCommand: 'the command that tests the project (README and CI)',
  corePackage: 'the security core\'s package name',
  corePath: 'the packed core in the project: vendor/<tarball>',
  coreVersion: 'the packed core\'s version',
  corePatchLine: 'the packed core\'s patch line (1.3.x for 1.3.2): what a security fix is released as',
  coreNextPatchTarball: 'the tarball name of the packed core\'s next patch release (project-template-core-1.3.3.tgz for 1.3.2), an example',
  registrySwitchCommand: 'the command that moves the project from vendor/ to the registry',
  coreLicense: 'the core\'s license',
  docList: 'the README line that links the copied docs/*.md (empty when there are none)'
})

/** `{{name}}`, not preceded by `$`; the name may be anything between the braces, so that a misspelt or spaced one is reported. */
const PLACEHOLDER = /(?<!\$)\{\{([^{}]*)\}\}/g

/**
 * The placeholders `text` uses, in order of first use.
 * @param {string} text
 * @returns {string[]}
 */
export function placeholdersIn (text) {
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((match) => match[1] ?? ''))]
}

/**
 * Replaces every placeholder of `text` by its value, in one pass.
 * @param {string} text
 * @param {Readonly<Record<string, string>>} values
 * @param {string} source the file's path, for the error message
 * @returns {string}
 */
export function renderText (text, values, source) {
  for (const name of placeholdersIn(text)) {
    if (!Object.hasOwn(PLACEHOLDERS, name)) throw new Error(`${source} uses the placeholder {{${name}}}, which is not one of ${Object.keys(PLACEHOLDERS).join(', ')} (lib/generated-files.mjs).`)
    if (typeof values[name] !== 'string') throw new Error(`${source} uses the placeholder {{${name}}}, which was given no value.`)
  }
  return text.replace(PLACEHOLDER, (_, name) => /** @type {string} */ (values[name]))
}

/**
 * Every file below `directory` as `{ source, text }`, `source` relative and `/`-separated, sorted.
 * @param {string} directory
 * @returns {Array<{ source: string, text: string }>}
 */
export function readFilesDir (directory) {
  return readdirSync(directory, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(directory, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort()
    .map((source) => ({ source, text: readFileSync(join(directory, ...source.split('/')), 'utf8') }))
}

/**
 * @typedef {object} ProjectValues
 * @property {string} name PascalCase project name
 * @property {import('./posture.mjs').AuthProvider} authProvider
 * @property {{ version: string, path: string }} core the packed core's version and its path in the project
 * @property {{ scripts?: Record<string, string> }} manifest the generated package.json
 * @property {readonly string[]} docs the Markdown files copied into docs/, by file name
 */

/**
 * The value of every placeholder for one project.
 * @param {ProjectValues} project
 * @returns {Record<string, string>}
 */
export function placeholderValues (project) {
  const { name, authProvider, core, manifest, docs } = project
  /** @type {Record<string, string>} */
  const values = {
    name,
    projectName: kebabName(name),
    generatorName: GENERATOR_NAME,
    authProvider,
    postureSummary: POSTURE_SUMMARY[authProvider],
    runCommand: runCommand(manifest),
    testCommand: TEST_COMMAND,
    corePackage: CORE_PACKAGE,
    corePath: core.path,
    coreVersion: core.version,
    corePatchLine: patchLineOf(core.version),
    coreNextPatchTarball: coreTarballName(nextPatchOf(core.version)),
    registrySwitchCommand: REGISTRY_SWITCH_COMMAND,
    coreLicense: CORE_LICENSE,
    docList: docs.length === 0 ? '' : `\nMore in \`docs/\`: ${docs.map((file) => `[${file}](docs/${file})`).join(', ')}.\n`
  }
  const fragment = `readme-posture-${authProvider === 'none' ? 'none' : 'closed'}.md`
  values.postureSection = renderText(readFileSync(join(FRAGMENTS_DIR, fragment), 'utf8'), values, `fragments/${fragment}`)
  return values
}

/**
 * Every file of `files/`, rendered, at its path in the project.
 * @param {Readonly<Record<string, string>>} values from {@link placeholderValues}
 * @returns {Array<{ path: string, text: string }>}
 */
export function renderProjectFiles (values) {
  const files = readFilesDir(FILES_DIR)
  const used = new Set(files.flatMap((file) => placeholdersIn(file.text)))
  const unused = Object.keys(values).filter((name) => !used.has(name))
  if (unused.length > 0) throw new Error(`No file in files/ uses the placeholder(s) ${unused.join(', ')}: remove them from lib/generated-files.mjs.`)
  return files.map(({ source, text }) => ({
    path: /** @type {Record<string, string>} */ (OUTPUT_PATHS)[source] ?? source,
    text: renderText(text, values, `files/${source}`)
  }))
}
