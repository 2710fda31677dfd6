/**
 * Named schemes (`Authentication:Schemes:<Name>`, docs/providers/several-providers.md):
 * the name rules and the schema a section binds to, which is its type's scheme section with the
 * defaults that follow from the name (scheme, display name, endpoint paths). Generic: the types
 * come from the provider types' registrations (providers/application-schema.ts `NAMED_SCHEMES`).
 * Plain data; the binder (config/bind.ts) and runtime validation use it.
 */
import type { TSchema } from '@sinclair/typebox'
import type { SchemaNode } from './schema-parts.js'

/** Letters, digits, `-` and `_`, starting with a letter; at most 64 characters (it appears in paths and env-var names). */
const SCHEME_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/

/** One Type a named scheme may have: its section's schema (Type included) and the paths that default from the name. */
export interface NamedSchemeEntry {
  readonly schema: TSchema
  readonly defaultPaths: (name: string) => Record<string, string>
}

export class NamedSchemes<T extends string = string> {
  readonly #schemaCache = new Map<string, SchemaNode>()

  /**
   * @param types each Type, in the order they are listed
   * @param reservedNames names no scheme may take (the cookie scheme, the contract sections)
   * @param typesNamedInMessages the Types a message about a missing or unknown Type lists
   */
  readonly types: Readonly<Record<T, NamedSchemeEntry>>
  readonly reservedNames: readonly string[]
  readonly typesNamedInMessages: readonly string[]

  constructor (types: Readonly<Record<T, NamedSchemeEntry>>, reservedNames: readonly string[], typesNamedInMessages: readonly string[]) {
    this.types = types
    this.reservedNames = reservedNames
    this.typesNamedInMessages = typesNamedInMessages
  }

  /** Every Type, in order. */
  get typeNames (): T[] {
    return Object.keys(this.types) as T[]
  }

  /** Why `name` cannot name a scheme (a sentence naming `key`), or undefined when it can. */
  nameProblem (name: string, key: string): string | undefined {
    if (!SCHEME_NAME.test(name)) return `${key} is not a usable scheme name: letters, digits, - and _, starting with a letter, at most 64 characters.`
    const reserved = this.reservedNames.find((candidate) => candidate.toLowerCase() === name.toLowerCase())
    if (reserved !== undefined) return `${key} uses the reserved scheme name ${reserved} (reserved: ${this.reservedNames.join(', ')}); choose another name.`
    return undefined
  }

  /** The Type a written value names (case-insensitive), or undefined. */
  typeOf (value: unknown): T | undefined {
    const text = typeof value === 'string' ? value.trim().toLowerCase() : ''
    return this.typeNames.find((type) => type.toLowerCase() === text)
  }

  /** The message of a scheme `at` without a Type. */
  typeRequired (at: string): string {
    return `${at}:Type is required: ${this.typesNamedInMessages.join(' or ')}.`
  }

  /** The message of a scheme `at` whose Type names no type. */
  typeUnknown (at: string): string {
    return `${at}:Type must be one of: ${this.typesNamedInMessages.join(', ')}.`
  }

  /** The endpoint paths a named scheme has unless its path keys say otherwise. */
  defaultPathsOf (type: T, name: string): Record<string, string> {
    return this.types[type].defaultPaths(name)
  }

  /**
   * The schema `Schemes:<name>` binds to: the type's section with Type, Scheme and DisplayName
   * defaulting to the name, Enabled to true (declaring a scheme means using it), and the paths of
   * {@link defaultPathsOf}.
   */
  schemaFor (type: T, name: string): SchemaNode {
    const cacheKey = `${type}\u0000${name}`
    const known = this.#schemaCache.get(cacheKey)
    if (known !== undefined) return known
    const schema = JSON.parse(JSON.stringify(this.types[type].schema)) as SchemaNode & { properties: Record<string, SchemaNode> }
    const defaults: Record<string, unknown> = { Scheme: name, DisplayName: name, Enabled: true, ...this.defaultPathsOf(type, name) }
    for (const [key, value] of Object.entries(defaults)) schema.properties[key] = { ...schema.properties[key], default: value }
    schema.properties.Scheme = { ...schema.properties.Scheme, description: 'The scheme name; equals <Name>.' }
    this.#schemaCache.set(cacheKey, schema)
    return schema
  }
}
