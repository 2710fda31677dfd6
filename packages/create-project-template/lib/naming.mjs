// @ts-check
import { readFileSync } from 'node:fs'

/**
 * Project names: validation, derivation from a directory, the word forms a name takes (kebab-case
 * package name, environment prefix, ...) and the text rename `ProjectTemplate` -> `<Name>`.
 */

/** The name the template is written with. */
export const TEMPLATE_NAME = 'ProjectTemplate'

/**
 * The generator's own package name. It contains `project-template` but names this tool, not the
 * project, so the rename leaves it alone (docs/generator.md, "Intentional leftovers").
 */
export const GENERATOR_NAME = 'create-project-template'

/**
 * The generator's package name on the registry: scoped, because the unscoped
 * `create-project-template` belongs to someone else there. `npm create @project-template`
 * runs it. Kept by the rename like {@link GENERATOR_NAME}.
 */
export const PACKAGE_NAME = '@project-template/create'

/**
 * The repository of the core and the generator, as an https address (from this package's
 * `repository` field, which the core's shares): documents cite the repository's own documents
 * there (`<address>/blob/main/docs/performance.md`). It names the tool's home, not the project, so
 * the rename leaves it alone like {@link GENERATOR_NAME}.
 */
export const REPOSITORY_ADDRESS = repositoryAddress()

function repositoryAddress () {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  const url = typeof manifest.repository === 'string' ? manifest.repository : manifest.repository?.url
  if (typeof url !== 'string') throw new Error('The generator\'s package.json has no repository URL.')
  return url.replace(/^git\+/, '').replace(/\.git$/, '')
}

/** Longest accepted name; it becomes part of cookie names and environment-variable names. */
export const MAX_NAME_LENGTH = 50

/**
 * PascalCase: an upper-case ASCII letter, then ASCII letters and digits. The name is the
 * configuration root key, the environment-variable prefix (`MyApp__`) and part of cookie names
 * (`__Host-MyApp.Web.Authentication`), so separators and non-ASCII characters are refused.
 */
export const NAME_PATTERN = /^[A-Z][A-Za-z0-9]*$/

/**
 * Returns undefined when `name` is valid, otherwise a sentence saying what is expected.
 * @param {string} name
 * @returns {string | undefined}
 */
export function checkName (name) {
  if (name.length === 0) return 'The name is empty; expected PascalCase letters and digits, for example MyApp.'
  if (name.length > MAX_NAME_LENGTH) return `The name is longer than ${MAX_NAME_LENGTH} characters.`
  if (!NAME_PATTERN.test(name)) {
    return `The name "${name}" is not valid: expected PascalCase, an upper-case letter followed by letters and digits only (for example MyApp), because it becomes the configuration root key, the environment-variable prefix and part of cookie names.`
  }
  return undefined
}

/**
 * PascalCase name from a directory's base name: `my-app` -> `MyApp`, `orders_api` -> `OrdersApi`,
 * `billingService` -> `BillingService`. Only `-`, `_`, `.` and spaces separate words; anything
 * else is kept, so the result may be invalid (`9lives`, `Café`) and callers check it with
 * {@link checkName} rather than getting a silently mangled name.
 * @param {string} directoryName base name of the target directory
 * @returns {string}
 */
export function deriveName (directoryName) {
  return directoryName
    .split(/[-_.\s]+/)
    .filter((part) => part !== '')
    .map((part) => {
      const body = part === part.toUpperCase() ? part.toLowerCase() : part
      return body.charAt(0).toUpperCase() + body.slice(1)
    })
    .join('')
}

/**
 * The words of a PascalCase name: `MyApp` -> [My, App], `HTTPServer` -> [HTTP, Server],
 * `App2Go` -> [App2, Go].
 * @param {string} name
 * @returns {string[]}
 */
export function nameWords (name) {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(' ')
}

/**
 * npm package name: `MyApp` -> `my-app`.
 * @param {string} name
 * @returns {string}
 */
export function kebabName (name) {
  return nameWords(name).map((word) => word.toLowerCase()).join('-')
}

/** @param {string} text */
const isLower = (text) => text === text.toLowerCase() && text !== text.toUpperCase()
/** @param {string} text */
const isUpper = (text) => text === text.toUpperCase() && text !== text.toLowerCase()

