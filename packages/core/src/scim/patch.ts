/**
 * SCIM PATCH (RFC 7644 §3.5.2) on a canonical document (document.ts): the request parsed and
 * checked whole before anything is applied (an unknown `op`, `remove` without a path, a path to
 * `id`, `meta` or `schemas`, more than {@link SCIM_BODY_LIMITS}`.maxOperations` operations: 400),
 * then every operation applied in order to a copy; the caller writes the result in one store
 * transaction, so a PATCH applies all of its operations or none.
 *
 * The dialects real clients speak are accepted and noted (document.ts {@link ScimDialect}):
 * Entra ID's capitalised `op`s (`Replace`), `"True"`/`"False"`, a filtered `replace` path whose
 * target is missing (`emails[type eq "work"].value`: the value is added with `type` "work"), and
 * a group `remove` of `members` that lists the members in `value`; Okta's path-less `replace` of
 * `active`. A complex attribute's replace keeps the sub-attributes it does not name (§3.5.2.3).
 */
import { scimAttribute, type DirectoryResourceType, type ScimAttributeDefinition } from '../directory/attributes.js'
import type { DirectoryUser } from '../directory/directory-store.js'
import { userMatches } from '../directory/filter-evaluation.js'
import { parseScimPath } from '../directory/filter-parser.js'
import type { ScimFilter, ScimPath } from '../directory/filter.js'
import { extensionOf, isObject, locationOf, normalizeDocument, setAt, valueOf, type DialectNotes, type ScimDocument } from './document.js'
import { SCIM_BODY_LIMITS } from './request-body.js'
import { ScimError } from './scim-errors.js'

export const SCIM_PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp'

/** One checked operation. */
export interface PatchOperation {
  readonly op: 'add' | 'remove' | 'replace'
  readonly path?: ScimPath
  readonly value?: unknown
}

/** A group's member change as a PATCH builds it, applied in order (later operations win). */
export interface MemberPlan {
  replace?: Set<string>
  readonly add: Set<string>
  readonly remove: Set<string>
}

