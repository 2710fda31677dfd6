/**
 * A SCIM resource as a canonical document (RFC 7643): what a POST or PUT body, a path-less PATCH
 * value and a stored resource become before they are compared or changed. Attribute names are
 * the attribute table's spelling whatever case the client used (directory/attributes.ts); the
 * enterprise extension's attributes live under its URN as one object; values are checked against
 * each attribute's type. What is not a known attribute (another extension, a vendor's own
 * attribute, `schemas`, `id`, `meta`) is dropped, and so is `password`: accepted (Okta sends one
 * on create), never stored or echoed. Entra ID's `"True"`/`"False"` strings for a boolean are read
 * as booleans and reported as a dialect. Plain data.
 */
import { scimAttribute, SCIM_ENTERPRISE_USER_SCHEMA, type DirectoryResourceType, type ScimAttributeDefinition } from '../directory/attributes.js'
import { ScimError } from './scim-errors.js'

/** A canonical SCIM document (see the module comment). */
export type ScimDocument = Record<string, unknown>

/** The non-standard forms a request used (each logged once per connection). */
export type ScimDialect = 'boolean_string' | 'capitalised_op' | 'replace_missing_target' | 'remove_with_value' | 'path_less_dotted_key' | 'single_value_for_list'

/** Collects the dialects one request used. */
export type DialectNotes = Set<ScimDialect>

const ENTERPRISE_PREFIX = `${SCIM_ENTERPRISE_USER_SCHEMA}:`
/** Never attributes of the document: read-only or the envelope. */
const IGNORED = new Set(['schemas', 'id', 'meta', 'password'])

export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

function invalid (attribute: string, expected: string): ScimError {
  return new ScimError(400, `The value of ${attribute} must be ${expected}.`, 'invalidValue')
}

/** A scalar value checked against its attribute's type (null: absent). */
function scalarOf (definition: ScimAttributeDefinition, value: unknown, notes: DialectNotes): unknown {
  if (value === null) return undefined
  switch (definition.type) {
    case 'boolean':
      if (typeof value === 'boolean') return value
      if (typeof value === 'string' && /^(true|false)$/i.test(value)) {
        notes.add('boolean_string')
        return value.toLowerCase() === 'true'
      }
      throw invalid(definition.name, 'true or false')
    case 'integer':
    case 'decimal':
      if (typeof value === 'number' && Number.isFinite(value)) return value
      throw invalid(definition.name, 'a number')
    case 'dateTime':
      if (typeof value === 'string' && !Number.isNaN(Date.parse(value))) return value
      throw invalid(definition.name, 'a date-time')
    default:
      if (typeof value === 'string') return value
      throw invalid(definition.name, 'a string')
  }
}

/** A complex value: its sub-attributes normalized, unknown ones dropped; undefined when nothing is left. */
function complexOf (resourceType: DirectoryResourceType, definition: ScimAttributeDefinition, value: unknown, notes: DialectNotes): Record<string, unknown> | undefined {
  if (value === null) return undefined
  if (!isObject(value)) throw invalid(definition.name, 'an object')
  const result: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    const sub = scimAttribute(resourceType, `${definition.name}.${key}`)
    if (sub === undefined) continue
    const normalized = scalarOf(sub, item, notes)
    if (normalized !== undefined) result[sub.name.slice(definition.name.length + 1)] = normalized
  }
  return Object.keys(result).length === 0 ? undefined : result
}

/** The value of `definition` (a top-level or extension attribute) in canonical form; undefined: absent. */
export function valueOf (resourceType: DirectoryResourceType, definition: ScimAttributeDefinition, value: unknown, notes: DialectNotes): unknown {
  if (definition.type !== 'complex') {
    if (definition.multiValued && Array.isArray(value)) return value.map((item) => scalarOf(definition, item, notes)).filter((item) => item !== undefined)
    return scalarOf(definition, value, notes)
  }
  if (!definition.multiValued) return complexOf(resourceType, definition, value, notes)
  if (value === null) return undefined
  const list = Array.isArray(value) ? value : [value]
  if (!Array.isArray(value)) notes.add('single_value_for_list')
  const items = list.map((item) => complexOf(resourceType, definition, item, notes)).filter((item) => item !== undefined)
  return items.length === 0 ? undefined : items
}

