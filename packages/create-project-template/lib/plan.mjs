// @ts-check
/**
 * The whole generated project as a list of files in memory: the template's files renamed, the
 * posture applied, the packed core in vendor/, the project's own package.json, and the files of
 * files/ rendered (README, .gitignore, CI workflow, Dockerfile, compose, nginx: generated-files.mjs). Nothing is written here, so every error surfaces before writing starts.
 */
import { VENDOR_DIRECTORY } from './core-package.mjs'
import { kebabName, renameText } from './naming.mjs'
import { appsettingsFor } from './posture.mjs'
import { placeholderValues, renderProjectFiles } from './generated-files.mjs'
import { packageJsonFor } from './project-files.mjs'
import { isText, readTemplateFiles } from './template-files.mjs'

/**
 * @typedef {object} PlannedFile
 * @property {string} path relative, `/`-separated
 * @property {Buffer} data
 * @property {number} mode
 */

/**
 * @typedef {object} PlanOptions
 * @property {string} templateDir
 * @property {string} name PascalCase project name
 * @property {import('./posture.mjs').AuthProvider} authProvider
 * @property {import('./core-package.mjs').CoreTarball} core the packed `@project-template/core`
 */

/**
 * @param {PlanOptions} options
 * @returns {PlannedFile[]}
 */
export function planProject (options) {
  const { templateDir, name, authProvider, core } = options
  const identity = { name, packageName: kebabName(name), authProvider, core: { version: core.version, path: `${VENDOR_DIRECTORY}/${core.fileName}` } }
  /** @type {Map<string, PlannedFile>} */
  const files = new Map()
  /** @param {import('./template-files.mjs').TemplateFile} file */
  const add = (file) => {
    const path = renameText(file.path, name)
    const data = isText(file.data) ? Buffer.from(renameText(file.data.toString('utf8'), name), 'utf8') : file.data
    files.set(path, { path, data, mode: file.mode })
  }
  // Every file comes from the template; test/posture.test.ts follows whichever posture
  // appsettings.json is given below, so no posture needs files of its own.
  for (const file of readTemplateFiles(templateDir)) add(file)

  /**
   * @param {string} path
   * @param {(text: string) => string} change
   */
  const rewrite = (path, change) => {
    const file = files.get(path)
    if (file === undefined) throw new Error(`The template has no ${path}.`)
    file.data = Buffer.from(change(file.data.toString('utf8')), 'utf8')
  }
  rewrite('package.json', (text) => packageJsonFor(text, identity))
  rewrite('appsettings.json', (text) => appsettingsFor(text, authProvider, name))

  const docs = [...files.keys()].filter((path) => /^docs\/[^/]+\.md$/.test(path)).map((path) => path.slice('docs/'.length))
  files.set(identity.core.path, { path: identity.core.path, data: core.data, mode: 0o644 })
  const manifest = JSON.parse(files.get('package.json')?.data.toString('utf8') ?? '{}')
  for (const { path, text } of renderProjectFiles(placeholderValues({ name, authProvider, core: identity.core, manifest, docs }))) {
    files.set(path, { path, data: Buffer.from(text, 'utf8'), mode: 0o644 })
  }

  return [...files.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}
