// @ts-check
/**
 * The command: parse arguments (prompting for missing ones only in a terminal), check everything,
 * plan the project in memory, write it (rolled back on failure), install its dependencies and
 * print the next steps. Exit status: 0 done, 1 failed while writing or installing, 2 invalid
 * input with nothing written, 130 cancelled at a prompt.
 */
import { readFileSync } from 'node:fs'
import { basename, dirname, join, relative, resolve, isAbsolute } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { findCoreTarball } from './core-package.mjs'
import { EXIT_CANCELLED, EXIT_FAILURE, EXIT_USAGE, UsageError } from './errors.mjs'
import { installDependencies } from './install.mjs'
import { GENERATOR_NAME, PACKAGE_NAME, checkName, deriveName, kebabName } from './naming.mjs'
import { planProject } from './plan.mjs'
import { AUTH_PROVIDERS, POSTURE_SUMMARY, isAuthProvider } from './posture.mjs'
import { TEST_COMMAND, runCommand, startCommand } from './project-files.mjs'
import { checkTarget } from './target.mjs'
import { findTemplateDir } from './template-files.mjs'
import { writeProject } from './write-project.mjs'

export const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..')

const OPTIONS = /** @type {const} */ ({
  name: { type: 'string' },
  authProvider: { type: 'string' },
  'skip-install': { type: 'boolean' },
  force: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' }
})

const OPTION_LIST = '--name, --authProvider, --skip-install, --force, --help, --version'

export const HELP = `Usage: ${GENERATOR_NAME} <directory> [options]
       npm create ${PACKAGE_NAME.split('/')[0]} -- <directory> [options]   (the published ${PACKAGE_NAME})
       npm run new -- <directory> [options]     (from a checkout of the template: a relative
                                                <directory> that would land inside the checkout
                                                is created beside it instead)

Creates a standalone web application (Fastify 5, TypeScript) in <directory>.

Options:
  --name <Name>              PascalCase project name: configuration root key, environment
                             prefix (<Name>__), cookie names, titles; the package name is its
                             kebab-case form. Default: from the directory (my-app -> MyApp).
  --authProvider <provider>  ${AUTH_PROVIDERS.map((provider, index) => `${provider}${index === 0 ? ' (default)' : ''}: ${POSTURE_SUMMARY[provider]}`).join('\n                             ')}
  --skip-install             do not run npm install in the new project
  --force                    write into a non-empty directory (same-named files are overwritten)
  -h, --help                 print this help
  -v, --version              print the version

Without <directory>, in a terminal, the missing values are asked for; without a terminal,
nothing is asked. Exit status: 0 done; 1 failed while writing (what was written is removed) or
installing; 2 invalid input (nothing written); 130 cancelled.
`

/**
 * @typedef {object} CliIo
 * @property {string[]} argv arguments after the command
 * @property {string} cwd directory that relative paths are resolved against
 * @property {NodeJS.ProcessEnv} env
 * @property {{ write: (text: string) => unknown }} stdout
 * @property {{ write: (text: string) => unknown }} stderr
 * @property {boolean} interactive stdin and stdout are a terminal
 * @property {() => Promise<Prompts>} [loadPrompts] defaults to importing the prompts package (`@clack/prompts`)
 * @property {(directory: string, env: NodeJS.ProcessEnv) => Promise<number>} [install] defaults to npm install
 * @property {string} [checkoutRoot] set by `npm run new`: the template's checkout, which a project must not land in
 */

/** @typedef {Pick<typeof import('@clack/prompts'), 'intro' | 'outro' | 'text' | 'select' | 'confirm' | 'isCancel' | 'cancel'>} Prompts */

class Cancelled extends Error {}

/**
 * @param {string} parent
 * @param {string} child
 */
function isInsideDirectory (parent, child) {
  const path = relative(resolve(parent), child)
  return path === '' || (!path.startsWith('..') && !isAbsolute(path))
}

/**
 * Maps node:util parseArgs errors to messages naming the option.
 * @param {unknown} error
 * @returns {never}
 */
function rethrowParseError (error) {
  const code = /** @type {NodeJS.ErrnoException} */ (error).code
  const message = error instanceof Error ? error.message : String(error)
  const option = /'(-{1,2}[^' ]+)/.exec(message)?.[1] ?? 'an option'
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const suggestion = closestOption(option)
    throw new UsageError(`Unknown option ${option}.${suggestion === undefined ? '' : ` Did you mean ${suggestion}?`} Valid options: ${OPTION_LIST}.`)
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    if (/does not take an argument/.test(message)) throw new UsageError(`Option ${option} does not take a value.`)
    throw new UsageError(`Option ${option} needs a value.`)
  }
  throw new UsageError(message)
}

