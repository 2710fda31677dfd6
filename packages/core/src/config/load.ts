/**
 * Loads, binds and validates the configuration: the layered sources, the binder, then the
 * cross-key rules it is given (configuration.ts `loadConfiguration` gives every rule, the provider
 * types', the data-protection keys' and the state store's among them).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { isAbsolute, join, resolve } from 'node:path'
import { bindConfiguration, type ConfigurationProblem } from './bind.js'
import { DEVELOPMENT, isDevelopment } from './environment.js'
import type { Rule } from './rules.js'
import type { NamedSchemes } from './schemes.js'
import { applicationNaming, rootKeyOf } from '../application-name.js'
import { NAMED_SECTIONS_KEYWORD, ROOT_KEY, SECRET_KEYWORD, type CoreConfiguration, type TSchema } from './schema.js'
import {
  ConfigurationSourceError, DOTENV_FILE, mergeLayers, readEnvironment, readJsonFile, readKeyPerFile, userSecretsPath,
  type ConfigurationLayer, type FlatConfiguration
} from './sources.js'

/** @public */
export interface LoadOptions {
  /** The environment variables (only entry points pass `process.env`). */
  readonly env: NodeJS.ProcessEnv
  /** Directory holding `appsettings*.json` and `package.json`. */
  readonly contentRoot: string
  /**
   * Variables read from `.env` (Development only; see sources.ts `readDotEnv`). A variable set in
   * `env` too keeps the `env` value.
   */
  readonly dotenv?: Readonly<Record<string, string>> | undefined
  /**
   * The application name: the configuration root key (`<Name>:...`, environment variables
   * `<Name>__...`). Default `ProjectTemplate`. See `ApplicationParts.applicationName`.
   */
  readonly applicationName?: string | undefined
}

/** A non-fatal finding: logged as a warning with its event name; never contains a value. @public */
export interface ConfigurationWarning extends ConfigurationProblem {
  /** Log event: `configuration.unknown_key`, `configuration.secret_in_file`, `configuration.insecure_http`, `configuration.bearer_audience_is_client_id` (configuration.ts). */
  readonly event: string
  /** The settings file concerned, when there is one (`appsettings.json`). */
  readonly file?: string
}

/** Where a configured secret's value came from (never the value). @public */
export interface SecretOrigin {
  /** Full colon path as written by its source, canonical root (`ProjectTemplate:...:ClientSecret`). */
  readonly key: string
  /** Source name: `appsettings.json`, `user secrets file`, `key-per-file directory`, `.env`, `environment`. */
  readonly source: string
}

/**
 * The application schema the configuration binds to, composed from the core's sections and the
 * provider types' (providers/application-schema.ts `CONFIGURATION_SCHEMAS`).
 */
export interface ConfigurationSchemas {
  /** The application schema under `rootKey` (its name-derived defaults filled in). */
  readonly schemaFor: (rootKey: string) => TSchema
  /** The Types of Authentication:Schemes. */
  readonly namedSchemes: NamedSchemes
}

export interface LoadedConfigurationOf<C extends CoreConfiguration> {
  /** Frozen; secrets wrapped. Meaningful only when `errors` is empty. */
  readonly config: C
  readonly environmentName: string
  readonly contentRoot: string
  /** The application name the configuration was loaded under (its root key). */
  readonly applicationName: string
  /** Startup validation failures: the app must not start when any is present. */
  readonly errors: readonly ConfigurationProblem[]
  /** Non-fatal findings: unknown keys (typo protection), secrets in settings files, insecure http. */
  readonly warnings: readonly ConfigurationWarning[]
  /** Names of the sources read, in order (never their content). */
  readonly sources: readonly string[]
  /** Every secret key with a value, and the source it came from. */
  readonly secretOrigins: readonly SecretOrigin[]
}

/**
 * `NODE_ENV` -> environment name: `development` -> Development, `production` or unset ->
 * Production, any other value capitalised (`staging` -> Staging).
 *
 * @public
 */
