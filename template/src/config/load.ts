/**
 * Loads, binds and validates the configuration. The same function serves `server.ts` and
 * `npm run check-config`; only those entry points pass in `process.env`.
 */
import { existsSync, readFileSync } from 'node:fs'
import { isAbsolute, join, resolve } from 'node:path'
import { bindConfiguration, type ConfigurationProblem } from './bind.js'
import { applyRules } from './rules.js'
import { ApplicationSchema, ROOT_KEY, type ApplicationConfiguration } from './schema.js'
import {
  ConfigurationSourceError, mergeLayers, readEnvironment, readJsonFile, readKeyPerFile, userSecretsPath,
  type ConfigurationLayer
} from './sources.js'

export interface LoadOptions {
  /** The environment variables (only entry points pass `process.env`). */
  readonly env: NodeJS.ProcessEnv
  /** Directory holding `appsettings*.json` and `package.json`. */
  readonly contentRoot: string
}

export interface LoadedConfiguration {
  /** Frozen; secrets wrapped. Meaningful only when `errors` is empty. */
  readonly config: ApplicationConfiguration
  readonly environmentName: string
  readonly contentRoot: string
  /** Startup validation failures: the app must not start when any is present. */
  readonly errors: readonly ConfigurationProblem[]
  /** Non-fatal findings (unknown keys: typo protection). */
  readonly warnings: readonly ConfigurationProblem[]
  /** Names of the sources read, in order (never their content). */
  readonly sources: readonly string[]
}

/**
 * `NODE_ENV` -> environment name: `development` -> Development, `production` or unset ->
 * Production, any other value capitalised (`staging` -> Staging).
 */
export function environmentNameFrom (nodeEnv: string | undefined): string {
  const value = (nodeEnv ?? '').trim()
  if (value === '' || value.toLowerCase() === 'production') return 'Production'
  if (value.toLowerCase() === 'development') return 'Development'
  return value.charAt(0).toUpperCase() + value.slice(1)
}

function readUserSecretsId (contentRoot: string): string | undefined {
  const packageJson = join(contentRoot, 'package.json')
  if (!existsSync(packageJson)) return undefined
  const id = (JSON.parse(readFileSync(packageJson, 'utf8')) as { userSecretsId?: unknown }).userSecretsId
  return typeof id === 'string' && /^[A-Za-z0-9._-]+$/.test(id) ? id : undefined
}

function deepFreeze<T> (value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}

export function loadConfiguration (options: LoadOptions): LoadedConfiguration {
  const { env, contentRoot } = options
  const environmentName = environmentNameFrom(env.NODE_ENV)
  const errors: ConfigurationProblem[] = []
  const layers: ConfigurationLayer[] = []
  const sources: string[] = []

  const tryRead = (source: string, read: () => ConfigurationLayer): void => {
    try {
      layers.push(read())
      sources.push(source)
    } catch (error) {
      if (!(error instanceof ConfigurationSourceError)) throw error
      errors.push({ key: source, message: error.message })
    }
  }

  tryRead('appsettings.json', () => readJsonFile(join(contentRoot, 'appsettings.json'), 'appsettings.json', false))
  const environmentFile = `appsettings.${environmentName}.json`
  if (existsSync(join(contentRoot, environmentFile))) {
    tryRead(environmentFile, () => readJsonFile(join(contentRoot, environmentFile), environmentFile, false))
  }
  if (environmentName === 'Development') {
    const id = readUserSecretsId(contentRoot)
    if (id !== undefined && existsSync(userSecretsPath(env, id))) {
      tryRead('user secrets', () => readJsonFile(userSecretsPath(env, id), 'user secrets file', false))
    }
  }
  const environment = readEnvironment(env)

  // The key-per-file directory is itself configuration: read it from the layers so far plus env.
  const directoryKey = `${ROOT_KEY}:Secrets:KeyPerFileDirectory`
  const directory = mergeLayers([...layers, environment]).get(directoryKey.toLowerCase())?.value
  if (typeof directory === 'string' && directory.trim() !== '') {
    const path = isAbsolute(directory) ? directory : resolve(contentRoot, directory)
    try {
      layers.push(readKeyPerFile(path))
      sources.push('key-per-file directory')
    } catch (error) {
      if (!(error instanceof ConfigurationSourceError)) throw error
      errors.push({ key: directoryKey, message: `${directoryKey} ${error.message}` })
    }
  }
  layers.push(environment)
  sources.push('environment')

  const bound = bindConfiguration<ApplicationConfiguration>(mergeLayers(layers), ApplicationSchema, ROOT_KEY)
  errors.push(...bound.errors)
  errors.push(...applyRules({ config: bound.value, environmentName, contentRoot }))
  const warnings = bound.unknownKeys.map((key) => ({
    key,
    message: `${key} is not a known configuration key and is ignored; check its spelling against docs/configuration.md.`
  }))
  return { config: deepFreeze(bound.value), environmentName, contentRoot, errors, warnings, sources }
}
