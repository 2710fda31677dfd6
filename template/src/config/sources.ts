/**
 * Configuration sources, flattened to colon paths as in the model the contract comes from:
 * `appsettings.json` -> `appsettings.<Environment>.json` -> user secrets (Development) ->
 * key-per-file directory -> environment variables. Later layers win; key matching is
 * case-insensitive; arrays are indexed by position (`Scopes:0`).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { ROOT_KEY } from './schema.js'

export type ScalarValue = string | number | boolean | null

export interface FlatEntry {
  /** Colon path as written by its source. */
  readonly path: string
  readonly value: ScalarValue
  /** Source name, for messages (`appsettings.json`, `environment`). Never the value. */
  readonly source: string
}

/** Case-insensitive flat configuration: lower-cased colon path -> entry. */
export type FlatConfiguration = Map<string, FlatEntry>

/**
 * One source's keys. `replacesArrays` lists (lower-cased) paths where a JSON document writes a
 * whole array: it replaces the earlier layers' array instead of merging element by element.
 */
export interface ConfigurationLayer {
  readonly entries: FlatConfiguration
  readonly replacesArrays: readonly string[]
}

export class ConfigurationSourceError extends Error {
  readonly source: string

  constructor (source: string, message: string, options?: ErrorOptions) {
    super(message, options)
    this.source = source
  }
}

function flattenInto (target: FlatConfiguration, arrays: string[], value: unknown, prefix: string, source: string): void {
  if (Array.isArray(value)) {
    arrays.push(prefix.toLowerCase())
    value.forEach((item, index) => flattenInto(target, arrays, item, prefix === '' ? String(index) : `${prefix}:${index}`, source))
    return
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (prefix === '' && key === '$schema') continue
      flattenInto(target, arrays, child, prefix === '' ? key : `${prefix}:${key}`, source)
    }
    return
  }
  if (prefix === '') return
  target.set(prefix.toLowerCase(), { path: prefix, value: value as ScalarValue, source })
}

/** Flattens a parsed JSON document into colon paths. */
export function flattenJson (document: unknown, source: string): ConfigurationLayer {
  const entries: FlatConfiguration = new Map()
  const replacesArrays: string[] = []
  flattenInto(entries, replacesArrays, document, '', source)
  return { entries, replacesArrays }
}

/** Reads and flattens a JSON settings file; a missing optional file yields an empty layer. */
export function readJsonFile (path: string, source: string, optional: boolean): ConfigurationLayer {
  if (!existsSync(path)) {
    if (optional) return { entries: new Map(), replacesArrays: [] }
    throw new ConfigurationSourceError(source, `${source} was not found.`)
  }
  let document: unknown
  try {
    document = JSON.parse(readFileSync(path, 'utf8'))
  } catch (error) {
    // The parser's message may quote file content (a secret in user secrets), so it is not kept.
    throw new ConfigurationSourceError(source, `${source} is not valid JSON.`, { cause: error instanceof SyntaxError ? undefined : error })
  }
  return flattenJson(document, source)
}

/**
 * Environment variables that start with `<ROOT_KEY>__` (any case); `__` separates path segments.
 */
export function readEnvironment (env: NodeJS.ProcessEnv): ConfigurationLayer {
  const flat: FlatConfiguration = new Map()
  const prefix = `${ROOT_KEY.toLowerCase()}__`
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || !name.toLowerCase().startsWith(prefix)) continue
    const path = name.split('__').join(':')
    flat.set(path.toLowerCase(), { path, value, source: 'environment' })
  }
  return { entries: flat, replacesArrays: [] }
}

/**
 * A key-per-file directory: each regular file is one key, its name the path with `__` (or `:`)
 * separators, its content the value (one trailing newline removed). Dotfiles are skipped, as
 * Kubernetes mounts keep bookkeeping entries such as `..data` there.
 */
export function readKeyPerFile (directory: string): ConfigurationLayer {
  const flat: FlatConfiguration = new Map()
  const source = 'key-per-file directory'
  if (!existsSync(directory) || !statSync(directory).isDirectory()) {
    throw new ConfigurationSourceError(source, 'is not a readable directory.')
  }
  for (const name of readdirSync(directory)) {
    if (name.startsWith('.')) continue
    const file = join(directory, name)
    if (!statSync(file).isFile()) continue
    const path = name.split('__').join(':')
    if (!path.toLowerCase().startsWith(`${ROOT_KEY.toLowerCase()}:`)) continue
    const value = readFileSync(file, 'utf8').replace(/\r?\n$/, '')
    flat.set(path.toLowerCase(), { path, value, source })
  }
  return { entries: flat, replacesArrays: [] }
}

/**
 * Location of the Development user-secrets file, outside the source tree:
 * `$XDG_CONFIG_HOME/project-template/usersecrets/<userSecretsId>/secrets.json`
 * (`~/.config/...` when XDG_CONFIG_HOME is unset).
 */
export function userSecretsPath (env: NodeJS.ProcessEnv, userSecretsId: string): string {
  const base = env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : join(homedir(), '.config')
  return join(base, 'project-template', 'usersecrets', userSecretsId, 'secrets.json')
}

/** Later layers win, key by key; a JSON array replaces the earlier array at its path. */
export function mergeLayers (layers: readonly ConfigurationLayer[]): FlatConfiguration {
  const merged: FlatConfiguration = new Map()
  for (const layer of layers) {
    for (const array of layer.replacesArrays) {
      for (const key of merged.keys()) {
        if (key.startsWith(`${array}:`)) merged.delete(key)
      }
    }
    for (const [key, entry] of layer.entries) merged.set(key, entry)
  }
  return merged
}