/**
 * Levenshtein distance, case-insensitive.
 * @param {string} a
 * @param {string} b
 */
function distance (a, b) {
  const x = a.toLowerCase()
  const y = b.toLowerCase()
  let previous = Array.from({ length: y.length + 1 }, (_, index) => index)
  for (let i = 1; i <= x.length; i++) {
    const current = [i]
    for (let j = 1; j <= y.length; j++) {
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (x[i - 1] === y[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[y.length] ?? Math.max(x.length, y.length)
}

/**
 * The valid option closest to a mistyped one (`--auth-provider`, `--authprovider`, `--skipinstall`,
 * `--froce`), or undefined when none is close (at most two edits, or a third of its length, apart).
 * @param {string} option as typed, with its dashes
 * @returns {string | undefined}
 */
export function closestOption (option) {
  const typed = option.replace(/^-+/, '').split('=')[0] ?? ''
  let best
  let bestDistance = Infinity
  for (const name of Object.keys(OPTIONS)) {
    const d = Math.min(distance(typed, name), distance(typed.replaceAll('-', ''), name.replaceAll('-', '')))
    if (d < bestDistance) { best = name; bestDistance = d }
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(best.length / 3)) ? `--${best}` : undefined
}

/** @param {string} value */
function checkAuthProvider (value) {
  if (!isAuthProvider(value)) {
    throw new UsageError(`Invalid --authProvider value "${value}". Valid values: ${AUTH_PROVIDERS.join(', ')}.`)
  }
  return value
}

/**
 * @param {string} name
 * @param {boolean} derived
 * @param {string} directoryName
 */
function checkProjectName (name, derived, directoryName) {
  const problem = checkName(name)
  if (problem === undefined) return name
  if (derived) throw new UsageError(`No valid name can be derived from the directory name "${directoryName}": ${problem} Pass --name <Name>.`)
  throw new UsageError(`Invalid --name. ${problem}`)
}

/**
 * @template T
 * @param {Prompts} prompts
 * @param {T} value
 * @returns {Exclude<T, symbol>}
 */
function answered (prompts, value) {
  if (prompts.isCancel(value)) {
    prompts.cancel('Cancelled; nothing was written.')
    throw new Cancelled()
  }
  return /** @type {Exclude<T, symbol>} */ (value)
}

/**
 * Runs the command. Never calls process.exit; returns the exit status.
 * @param {CliIo} io
 * @returns {Promise<number>}
 */
export async function main (io) {
  try {
    return await run(io)
  } catch (error) {
    if (error instanceof Cancelled) return EXIT_CANCELLED
    if (error instanceof UsageError) {
      io.stderr.write(`${GENERATOR_NAME}: ${error.message}\nRun ${GENERATOR_NAME} --help for usage. Nothing was written.\n`)
      return EXIT_USAGE
    }
    const message = error instanceof Error ? error.message : String(error)
    io.stderr.write(`${GENERATOR_NAME}: ${message}\n`)
    return EXIT_FAILURE
  }
}

/**
 * @param {CliIo} io
 * @returns {Promise<number>}
 */
async function run (io) {
  /** @type {{ values: Record<string, string | boolean | undefined>, positionals: string[] }} */
  let parsed
  try {
    parsed = parseArgs({ args: io.argv, options: OPTIONS, allowPositionals: true, strict: true })
  } catch (error) {
    rethrowParseError(error)
  }
  const values = /** @type {{ name?: string, authProvider?: string, 'skip-install'?: boolean, force?: boolean, help?: boolean, version?: boolean }} */ (parsed.values)
  if (values.help === true) {
    io.stdout.write(HELP)
    return 0
  }
  if (values.version === true) {
    io.stdout.write(`${JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')).version}\n`)
    return 0
  }
  if (parsed.positionals.length > 1) {
    throw new UsageError(`Expected one <directory>, got ${parsed.positionals.length}: ${parsed.positionals.join(' ')}.`)
  }
  let authProvider = values.authProvider === undefined ? undefined : checkAuthProvider(values.authProvider)
  if (values.name !== undefined) checkProjectName(values.name, false, '')
  let force = values.force === true
  let directory = parsed.positionals[0]
  if (directory === '') throw new UsageError('The <directory> argument is empty.')

  const templateDir = findTemplateDir(PACKAGE_DIR)
  if (templateDir === undefined) throw new Error(`The template was not found next to ${PACKAGE_DIR}.`)

  let name = values.name
  if (directory === undefined) {
    if (!io.interactive) throw new UsageError('Missing <directory>: pass the directory to create the project in (no terminal, so nothing is asked).')
    const prompts = io.loadPrompts === undefined ? await import('@clack/prompts') : await io.loadPrompts()
    prompts.intro(GENERATOR_NAME)
    directory = answered(prompts, await prompts.text({
      message: 'Directory for the new project',
      placeholder: 'my-app',
      validate: (value) => (value === undefined || value.trim() === '' ? 'Enter a directory.' : undefined)
    })).trim()
    if (name === undefined) {
      name = answered(prompts, await prompts.text({
        message: 'Project name (PascalCase)',
        initialValue: deriveName(basename(resolve(io.cwd, directory))),
        validate: (value) => checkName(value ?? '')
      }))
    }
    if (authProvider === undefined) {
      authProvider = checkAuthProvider(answered(prompts, await prompts.select({
        message: 'Authentication',
        initialValue: 'cookie',
        options: AUTH_PROVIDERS.map((provider) => ({ value: provider, label: provider, hint: POSTURE_SUMMARY[provider] }))
      })))
    }
    if (!force) {
      try {
        checkTarget(resolve(io.cwd, directory), { force: false, templateDir })
      } catch (error) {
        if (!(error instanceof UsageError) || !/is not empty/.test(error.message)) throw error
        force = answered(prompts, await prompts.confirm({
          message: `${directory} is not empty. Write into it anyway (same-named files are overwritten)?`,
          initialValue: false
        }))
        if (!force) throw new UsageError(error.message)
      }
    }
    prompts.outro('Generating')
  }

  let target = resolve(io.cwd, directory)
  if (io.checkoutRoot !== undefined && isInsideDirectory(io.checkoutRoot, target)) {
    // `npm run new -- my-app` runs in the checkout: a project there would be inside another repository.
    const beside = join(dirname(io.checkoutRoot), basename(target))
    io.stdout.write(`${target} is inside the template's checkout (${io.checkoutRoot}); creating the project beside it instead: ${beside}\n`)
    target = beside
  }
  const derived = name === undefined
  name = checkProjectName(name ?? deriveName(basename(target)), derived, basename(target))
  authProvider ??= 'cookie'
  checkTarget(target, { force, templateDir })

  // The packed core the project installs from vendor/: carried by a published generator, packed
  // from packages/core in a checkout.
  const core = findCoreTarball(PACKAGE_DIR, io.env)
  const files = planProject({ templateDir, name, authProvider, core })
  const journal = writeProject(target, files)
  // Counted from what was written, so that the number printed is the number on disk.
  const written = journal.createdFiles.length + journal.overwrittenFiles.length
  const overwritten = journal.overwrittenFiles.length === 0 ? '' : ` (${journal.overwrittenFiles.length} overwritten)`

  const shown = relative(io.cwd, target)
  const cdPath = shown === '' ? '.' : shown.startsWith('..') || isAbsolute(shown) ? target : shown
  io.stdout.write(`Created ${name} (package ${kebabName(name)}, --authProvider ${authProvider}) in ${target}: ${written} files${overwritten}.\n`)
  if (authProvider === 'none') {
    io.stdout.write('Authentication is off: routes without authorization metadata are public. This is not a production identity configuration; README.md says how to return to the closed posture.\n')
  }

  let installed = false
  if (values['skip-install'] !== true) {
    io.stdout.write('Installing dependencies (npm install)...\n')
    const status = await (io.install ?? installDependencies)(target, io.env)
    if (status !== 0) {
      io.stderr.write(`${GENERATOR_NAME}: npm install failed (exit status ${status}). The project is complete; run npm install in ${target} once the problem is fixed.\n`)
      return EXIT_FAILURE
    }
    installed = true
  }
  const manifest = JSON.parse(files.find((file) => file.path === 'package.json')?.data.toString('utf8') ?? '{}')
  io.stdout.write(`\nNext steps:\n  cd ${cdPath}\n  ${installed ? startCommand(manifest) : runCommand(manifest)}\n  ${TEST_COMMAND}\n`)
  return 0
}
