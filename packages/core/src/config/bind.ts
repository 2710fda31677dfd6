/**
 * Binds the flat, case-insensitive configuration onto the schema: canonical key names, defaults,
 * typed values (booleans accept true/false in any case), secrets wrapped. Every problem is
 * collected; none stops the walk.
 */
import { Secret } from './secret.js'
import type { TSchema } from '@sinclair/typebox'
import { CLAIM_MAPPINGS_KEYWORD, NAMED_SECTIONS_KEYWORD, SCHEMES_KEYWORD, SECRET_KEYWORD, type SchemaNode } from './schema-parts.js'
import type { NamedSchemes } from './schemes.js'
import type { FlatConfiguration, ScalarValue } from './sources.js'
import { nearestKey } from './key-suggestion.js'

/** @public */
export interface ConfigurationProblem {
  /** Full colon path, canonical casing (`ProjectTemplate:Authentication:Enabled`). */
  readonly key: string
  /** A sentence naming the key. Never contains a configured value. */
  readonly message: string
}

interface BindContext {
  readonly flat: FlatConfiguration
  readonly consumed: Set<string>
  readonly errors: ConfigurationProblem[]
  /** The Types of Authentication:Schemes (none: a schemes node binds nothing). */
  readonly namedSchemes: NamedSchemes | undefined
  /** Each section bound so far (lower-cased path) with its canonical path and its keys: where a misspelt key finds its suggestion. */
  readonly sections: Map<string, { readonly path: string, readonly keys: readonly string[] }>
}

function childKeys (context: BindContext, path: string): Map<string, string> {
  // Lower-cased next segment -> segment as written, for every key below `path`.
  const prefix = `${path.toLowerCase()}:`
  const children = new Map<string, string>()
  for (const [key, entry] of context.flat) {
    if (!key.startsWith(prefix)) continue
    const rest = entry.path.slice(prefix.length)
    const segment = rest.split(':')[0] ?? ''
    if (!children.has(segment.toLowerCase())) children.set(segment.toLowerCase(), segment)
  }
  return children
}

function bindScalar (context: BindContext, schema: SchemaNode, path: string): unknown {
  const entry = context.flat.get(path.toLowerCase())
  if (entry === undefined) {
    const fallback = schema.default
    return schema[SECRET_KEYWORD] === true ? new Secret(typeof fallback === 'string' ? fallback : '') : structuredClone(fallback)
  }
  context.consumed.add(path.toLowerCase())
  return coerce(context, schema, path, entry.value)
}

function coerce (context: BindContext, schema: SchemaNode, path: string, raw: ScalarValue): unknown {
  const fail = (expected: string): unknown => {
    context.errors.push({ key: path, message: `${path} must be ${expected}.` })
    return schema.default
  }
  if (schema.anyOf !== undefined) {
    const allowed = schema.anyOf.map((option) => option.const ?? '')
    const match = allowed.find((value) => value.toLowerCase() === String(raw).toLowerCase())
    return match ?? fail(`one of: ${allowed.join(', ')}`)
  }
  switch (schema.type) {
    case 'boolean':
      if (typeof raw === 'boolean') return raw
      if (typeof raw === 'string' && /^(true|false)$/i.test(raw.trim())) return raw.trim().toLowerCase() === 'true'
      return fail('true or false')
    case 'integer': {
      const value = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d{1,9}$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN
      const min = schema.minimum ?? Number.MIN_SAFE_INTEGER
      const max = schema.maximum ?? Number.MAX_SAFE_INTEGER
      if (!Number.isInteger(value) || value < min || value > max) {
        return fail(schema.maximum === undefined ? `an integer of at least ${min}` : `an integer from ${min} to ${max}`)
      }
      return value
    }
    case 'string': {
      const text = raw === null ? '' : String(raw)
      return schema[SECRET_KEYWORD] === true ? new Secret(text) : text
    }
    default:
      return fail('a value of the documented type')
  }
}

