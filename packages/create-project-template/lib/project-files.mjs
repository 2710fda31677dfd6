// @ts-check
/**
 * The generated project's package.json (the template's, rewritten) and the commands its README,
 * CI workflow and the generator's closing message give. The project's other own files are real
 * files in files/ (generated-files.mjs). Pure functions of the options; nothing here writes.
 */
import { randomUUID } from 'node:crypto'
import { CORE_PACKAGE } from './core-package.mjs'

/** The license the core carries (its package.json `license`), as the README states it. */
export const CORE_LICENSE = 'MIT'

/** The command that tests a generated project, in its README and its CI workflow alike. */
export const TEST_COMMAND = 'npm test'
/**
 * The commands that start a generated project after `npm install`: `npm start` alone when the
 * manifest's start script builds first (a `prestart` script, or `build` inside `start`), else
 * `npm run build && npm start`, since start runs dist/server.js.
 * @param {{ scripts?: Record<string, string> }} manifest the generated package.json
 * @returns {string}
 */
export function startCommand (manifest) {
  const scripts = manifest.scripts ?? {}
  const builds = scripts.prestart !== undefined || /\bbuild\b|\btsx\b/.test(scripts.start ?? '')
  return builds ? 'npm start' : 'npm run build && npm start'
}

/**
 * The one command the README gives to run a fresh clone.
 * @param {{ scripts?: Record<string, string> }} manifest
 */
export const runCommand = (manifest) => `npm install && ${startCommand(manifest)}`

/** Dependency specifiers that only make sense inside the template's monorepo. */
const LOCAL_SPECIFIER = /^(workspace:|file:|link:|portal:|\.{0,2}\/)/

/**
 * @typedef {object} ProjectIdentity
 * @property {string} name PascalCase name (configuration root key)
 * @property {string} packageName kebab-case npm package name
 * @property {import('./posture.mjs').AuthProvider} authProvider
 * @property {{ version: string, path: string }} core the packed core's version and its path in the project (`vendor/...tgz`)
 */

/**
 * The generated package.json: the template's (already renamed) manifest with the package name,
 * a fresh `userSecretsId` and the template's dependency specifiers unchanged, except the core's:
 * `file:vendor/project-template-core-<version>.tgz`, the packed core shipped with the project
 * (it must satisfy the template's semver range). Any other local or workspace specifier cannot
 * work outside the monorepo, so it stops generation.
 * @param {string} renamedText the template's package.json after the rename
 * @param {ProjectIdentity} identity
 * @returns {string}
 */
export function packageJsonFor (renamedText, identity) {
  const manifest = JSON.parse(renamedText)
  for (const field of ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies']) {
    for (const [dependency, specifier] of Object.entries(manifest[field] ?? {})) {
      if (typeof specifier === 'string' && LOCAL_SPECIFIER.test(specifier)) {
        throw new Error(`The template's package.json ${field} entry ${dependency} uses a local specifier that a standalone project cannot install.`)
      }
    }
  }
  const range = manifest.dependencies?.[CORE_PACKAGE]
  if (typeof range !== 'string' || !satisfiesCaret(identity.core.version, range)) {
    throw new Error(`The packed ${CORE_PACKAGE} ${identity.core.version} does not satisfy the template's dependency ${CORE_PACKAGE}@${range}.`)
  }
  manifest.dependencies[CORE_PACKAGE] = `file:${identity.core.path}`
  delete manifest.workspaces
  manifest.name = identity.packageName
  manifest.version = '0.1.0'
  // A new project gets its own user-secrets directory (docs/configuration.md, "User secrets").
  manifest.userSecretsId = `${identity.packageName}-${randomUUID()}`
  return JSON.stringify(manifest, null, 2) + '\n'
}

/**
 * True when `version` satisfies a caret range (`^1.0.0`: same major, not lower), the only kind of
 * range the template gives the core. A development build of the core (`1.0.1-dev.3b062b6f`, see
 * core-package.mjs) counts by its release part: the project names it by `file:`, never by range.
 * @param {string} version
 * @param {string} range
 */
export function satisfiesCaret (version, range) {
  const parse = (/** @type {string} */ text) => /^(\d+)\.(\d+)\.(\d+)$/.exec(text)?.slice(1).map(Number)
  const wanted = range.startsWith('^') ? parse(range.slice(1)) : undefined
  const actual = parse(version.replace(/-dev\.[0-9a-f]{8}$/, ''))
  if (wanted === undefined || actual === undefined) return false
  const [major, minor, patch] = /** @type {[number, number, number]} */ (actual)
  const [wantedMajor, wantedMinor, wantedPatch] = /** @type {[number, number, number]} */ (wanted)
  return major === wantedMajor && (minor > wantedMinor || (minor === wantedMinor && patch >= wantedPatch))
}