/** Where a canonical name lives in a document: the container key path and the attribute's own name there. */
export function locationOf (name: string): { readonly extension: boolean, readonly local: string } {
  return name.startsWith(ENTERPRISE_PREFIX) ? { extension: true, local: name.slice(ENTERPRISE_PREFIX.length) } : { extension: false, local: name }
}

/** Sets `local` (a top-level name, no dot) of the document or of its extension object. */
export function setAt (document: ScimDocument, extension: boolean, local: string, value: unknown): void {
  const container = extension ? extensionOf(document, true) : document
  if (container === undefined) return
  if (value === undefined) delete container[local]
  else container[local] = value
  if (extension && Object.keys(container).length === 0) delete document[SCIM_ENTERPRISE_USER_SCHEMA]
}

/** The document's extension object (created when `create`). */
export function extensionOf (document: ScimDocument, create: boolean): Record<string, unknown> | undefined {
  const current = document[SCIM_ENTERPRISE_USER_SCHEMA]
  if (isObject(current)) return current
  if (!create) return undefined
  const created: Record<string, unknown> = {}
  document[SCIM_ENTERPRISE_USER_SCHEMA] = created
  return created
}

/**
 * The attributes of a JSON body (a POST or PUT body, a path-less PATCH value) as a canonical
 * document. A key naming a sub-attribute (`name.givenName`, Entra's path-less form) or an
 * extension attribute by its full URN is placed where it belongs.
 */
export function normalizeDocument (resourceType: DirectoryResourceType, body: Readonly<Record<string, unknown>>, notes: DialectNotes): ScimDocument {
  const document: ScimDocument = {}
  for (const [key, value] of Object.entries(body)) {
    if (IGNORED.has(key.toLowerCase())) continue
    if (key.toLowerCase() === SCIM_ENTERPRISE_USER_SCHEMA.toLowerCase() && resourceType === 'User') {
      if (value === null) continue
      if (!isObject(value)) throw invalid(SCIM_ENTERPRISE_USER_SCHEMA, 'an object')
      for (const [sub, item] of Object.entries(value)) placeValue(resourceType, document, `${ENTERPRISE_PREFIX}${sub}`, item, notes)
      continue
    }
    placeValue(resourceType, document, key, value, notes)
  }
  return document
}

/** Puts `value` of the attribute `name` (any case; a sub-attribute with a dot) into `document`; unknown names are dropped. */
function placeValue (resourceType: DirectoryResourceType, document: ScimDocument, name: string, value: unknown, notes: DialectNotes): void {
  const definition = scimAttribute(resourceType, name)
  if (definition === undefined || definition.name === 'id' || definition.name.startsWith('meta') || definition.name.startsWith('members')) return
  const { extension, local } = locationOf(definition.name)
  const dot = local.indexOf('.')
  if (dot === -1) {
    const normalized = valueOf(resourceType, definition, value, notes)
    if (normalized !== undefined) setAt(document, extension, local, normalized)
    return
  }
  // `name.givenName` as a key: a sub-attribute of a single-valued complex attribute.
  const parent = scimAttribute(resourceType, definition.name.slice(0, definition.name.lastIndexOf('.')))
  if (parent === undefined || parent.multiValued) return
  notes.add('path_less_dotted_key')
  const normalized = scalarOf(definition, value, notes)
  const container = extension ? extensionOf(document, true)! : document
  const head = local.slice(0, dot)
  const current = isObject(container[head]) ? container[head] as Record<string, unknown> : {}
  if (normalized === undefined) delete current[local.slice(dot + 1)]
  else current[local.slice(dot + 1)] = normalized
  container[head] = current
}