/**
 * Writes `words` in the case and with the separator one occurrence of the template name uses:
 * `ProjectTemplate` -> `MyApp`, `PROJECTTEMPLATE` -> `MYAPP`, `projecttemplate` -> `myapp`,
 * `projectTemplate` -> `myApp`, `project-template` -> `my-app`, `PROJECT_TEMPLATE` -> `MY_APP`,
 * `Project Template` -> `My App`. Any other mixture of cases gets the PascalCase name. Lower-case
 * prose ("a project template") is not a name and is kept.
 * @param {string} first the matched `project` part
 * @param {string} separator the matched separator (may be empty)
 * @param {string} second the matched `template` part
 * @param {string} name the new PascalCase name
 * @returns {string}
 */
function inCaseOf (first, separator, second, name) {
  const words = nameWords(name)
  const capitalize = (/** @type {string} */ word) => word.charAt(0).toUpperCase() + word.slice(1).toLowerCase()
  if (separator === ' ' && isLower(first)) return `${first}${separator}${second}`
  if (isLower(first) && isLower(second)) return words.map((word) => word.toLowerCase()).join(separator)
  if (isUpper(first) && isUpper(second)) return words.map((word) => word.toUpperCase()).join(separator)
  if (separator === '' && first === 'Project' && second === 'Template') return name
  if (separator === '' && first === 'project' && second === 'Template') {
    return name.charAt(0).toLowerCase() + name.slice(1)
  }
  if (first === 'Project' && second === 'Template') return words.map(capitalize).join(separator)
  return name
}

const TEMPLATE_NAME_FORMS = /(project)([-_ ]?)(template)/gi
const PROTECTED = new RegExp(`\\b${GENERATOR_NAME}\\b`, 'g')
/** The scope alone too: `npm create @project-template` is how users type it. */
const PACKAGE_SCOPE = PACKAGE_NAME.split('/')[0] ?? PACKAGE_NAME
const PROTECTED_PACKAGE = new RegExp(`${PACKAGE_SCOPE}(?![\\w-])`, 'g')
/**
 * The packed core's file name (`vendor/project-template-core-1.0.0.tgz`, npm's name for a packed
 * `@project-template/core`): it names the core package, not the project, so it is kept too.
 */
const PROTECTED_CORE_TARBALL = /\bproject-template-core-(?=\d)/g
const PROTECTED_REPOSITORY = new RegExp(REPOSITORY_ADDRESS.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'), 'g')
const REPOSITORY_PLACEHOLDER = '\u0000REPOSITORY\u0000'
const CORE_TARBALL_PLACEHOLDER = '\u0000CORE\u0000'
const PLACEHOLDER = '\u0000GENERATOR\u0000'
const PACKAGE_PLACEHOLDER = '\u0000PACKAGE\u0000'

/**
 * Replaces every form of the template's name in `text` (see {@link inCaseOf}); occurrences of the
 * generator's own name (`create-project-template`), the package scope, the core's tarball name and
 * the repository's address are kept.
 * @param {string} text
 * @param {string} name the new PascalCase name
 * @returns {string}
 */
export function renameText (text, name) {
  return text
    .replace(PROTECTED_REPOSITORY, REPOSITORY_PLACEHOLDER)
    .replace(PROTECTED_CORE_TARBALL, CORE_TARBALL_PLACEHOLDER)
    .replace(PROTECTED_PACKAGE, PACKAGE_PLACEHOLDER)
    .replace(PROTECTED, PLACEHOLDER)
    .replace(TEMPLATE_NAME_FORMS, (_match, first, separator, second) => inCaseOf(first, separator, second, name))
    .replaceAll(REPOSITORY_PLACEHOLDER, REPOSITORY_ADDRESS)
    .replaceAll(CORE_TARBALL_PLACEHOLDER, 'project-template-core-')
    .replaceAll(PLACEHOLDER, GENERATOR_NAME)
    .replaceAll(PACKAGE_PLACEHOLDER, PACKAGE_SCOPE)
}

/**
 * Every place in `text` where a form of the template's name is left, apart from the generator's
 * own name (lower-case prose excepted).
 * @param {string} text
 * @returns {string[]}
 */
export function findTemplateName (text) {
  return [...text.replace(PROTECTED_REPOSITORY, '').replace(PROTECTED_CORE_TARBALL, '').replace(PROTECTED_PACKAGE, '').replace(PROTECTED, '').matchAll(TEMPLATE_NAME_FORMS)]
    .map((match) => match[0])
    .filter((form) => !/^project template$/.test(form))
}