export function environmentNameFrom (nodeEnv: string | undefined): string {
  const value = (nodeEnv ?? '').trim()
  if (value === '' || value.toLowerCase() === 'production') return 'Production'
  if (value.toLowerCase() === 'development') return DEVELOPMENT
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

/** The layers read besides `appsettings.json`, the key-per-file directory and the environment. */
export interface EnvironmentFiles {
  /**
   * `appsettings.<Environment>.json` and, in Development, user secrets: settings of one machine
   * or one deployment. An app's tests read neither (testing/app.ts), so that what a developer
   * puts there for local work never changes what the tests see.
   */
  readonly read: boolean
}

/** Loads the configuration onto `schemas` and checks it with `rules` (configuration.ts `RULES`, in their order). */
export function loadConfigurationWith<C extends CoreConfiguration> (options: LoadOptions, rules: ReadonlyArray<Rule<C>>, schemas: ConfigurationSchemas, environmentFiles: EnvironmentFiles = { read: true }): LoadedConfigurationOf<C> {
  const { env, contentRoot } = options
  // An app that names no root has the default application's (application-name.ts rootKeyOf).
  const naming = applicationNaming(rootKeyOf(options.applicationName))
  const { rootKey } = naming
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
  if (environmentFiles.read && existsSync(join(contentRoot, environmentFile))) {
    tryRead(environmentFile, () => readJsonFile(join(contentRoot, environmentFile), environmentFile, false))
  }
  if (environmentFiles.read && isDevelopment(environmentName)) {
    const id = readUserSecretsId(contentRoot)
    if (id !== undefined && existsSync(userSecretsPath(env, id, naming.kebabName))) {
      tryRead('user secrets', () => readJsonFile(userSecretsPath(env, id, naming.kebabName), 'user secrets file', false))
    }
  }
  const environment = readEnvironment(env, 'environment', rootKey)

  // The key-per-file directory is itself configuration: read it from the layers so far plus env.
  const directoryKey = `${rootKey}:Secrets:KeyPerFileDirectory`
  const directory = mergeLayers([...layers, environment]).get(directoryKey.toLowerCase())?.value
  if (typeof directory === 'string' && directory.trim() !== '') {
    const path = isAbsolute(directory) ? directory : resolve(contentRoot, directory)
    try {
      layers.push(readKeyPerFile(path, rootKey))
      sources.push('key-per-file directory')
    } catch (error) {
      if (!(error instanceof ConfigurationSourceError)) throw error
      errors.push({ key: directoryKey, message: `${directoryKey} ${error.message}` })
    }
  }
  if (options.dotenv !== undefined) {
    const fromFile = Object.fromEntries(Object.entries(options.dotenv).filter(([name]) => env[name] === undefined))
    layers.push(readEnvironment(fromFile, DOTENV_FILE, rootKey))
    sources.push(DOTENV_FILE)
  }
  layers.push(environment)
  sources.push('environment')

  const merged = mergeLayers(layers)
  const bound = bindConfiguration<C>(merged, schemas.schemaFor(rootKey), rootKey, schemas.namedSchemes)
  errors.push(...bound.errors)
  errors.push(...rules.flatMap((rule) => rule({ config: bound.value, environmentName, contentRoot, rootKey })))
  const warnings: ConfigurationWarning[] = bound.unknownKeys.map((key) => unknownKeyWarning(key, bound.suggestions.get(key)))
  warnings.push(...secretsInSettingsFiles(contentRoot, rootKey, schemas))
  // Outside Development the switch is already an error (rules.ts); the warning explains it where it works.
  if (bound.value.Authentication.Cookie.AllowInsecureHttp && isDevelopment(environmentName)) warnings.push(insecureHttpWarning(rootKey))
  return { config: deepFreeze(bound.value), environmentName, contentRoot, applicationName: rootKey, errors, warnings, sources, secretOrigins: secretOriginsOf(merged, rootKey, schemas) }
}

interface SchemaNode { properties?: Record<string, SchemaNode>, items?: SchemaNode, additionalProperties?: SchemaNode | boolean, [SECRET_KEYWORD]?: boolean, [NAMED_SECTIONS_KEYWORD]?: boolean }

/**
 * Lower-cased colon paths of the schema's secret keys (`x-secret`): a string key itself, an array
 * of secrets as its path (its elements are `<path>:<index>`).
 */
function secretPaths (node: SchemaNode, prefix: string): string[] {
  if (node[SECRET_KEYWORD] === true || node.items?.[SECRET_KEYWORD] === true) return [prefix]
  return Object.entries(node.properties ?? {}).flatMap(([name, child]) => secretPaths(child, `${prefix}:${name.toLowerCase()}`))
}

/** The maps of named sections under the root (`downstreamapis`, lower-cased) and the secret keys of one section, relative to it. */
function namedSectionSecretPaths (node: SchemaNode, prefix: string): Array<readonly [string, readonly string[]]> {
  if (node[NAMED_SECTIONS_KEYWORD] === true && typeof node.additionalProperties === 'object') {
    return [[prefix, secretPaths(node.additionalProperties, '').map((path) => path.slice(1))]]
  }
  return Object.entries(node.properties ?? {}).flatMap(([name, child]) => namedSectionSecretPaths(child, prefix === '' ? name.toLowerCase() : `${prefix}:${name.toLowerCase()}`))
}

interface KnownSecretPaths {
  readonly byRoot: Map<string, string[]>
  /** The maps of named sections (Authentication:Schemes, DownstreamApis), lower-cased under the root, with the secret keys of one section. */
  readonly namedSections: ReadonlyArray<readonly [string, readonly string[]]>
}

const secretPathsBySchemas = new WeakMap<ConfigurationSchemas, KnownSecretPaths>()

/** The secret paths of `schemas`: under each root key, and of a named section (relative to it: clientsecret, signingkey, ...). */
function secretPathsOf (schemas: ConfigurationSchemas): KnownSecretPaths {
  let known = secretPathsBySchemas.get(schemas)
  if (known === undefined) {
    const schemes = Object.values<{ readonly schema: TSchema }>(schemas.namedSchemes.types)
      .flatMap(({ schema }) => secretPaths(schema as SchemaNode, '').map((path) => path.slice(1)))
    known = {
      byRoot: new Map(),
      namedSections: [['authentication:schemes', schemes], ...namedSectionSecretPaths(schemas.schemaFor(ROOT_KEY) as SchemaNode, '')]
    }
    secretPathsBySchemas.set(schemas, known)
  }
  return known
}

/** True for a flat (lower-cased) key that holds a secret in `schemas` (under `rootKey`, default `ProjectTemplate`). */
export function isSecretKeyOf (schemas: ConfigurationSchemas, key: string, rootKey: string): boolean {
  const lower = key.toLowerCase()
  const known = secretPathsOf(schemas)
  let paths = known.byRoot.get(rootKey)
  if (paths === undefined) {
    paths = secretPaths(schemas.schemaFor(ROOT_KEY) as SchemaNode, rootKey.toLowerCase())
    known.byRoot.set(rootKey, paths)
  }
  const isSecretPath = (candidate: string, list: readonly string[]): boolean =>
    list.some((path) => candidate === path || (candidate.startsWith(`${path}:`) && /^\d+$/.test(candidate.slice(path.length + 1))))
  if (isSecretPath(lower, paths)) return true
  // Authentication:Schemes:<Name>:<key> (the secrets of each provider type's section) and
  // DownstreamApis:<Name>:<key>: maps of named sections.
  for (const [area, sectionPaths] of known.namedSections) {
    const prefix = `${rootKey.toLowerCase()}:${area}:`
    if (!lower.startsWith(prefix)) continue
    const rest = lower.slice(prefix.length)
    const keyStart = rest.indexOf(':')
    return keyStart > 0 && isSecretPath(rest.slice(keyStart + 1), sectionPaths)
  }
  return false
}

const hasValue = (value: unknown): boolean =>
  typeof value === 'string' ? value.trim() !== '' && !/^<[^>]*>$/.test(value.trim()) : value !== null && value !== undefined

function secretOriginsOf (merged: FlatConfiguration, rootKey: string, schemas: ConfigurationSchemas): SecretOrigin[] {
  return [...merged.entries()]
    .filter(([key, entry]) => isSecretKeyOf(schemas, key, rootKey) && hasValue(entry.value))
    .map(([, entry]) => ({ key: entry.path, source: entry.source }))
    .sort((a, b) => a.key.localeCompare(b.key, 'en'))
}

/**
 * `appsettings*.json` files sit in the app root and are committed with the code (the contract's
 * Authentication rule 8: secrets are not). Every such file is checked, the current environment's
 * or not; a file that is not valid JSON is reported by loading, when it is read.
 */
function secretsInSettingsFiles (contentRoot: string, rootKey: string, schemas: ConfigurationSchemas): ConfigurationWarning[] {
  const files = readdirSync(contentRoot).filter((name) => /^appsettings(\.[^.]+)?\.json$/i.test(name) && name !== 'appsettings.schema.json').sort()
  return files.flatMap((file) => {
    let layer: ConfigurationLayer
    try {
      layer = readJsonFile(join(contentRoot, file), file, true)
    } catch {
      return []
    }
    return [...layer.entries.entries()]
      .filter(([key, entry]) => isSecretKeyOf(schemas, key, rootKey) && hasValue(entry.value))
      .map(([, entry]) => ({
        key: entry.path,
        file,
        event: 'configuration.secret_in_file',
        message: `${entry.path} is set in ${file}, a file committed with the code; move it to user secrets (Development), an environment variable or a key-per-file directory, and replace it at the provider if it was ever pushed.`
      }))
  })
}

/** A key no schema entry matches, with the known key it was probably meant to be. */
function unknownKeyWarning (key: string, suggestion: string | undefined): ConfigurationWarning {
  const hint = suggestion === undefined ? '' : ` Did you mean ${suggestion}?`
  return { key, event: 'configuration.unknown_key', message: `${key} is not a known configuration key and is ignored; check its spelling against docs/configuration.md.${hint}` }
}

function insecureHttpWarning (rootKey: string): ConfigurationWarning {
  const key = `${rootKey}:Authentication:Cookie:AllowInsecureHttp`
  return {
    key,
    event: 'configuration.insecure_http',
    message: `${key} is true: the session, anti-forgery and sign-in correlation cookies drop the __Host- prefix and Secure and are sent over plain http. Use it only on this machine; anyone on the network path can read and replay them. Keep it false and use https (or http://localhost, which browsers treat as secure) for anything else.`
  }
}