function bindArray (context: BindContext, schema: SchemaNode, path: string): unknown[] {
  const children = childKeys(context, path)
  // A scalar at the array's own path is a mistake even when a lower layer holds elements.
  if (context.flat.has(path.toLowerCase())) {
    context.consumed.add(path.toLowerCase())
    context.errors.push({ key: path, message: `${path} must be an array (in environment variables: ${path.split(':').join('__')}__0, __1, ...).` })
  }
  if (children.size === 0) {
    const fallback = Array.isArray(schema.default) ? schema.default as unknown[] : []
    return schema.items?.[SECRET_KEYWORD] === true ? fallback.map((value) => new Secret(String(value))) : structuredClone(fallback)
  }
  const indexed: Array<[number, string]> = []
  for (const segment of children.values()) {
    if (/^\d{1,4}$/.test(segment)) {
      indexed.push([Number(segment), segment])
    } else {
      context.errors.push({ key: `${path}:${segment}`, message: `${path}:${segment} is not an array index; ${path} is an array.` })
      markConsumed(context, `${path}:${segment}`)
    }
  }
  indexed.sort((a, b) => a[0] - b[0])
  const item = schema.items ?? { type: 'string' }
  return indexed.map(([, segment]) => bindScalar(context, item, `${path}:${segment}`))
}

function markConsumed (context: BindContext, path: string): void {
  const lower = path.toLowerCase()
  for (const key of context.flat.keys()) {
    if (key === lower || key.startsWith(`${lower}:`)) context.consumed.add(key)
  }
}

function bindRecord (context: BindContext, schema: SchemaNode, path: string): Record<string, unknown> {
  // Map keys may themselves contain colons (claim names such as `urn:oid:...`): the whole
  // remainder of the path is the key.
  const valueSchema = Object.values(schema.patternProperties ?? {})[0] ?? { type: 'string' }
  const prefix = `${path.toLowerCase()}:`
  const result: Record<string, unknown> = {}
  for (const [key, entry] of context.flat) {
    if (!key.startsWith(prefix)) continue
    const name = entry.path.slice(prefix.length)
    result[name] = bindScalar(context, valueSchema, `${path}:${name}`)
  }
  return result
}

/**
 * A ClaimMappings key, from either form: `ClaimMappings:<claim>` (the JSON object form; the claim
 * name may contain colons) or `ClaimMappings:<index>:From` / `:To` (the array form, which
 * environment variables and key-per-file names can express). The result is one map; array
 * entries are applied after object entries.
 */
function bindClaimMappings (context: BindContext, path: string): Record<string, string> {
  const prefix = `${path.toLowerCase()}:`
  const result: Record<string, string> = {}
  const entries = new Map<number, { from?: string, to?: string }>()
  if (context.flat.has(path.toLowerCase())) {
    context.consumed.add(path.toLowerCase())
    context.errors.push({ key: path, message: `${path} must be an array of { From, To } objects or an object (in environment variables: ${path.split(':').join('__')}__0__From and __0__To).` })
  }
  for (const [key, entry] of context.flat) {
    if (!key.startsWith(prefix)) continue
    context.consumed.add(key)
    const name = entry.path.slice(prefix.length)
    const text = entry.value === null ? '' : String(entry.value)
    const indexed = /^(\d{1,4})(?::(.*))?$/.exec(name)
    if (indexed === null) {
      result[name] = text
      continue
    }
    const member = indexed[2]?.toLowerCase()
    if (member !== 'from' && member !== 'to') {
      context.errors.push({ key: `${path}:${name}`, message: `${path}:${indexed[1] ?? ''} must be an object with From and To.` })
      continue
    }
    const index = Number(indexed[1])
    entries.set(index, { ...entries.get(index), [member]: text })
  }
  for (const [index, { from, to }] of [...entries].sort((a, b) => a[0] - b[0])) {
    if (from === undefined || from.trim() === '') {
      context.errors.push({ key: `${path}:${index}:From`, message: `${path}:${index}:From is required (the provider claim name).` })
      continue
    }
    result[from.trim()] = to ?? ''
  }
  return result
}

/**
 * Authentication:Schemes: each `<Name>` bound by the protocol its Type names, with the defaults
 * that follow from the name (config/schemes.ts). A bad name, a missing or unknown Type: an error
 * naming the key, and nothing below that name is bound.
 */
function bindSchemes (context: BindContext, path: string): Record<string, unknown> {
  const result: Record<string, unknown> = {}
  for (const name of childKeys(context, path).values()) {
    const at = `${path}:${name}`
    const schemes = context.namedSchemes
    if (schemes === undefined) continue
    const nameProblem = schemes.nameProblem(name, at)
    const typeEntry = context.flat.get(`${at}:type`.toLowerCase())
    const type = schemes.typeOf(typeEntry?.value)
    const message = nameProblem ?? (typeEntry === undefined
      ? schemes.typeRequired(at)
      : type === undefined ? schemes.typeUnknown(at) : undefined)
    if (message !== undefined || type === undefined) {
      context.errors.push({ key: nameProblem === undefined ? `${at}:Type` : at, message: message ?? '' })
      markConsumed(context, at)
      continue
    }
    result[name] = { ...bindNode(context, schemes.schemaFor(type, name), at) as Record<string, unknown>, Type: type }
  }
  return result
}

