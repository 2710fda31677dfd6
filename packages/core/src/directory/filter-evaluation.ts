/**
 * A parsed filter evaluated against one stored resource (RFC 7644 §3.4.2.2 semantics), the same
 * code in every store of the core so that they agree: what an index narrowed down is confirmed
 * here, and a filter no index serves is answered here.
 *
 * - A string attribute with `caseExact` false compares {@link foldCase}d; `gt`/`ge`/`lt`/`le`
 *   on strings compare code units; a `dateTime` compares as an instant; numbers as numbers.
 * - A multi-valued attribute (`emails.value`) matches when any of its values does; `ne` is the
 *   negation of `eq` (no value equals); an absent attribute matches only `ne`, `eq null` and
 *   `not (...)`.
 * - `pr`: a value that is not null, not an empty string, not an empty list or object.
 */
import { foldCase, scimAttribute, SCIM_ENTERPRISE_USER_SCHEMA, type DirectoryResourceType, type ScimAttributeDefinition } from './attributes.js'
import type { DirectoryGroup, DirectoryUser } from './directory-store.js'
import type { ScimCompareOperator, ScimFilter, ScimFilterValue } from './filter.js'

/** The values of an attribute (a canonical name) on the resource being evaluated, flattened. */
type Lookup = (attribute: string) => unknown[]

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** `value` as a list of its values: one for a single value, each for a list, none for absent. */
function valuesOf (value: unknown): unknown[] {
  if (value === undefined || value === null) return []
  return Array.isArray(value) ? value.filter((item) => item !== undefined && item !== null) : [value]
}

/** The values at `path` (`name` or `name.sub`) of a SCIM JSON object. */
function pathValues (document: Readonly<Record<string, unknown>>, path: string): unknown[] {
  const dot = path.indexOf('.')
  if (dot === -1) return valuesOf(document[path])
  const sub = path.slice(dot + 1)
  return valuesOf(document[path.slice(0, dot)]).flatMap((item) => isObject(item) ? valuesOf(item[sub]) : [])
}

/** The values of a stored attribute (`attributes`), extension attributes under their URN. */
function documentValues (attributes: Readonly<Record<string, unknown>>, name: string): unknown[] {
  const prefix = `${SCIM_ENTERPRISE_USER_SCHEMA}:`
  if (!name.startsWith(prefix)) return pathValues(attributes, name)
  const extension = attributes[SCIM_ENTERPRISE_USER_SCHEMA]
  return isObject(extension) ? pathValues(extension, name.slice(prefix.length)) : []
}

function metaValues (resource: DirectoryUser | DirectoryGroup, resourceType: DirectoryResourceType, name: string): unknown[] | undefined {
  switch (name) {
    case 'meta': return [{ resourceType }]
    case 'meta.created': return [resource.created]
    case 'meta.lastModified': return [resource.lastModified]
    case 'meta.resourceType': return [resourceType]
    case 'meta.version': return [`W/"${resource.version}"`]
    case 'meta.location': return []
    default: return undefined
  }
}

/** What a filter reads of a user. */
export function userLookup (user: DirectoryUser): Lookup {
  return (name) => {
    switch (name) {
      case 'id': return [user.id]
      case 'externalId': return valuesOf(user.externalId)
      case 'userName': return [user.userName]
      case 'active': return [user.active]
      default: return metaValues(user, 'User', name) ?? documentValues(user.attributes, name)
    }
  }
}

/** What a filter reads of a group; `members` (user ids) only when the filter names them. */
export function groupLookup (group: DirectoryGroup, members: readonly string[] = []): Lookup {
  return (name) => {
    switch (name) {
      case 'id': return [group.id]
      case 'externalId': return valuesOf(group.externalId)
      case 'displayName': return [group.displayName]
      case 'members': return members.map((value) => ({ value }))
      case 'members.value': return [...members]
      default: return metaValues(group, 'Group', name) ?? documentValues(group.attributes, name)
    }
  }
}

function isPresent (value: unknown): boolean {
  if (value === '' || value === undefined || value === null) return false
  if (Array.isArray(value)) return value.some(isPresent)
  if (isObject(value)) return Object.values(value).some(isPresent)
  return true
}

function compareScalar (definition: ScimAttributeDefinition, op: ScimCompareOperator, actual: unknown, expected: Exclude<ScimFilterValue, null>): boolean {
  if (definition.type === 'dateTime') {
    const instant = typeof actual === 'string' ? Date.parse(actual) : Number.NaN
    return !Number.isNaN(instant) && order(op, instant, Date.parse(expected as string))
  }
  if (typeof actual !== typeof expected) return false
  if (typeof actual === 'string') {
    const left = definition.caseExact ? actual : foldCase(actual)
    const right = definition.caseExact ? expected as string : foldCase(expected as string)
    switch (op) {
      case 'co': return left.includes(right)
      case 'sw': return left.startsWith(right)
      case 'ew': return left.endsWith(right)
      default: return order(op, left, right)
    }
  }
  return order(op, actual as number | boolean, expected as number | boolean)
}

function order<T extends string | number | boolean> (op: ScimCompareOperator, left: T, right: T): boolean {
  switch (op) {
    case 'eq': return left === right
    case 'gt': return left > right
    case 'ge': return left >= right
    case 'lt': return left < right
    case 'le': return left <= right
    default: return false
  }
}

function compare (definition: ScimAttributeDefinition, op: ScimCompareOperator, values: unknown[], expected: ScimFilterValue): boolean {
  if (expected === null) {
    const present = values.some(isPresent)
    return op === 'eq' ? !present : present
  }
  if (op === 'ne') return !values.some((value) => compareScalar(definition, 'eq', value, expected))
  return values.some((value) => compareScalar(definition, op, value, expected))
}

function evaluate (resourceType: DirectoryResourceType, filter: ScimFilter, lookup: Lookup): boolean {
  switch (filter.op) {
    case 'and': return filter.filters.every((operand) => evaluate(resourceType, operand, lookup))
    case 'or': return filter.filters.some((operand) => evaluate(resourceType, operand, lookup))
    case 'not': return !evaluate(resourceType, filter.filter, lookup)
    case 'pr': return lookup(filter.attribute).some(isPresent)
    case 'valuePath': {
      const prefix = `${filter.attribute}.`
      return lookup(filter.attribute).some((element) => isObject(element) && evaluate(resourceType, filter.filter, (name) =>
        name.startsWith(prefix) ? valuesOf(element[name.slice(prefix.length)]) : []))
    }
    default: {
      const definition = scimAttribute(resourceType, filter.attribute)
      // The parser admits known attributes only; an app's hand-made filter with another matches nothing.
      return definition !== undefined && compare(definition, filter.op, lookup(filter.attribute), filter.value)
    }
  }
}

/** Whether `user` matches `filter`. @public @experimental */
export function userMatches (user: DirectoryUser, filter: ScimFilter): boolean {
  return evaluate('User', filter, userLookup(user))
}

/** Whether `group` (with its member ids, when the filter names `members`) matches `filter`. @public @experimental */
export function groupMatches (group: DirectoryGroup, filter: ScimFilter, members: readonly string[] = []): boolean {
  return evaluate('Group', filter, groupLookup(group, members))
}