const READ_ONLY_PATH = /^\s*(id|meta|schemas)(\b|\.|\[|$)/i

function operationOf (resourceType: DirectoryResourceType, raw: unknown, index: number, notes: DialectNotes): PatchOperation {
  if (!isObject(raw)) throw new ScimError(400, `Operations[${index}] must be an object.`, 'invalidSyntax')
  const name = typeof raw.op === 'string' ? raw.op : ''
  const op = name.toLowerCase()
  if (op !== 'add' && op !== 'remove' && op !== 'replace') throw new ScimError(400, `Operations[${index}].op must be add, remove or replace.`, 'invalidSyntax')
  if (name !== op) notes.add('capitalised_op')
  const rawPath = raw.path
  if (rawPath !== undefined && typeof rawPath !== 'string') throw new ScimError(400, `Operations[${index}].path must be a string.`, 'invalidPath')
  if (rawPath === undefined || rawPath.trim() === '') {
    if (op === 'remove') throw new ScimError(400, `Operations[${index}]: remove needs a path.`, 'noTarget')
    if (!isObject(raw.value)) throw new ScimError(400, `Operations[${index}]: without a path, value must be an object of attributes.`, 'invalidValue')
    return { op, value: raw.value }
  }
  if (READ_ONLY_PATH.test(rawPath)) throw new ScimError(400, `Operations[${index}]: id, meta and schemas cannot be changed.`, 'mutability')
  const path = parseScimPath(resourceType, rawPath)
  if (op !== 'remove' && !('value' in raw)) throw new ScimError(400, `Operations[${index}]: ${op} needs a value.`, 'invalidValue')
  return { op, path, ...('value' in raw ? { value: raw.value } : {}) }
}

/** The operations of a PATCH body, all checked before any is applied. */
export function parsePatchOperations (resourceType: DirectoryResourceType, body: Readonly<Record<string, unknown>>, notes: DialectNotes): PatchOperation[] {
  const schemas = body.schemas
  if (Array.isArray(schemas) && !schemas.includes(SCIM_PATCH_SCHEMA)) throw new ScimError(400, `A PATCH request's schemas must list ${SCIM_PATCH_SCHEMA}.`, 'invalidSyntax')
  const operations = body.Operations ?? body.operations
  if (!Array.isArray(operations) || operations.length === 0) throw new ScimError(400, 'Operations must be a non-empty array.', 'invalidSyntax')
  if (operations.length > SCIM_BODY_LIMITS.maxOperations) throw new ScimError(400, `A PATCH holds at most ${SCIM_BODY_LIMITS.maxOperations} operations.`, 'invalidValue')
  return operations.map((operation, index) => operationOf(resourceType, operation, index, notes))
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

/** Puts an already normalized value of a top-level (or extension) attribute, as `op` does. */
function putValue (document: ScimDocument, definition: ScimAttributeDefinition, op: 'add' | 'replace', value: unknown): void {
  const { extension, local } = locationOf(definition.name)
  const container = extension ? extensionOf(document, false) : document
  const current = container?.[local]
  if (definition.multiValued && op === 'add' && Array.isArray(current) && Array.isArray(value)) {
    setAt(document, extension, local, [...current, ...value.filter((item) => !current.some((existing) => sameJson(existing, item)))])
  } else if (definition.type === 'complex' && !definition.multiValued && isObject(current) && isObject(value)) {
    setAt(document, extension, local, { ...current, ...value })
  } else {
    setAt(document, extension, local, value)
  }
}

/** A path-less add or replace: each attribute of the value, as if it were the operation's path. */
function applyPathless (resourceType: DirectoryResourceType, document: ScimDocument, op: 'add' | 'replace', value: Record<string, unknown>, notes: DialectNotes): void {
  const normalized = normalizeDocument(resourceType, value, notes)
  for (const [key, item] of Object.entries(normalized)) {
    if (isObject(item) && scimAttribute(resourceType, key) === undefined) {
      // The extension object: each of its attributes.
      for (const [sub, subValue] of Object.entries(item)) putValue(document, scimAttribute(resourceType, `${key}:${sub}`)!, op, subValue)
      continue
    }
    putValue(document, scimAttribute(resourceType, key)!, op, item)
  }
}

/** `attribute.sub` without a filter: of a single complex value, or of every value of a multi-valued one. */
function applySubAttribute (resourceType: DirectoryResourceType, document: ScimDocument, operation: PatchOperation, definition: ScimAttributeDefinition, notes: DialectNotes): void {
  const { extension, local } = locationOf(definition.name)
  const [head = '', sub = ''] = local.split('.')
  const container = extension ? extensionOf(document, operation.op !== 'remove') : document
  if (container === undefined) return
  const value = operation.op === 'remove' ? undefined : valueOf(resourceType, definition, operation.value, notes)
  const set = (item: Record<string, unknown>): Record<string, unknown> => {
    const next = { ...item }
    if (value === undefined) delete next[sub]
    else next[sub] = value
    return next
  }
  const current = container[head]
  if (Array.isArray(current)) {
    setAt(document, extension, head, current.map((item) => isObject(item) ? set(item) : item))
    return
  }
  const next = set(isObject(current) ? current : {})
  setAt(document, extension, head, Object.keys(next).length === 0 ? undefined : next)
}

/** The value a filter such as `type eq "work"` (or an `and` of such) describes: the element a missing target becomes. */
function elementOfFilter (filter: ScimFilter, attribute: string): Record<string, unknown> | undefined {
  const terms = filter.op === 'and' ? filter.filters : [filter]
  const element: Record<string, unknown> = {}
  for (const term of terms) {
    if (term.op !== 'eq' || !term.attribute.startsWith(`${attribute}.`) || term.value === null) return undefined
    element[term.attribute.slice(attribute.length + 1)] = term.value
  }
  return element
}

/** Whether one value of a multi-valued attribute matches a path's filter (the core's filter semantics). */
function elementMatches (attribute: string, filter: ScimFilter, element: unknown): boolean {
  const { extension, local } = locationOf(attribute)
  const attributes = extension ? { [attribute.slice(0, attribute.length - local.length - 1)]: { [local]: [element] } } : { [local]: [element] }
  const probe = { connection: '', id: '', userName: '', active: true, attributes, created: '', lastModified: '', version: 1 } satisfies DirectoryUser
  return userMatches(probe, { op: 'valuePath', attribute, filter })
}

/** `attribute[filter]` or `attribute[filter].sub`: the matching values removed or changed; a missing target of a replace added (Entra). */
function applyFiltered (resourceType: DirectoryResourceType, document: ScimDocument, operation: PatchOperation, path: ScimPath & { filter: ScimFilter }, notes: DialectNotes): void {
  const definition = scimAttribute(resourceType, path.attribute)!
  const { extension, local } = locationOf(definition.name)
  const container = extension ? extensionOf(document, operation.op !== 'remove') : document
  const current = Array.isArray(container?.[local]) ? container[local] as unknown[] : []
  const sub = path.subAttribute === undefined ? undefined : path.subAttribute.slice(definition.name.length + 1)
  const matches = current.map((item) => elementMatches(definition.name, path.filter, item))
  if (operation.op === 'remove') {
    const kept = sub === undefined
      ? current.filter((_item, index) => matches[index] !== true)
      : current.map((item, index) => matches[index] === true && isObject(item) ? Object.fromEntries(Object.entries(item).filter(([key]) => key !== sub)) : item)
    setAt(document, extension, local, kept.length === 0 ? undefined : kept)
    return
  }
  const subDefinition = path.subAttribute === undefined ? undefined : scimAttribute(resourceType, path.subAttribute)
  const change = (item: Record<string, unknown>): Record<string, unknown> => {
    if (subDefinition !== undefined && sub !== undefined) return { ...item, [sub]: valueOf(resourceType, subDefinition, operation.value, notes) }
    const [normalized] = (valueOf(resourceType, definition, [operation.value], notes) as Array<Record<string, unknown>> | undefined) ?? [{}]
    return operation.op === 'add' ? { ...item, ...normalized } : { ...normalized }
  }
  if (!matches.includes(true)) {
    const element = elementOfFilter(path.filter, definition.name)
    if (element === undefined) throw new ScimError(400, `No value of ${definition.name} matches the path's filter.`, 'noTarget')
    notes.add('replace_missing_target')
    setAt(document, extension, local, [...current, { ...element, ...change(element) }])
    return
  }
  setAt(document, extension, local, current.map((item, index) => matches[index] === true && isObject(item) ? change(item) : item))
}

/** Applies the operations to a copy of `document` and returns it (throws a ScimError, changing nothing). */
export function applyPatch (resourceType: DirectoryResourceType, document: ScimDocument, operations: readonly PatchOperation[], notes: DialectNotes): ScimDocument {
  const result = structuredClone(document)
  for (const operation of operations) {
    if (operation.path === undefined) {
      applyPathless(resourceType, result, operation.op as 'add' | 'replace', operation.value as Record<string, unknown>, notes)
      continue
    }
    const path = operation.path
    const definition = scimAttribute(resourceType, path.attribute)!
    if (path.filter !== undefined) applyFiltered(resourceType, result, operation, { ...path, filter: path.filter }, notes)
    else if (locationOf(definition.name).local.includes('.')) applySubAttribute(resourceType, result, operation, definition, notes)
    else if (operation.op === 'remove') setAt(result, locationOf(definition.name).extension, locationOf(definition.name).local, undefined)
    else putValue(result, definition, operation.op, valueOf(resourceType, definition, operation.value, notes))
  }
  return result
}

/** The user ids of a `members` value (`[{ "value": "<id>" }]`, or one such object). */
export function memberIdsOf (value: unknown): string[] {
  const list = Array.isArray(value) ? value : [value]
  return list.map((item) => {
    if (!isObject(item) || typeof item.value !== 'string' || item.value === '') throw new ScimError(400, 'Each member must be an object with a value (a user id).', 'invalidValue')
    return item.value
  })
}

/** The member ids a `members[value eq "<id>"]` filter (or an `or` of them) names; anything else is refused. */
function memberIdsOfFilter (filter: ScimFilter): string[] {
  const terms = filter.op === 'or' ? filter.filters : [filter]
  return terms.map((term) => {
    if (term.op !== 'eq' || term.attribute !== 'members.value' || typeof term.value !== 'string') throw new ScimError(400, 'A members path filter must be value eq "<user id>".', 'invalidPath')
    return term.value
  })
}

function planAdd (plan: MemberPlan, ids: readonly string[]): void {
  for (const id of ids) {
    plan.remove.delete(id)
    if (plan.replace !== undefined) plan.replace.add(id)
    else plan.add.add(id)
  }
}

function planRemove (plan: MemberPlan, ids: readonly string[]): void {
  for (const id of ids) {
    plan.add.delete(id)
    if (plan.replace !== undefined) plan.replace.delete(id)
    else plan.remove.add(id)
  }
}

function planReplace (plan: MemberPlan, ids: readonly string[]): void {
  plan.replace = new Set(ids)
  plan.add.clear()
  plan.remove.clear()
}

/** One operation on a group's `members`; false when the operation is not about members. */
function applyMemberOperation (operation: PatchOperation, plan: MemberPlan, notes: DialectNotes): boolean {
  if (operation.path === undefined) {
    const value = operation.value as Record<string, unknown>
    const key = Object.keys(value).find((name) => name.toLowerCase() === 'members')
    if (key === undefined) return false
    if (operation.op === 'add') planAdd(plan, memberIdsOf(value[key]))
    else planReplace(plan, memberIdsOf(value[key]))
    return false
  }
  const path = operation.path
  if (path.attribute !== 'members') return false
  if (path.filter !== undefined) {
    if (operation.op !== 'remove' || path.subAttribute !== undefined) throw new ScimError(400, 'A members path with a filter is only for remove.', 'invalidPath')
    planRemove(plan, memberIdsOfFilter(path.filter))
  } else if (operation.op === 'add') {
    planAdd(plan, memberIdsOf(operation.value))
  } else if (operation.op === 'replace') {
    planReplace(plan, memberIdsOf(operation.value))
  } else if (operation.value !== undefined) {
    // Entra ID: remove path "members" with the members to remove in value.
    notes.add('remove_with_value')
    planRemove(plan, memberIdsOf(operation.value))
  } else {
    planReplace(plan, [])
  }
  return true
}

/** A group PATCH: its document changed by the operations not about members, and the member plan of those that are. */
export function applyGroupPatch (document: ScimDocument, operations: readonly PatchOperation[], notes: DialectNotes): { document: ScimDocument, members: MemberPlan } {
  const plan: MemberPlan = { add: new Set(), remove: new Set() }
  const others = operations.filter((operation) => !applyMemberOperation(operation, plan, notes))
  return { document: applyPatch('Group', document, others, notes), members: plan }
}