/** A usable section name: letters, digits, - and _, starting with a letter, at most 64 characters. */
const SECTION_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/

/** The problem of a named section's `<Name>` (at `at`) that is not usable, or undefined (also for a section from the provider source). */
export function sectionNameProblem (name: string, at: string): ConfigurationProblem | undefined {
  return SECTION_NAME.test(name) ? undefined : { key: at, message: `${at} is not a usable name: letters, digits, - and _, starting with a letter, at most 64 characters.` }
}

/**
 * A map of named sections (`DownstreamApis:<Name>`): each `<Name>` bound by the one section schema.
 * A bad name: an error naming the key, and nothing below it is bound.
 */
function bindNamedSections (context: BindContext, node: SchemaNode, path: string): Record<string, unknown> {
  const section = typeof node.additionalProperties === 'object' ? node.additionalProperties : { type: 'string' }
  const result: Record<string, unknown> = {}
  if (context.flat.has(path.toLowerCase())) {
    context.consumed.add(path.toLowerCase())
    context.errors.push({ key: path, message: `${path} must be an object of named sections (${path}:<Name>:...).` })
  }
  for (const name of childKeys(context, path).values()) {
    const at = `${path}:${name}`
    const nameProblem = sectionNameProblem(name, at)
    if (nameProblem !== undefined) {
      context.errors.push(nameProblem)
      markConsumed(context, at)
      continue
    }
    result[name] = bindNode(context, section, at)
  }
  return result
}

/** Binds `schema` at `path`. */
export function bindNode (context: BindContext, schema: TSchema | SchemaNode, path: string): unknown {
  const node = schema as SchemaNode
  if (node[CLAIM_MAPPINGS_KEYWORD] === true) return bindClaimMappings(context, path)
  if (node[SCHEMES_KEYWORD] === true) return bindSchemes(context, path)
  if (node[NAMED_SECTIONS_KEYWORD] === true) return bindNamedSections(context, node, path)
  if (node.type === 'object' && node.properties !== undefined) {
    context.sections.set(path.toLowerCase(), { path, keys: Object.keys(node.properties) })
    const result: Record<string, unknown> = {}
    for (const [name, child] of Object.entries(node.properties)) {
      result[name] = bindNode(context, child, `${path}:${name}`)
    }
    return result
  }
  if (node.type === 'object' && node.patternProperties !== undefined) return bindRecord(context, node, path)
  if (node.type === 'array') return bindArray(context, node, path)
  return bindScalar(context, node, path)
}

export interface BindResult<T> {
  readonly value: T
  readonly errors: ConfigurationProblem[]
  /** Keys under the root that match no schema entry, as written by their source. */
  readonly unknownKeys: string[]
  /** For an unknown key that looks like a slip for a key of its section: that key's full path (`...:Api:Audience` -> `...:Api:Audiences`). */
  readonly suggestions: ReadonlyMap<string, string>
}

/** The known key an unknown one was probably meant to be: the nearest key of the closest section above it. */
function suggestionFor (context: BindContext, unknownKey: string): string | undefined {
  const segments = unknownKey.split(':')
  for (let length = segments.length - 1; length > 0; length--) {
    const section = context.sections.get(segments.slice(0, length).join(':').toLowerCase())
    if (section === undefined) continue
    const key = nearestKey(segments[length] ?? '', section.keys)
    return key === undefined ? undefined : `${section.path}:${key}`
  }
  return undefined
}

/** Binds the section `rootKey` of `flat` onto `schema`; `namedSchemes` are the Types of its Authentication:Schemes. */
export function bindConfiguration<T> (flat: FlatConfiguration, schema: TSchema | SchemaNode, rootKey: string, namedSchemes?: NamedSchemes): BindResult<T> {
  const context: BindContext = { flat, consumed: new Set(), errors: [], namedSchemes, sections: new Map() }
  const value = bindNode(context, schema, rootKey) as T
  const prefix = `${rootKey.toLowerCase()}:`
  const unknownKeys = [...flat.entries()]
    .filter(([key]) => (key.startsWith(prefix) || key === rootKey.toLowerCase()) && !context.consumed.has(key))
    .map(([, entry]) => entry.path)
    .sort()
  const suggestions = new Map<string, string>()
  for (const key of unknownKeys) {
    const suggestion = suggestionFor(context, key)
    if (suggestion !== undefined) suggestions.set(key, suggestion)
  }
  return { value, errors: context.errors, unknownKeys, suggestions }
}
