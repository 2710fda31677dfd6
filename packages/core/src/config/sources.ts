/**
 * Configuration sources, flattened to colon paths as in the model the contract comes from:
 * `appsettings.json` -> `appsettings.<Environment>.json` -> user secrets (Development) ->
 * key-per-file directory -> environment variables. Later layers win; key matching is
 * case-insensitive; arrays are indexed by position (`Scopes:0`).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { parseEnv } from 'node:util'
import { CoreError } from '../errors.js'

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

export class ConfigurationSourceError extends CoreError {
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
  const text = readFileSync(path, 'utf8')
  try {
    document = JSON.parse(text)
  } catch (error) {
    // The parser's message may quote file content (a secret in user secrets), so it is not kept:
    // only the position it names, turned into a line and column.
    if (!(error instanceof SyntaxError)) throw new ConfigurationSourceError(source, `${source} could not be read.`, { cause: error })
    throw new ConfigurationSourceError(source, `${source} is not valid JSON: ${describeJsonErrorPosition(text, error.message)}.`)
  }
  return flattenJson(document, source)
}

/**
 * Where JSON.parse stopped, as `line L, column C` (1-based), from the `position N` its message
 * names (V8 on Node 20, 22 and 24); the end of the file for "Unexpected end of JSON input".
 * Nothing of the message itself is returned: it can quote the file's content.
 */
export function describeJsonErrorPosition (text: string, parserMessage: string): string {
  const match = /position (\d+)/.exec(parserMessage)
  const offset = match !== null ? Math.min(Number(match[1]), text.length) : /end of JSON input/i.test(parserMessage) ? text.length : undefined
  if (offset === undefined) return 'the parser gave no position'
  const before = text.slice(0, offset)
  const line = before.split('\n').length
  const column = offset - (before.lastIndexOf('\n') + 1) + 1
  return offset === text.length ? `unexpected end of file at line ${line}, column ${column}` : `line ${line}, column ${column}`
}

/** The Development `.env` file's name, in the app root. */
export const DOTENV_FILE = '.env'

/**
 * Reads `.env` in `directory` (Node's own parser, `util.parseEnv`: `NAME=value` lines, `#`
 * comments, quoted values); undefined when there is none. Only entry points call it, and only in
 * Development; variables already in the real environment win (see load.ts).
 */
export function readDotEnv (directory: string): Record<string, string> | undefined {
  const path = join(directory, DOTENV_FILE)
  if (!existsSync(path) || !statSync(path).isFile()) return undefined
  return parseEnv(readFileSync(path, 'utf8')) as Record<string, string>
}

/**
 * Environment variables that start with `<rootKey>__` (any case); `__` separates path segments.
 */
export function readEnvironment (env: NodeJS.ProcessEnv, source: string, rootKey: string): ConfigurationLayer {
  const flat: FlatConfiguration = new Map()
  const prefix = `${rootKey.toLowerCase()}__`
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || !name.toLowerCase().startsWith(prefix)) continue
    const path = name.split('__').join(':')
    flat.set(path.toLowerCase(), { path, value, source })
  }
  return { entries: flat, replacesArrays: [] }
}

/**
 * A key-per-file directory: each regular file is one key, its name the path with `__` (or `:`)
 * separators, its content the value (one trailing newline removed). Dotfiles are skipped, as
 * Kubernetes mounts keep bookkeeping entries such as `..data` there.
 */
export function readKeyPerFile (directory: string, rootKey: string): ConfigurationLayer {
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
    if (!path.toLowerCase().startsWith(`${rootKey.toLowerCase()}:`)) continue
    const value = readFileSync(file, 'utf8').replace(/\r?\n$/, '')
    flat.set(path.toLowerCase(), { path, value, source })
  }
  return { entries: flat, replacesArrays: [] }
}

/**
 * Location of the Development user-secrets file, outside the source tree:
 * `$XDG_CONFIG_HOME/<application>/usersecrets/<userSecretsId>/secrets.json`, `<application>` the
 * kebab-case application name (`project-template` by default; `~/.config/...` when
 * XDG_CONFIG_HOME is unset).
 */
export function userSecretsPath (env: NodeJS.ProcessEnv, userSecretsId: string, applicationDirectory = 'project-template'): string {
  const base = env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : join(homedir(), '.config')
  return join(base, applicationDirectory, 'usersecrets', userSecretsId, 'secrets.json')
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
