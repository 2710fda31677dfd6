/**
 * How a store finds the candidates of a listing without reading the whole connection: the
 * filter's top-level conjuncts are matched against the indexes every core store keeps
 * (id, userName, externalId, a group's displayName; active with lastModified), and the rest of the
 * filter is confirmed on the few candidates by filter-evaluation.ts.
 *
 * - `keys`: an `eq` on a key attribute (or an `or` of them on one attribute): the index.
 * - `modified`: `active eq <bool>` and/or bounds on `meta.lastModified` (Entra's
 *   `active eq true and meta.lastModified ge "..."`): the (active, lastModified) index.
 * - `all`: no filter. `scan`: nothing indexable; the connection's resources are read in pages.
 *
 * `exact` when the access path is the whole filter: the store may count and page in the index
 * alone, with no evaluation.
 */
import { foldCase, type DirectoryResourceType } from './attributes.js'
import { filterAttributes, type ScimFilter } from './filter.js'

/** A key attribute of a resource type: looked up in an index. Case-insensitive ones are folded. */
export type KeyAttribute = 'id' | 'userName' | 'externalId' | 'displayName'

const KEYS: Readonly<Record<DirectoryResourceType, Readonly<Record<string, { key: KeyAttribute, fold: boolean }>>>> = {
  User: { id: { key: 'id', fold: false }, userName: { key: 'userName', fold: true }, externalId: { key: 'externalId', fold: false } },
  Group: { id: { key: 'id', fold: false }, displayName: { key: 'displayName', fold: true }, externalId: { key: 'externalId', fold: false } }
}

/** A bound on lastModified, in epoch milliseconds. */
export interface Bound {
  readonly ms: number
  readonly inclusive: boolean
}

export type AccessPath =
  | { readonly kind: 'all' }
  | { readonly kind: 'scan' }
  /** `values` as stored in the index: folded for a case-insensitive attribute. */
  | { readonly kind: 'keys', readonly key: KeyAttribute, readonly values: readonly string[] }
  | { readonly kind: 'modified', readonly active?: boolean, readonly from?: Bound, readonly to?: Bound }

export interface QueryPlan {
  readonly path: AccessPath
  /** The path is the whole filter: no evaluation needed. */
  readonly exact: boolean
  /** The filter names a group's members: the evaluation needs them. */
  readonly needsMembers: boolean
}

/** The key look-up one conjunct is, if it is one. */
function keysOf (resourceType: DirectoryResourceType, filter: ScimFilter): { key: KeyAttribute, values: string[] } | undefined {
  const operands = filter.op === 'or' ? filter.filters : [filter]
  let key: { key: KeyAttribute, fold: boolean } | undefined
  const values: string[] = []
  for (const operand of operands) {
    if (operand.op !== 'eq' || typeof operand.value !== 'string') return undefined
    const candidate = KEYS[resourceType][operand.attribute]
    if (candidate === undefined || (key !== undefined && key.key !== candidate.key)) return undefined
    key = candidate
    values.push(candidate.fold ? foldCase(operand.value) : operand.value)
  }
  return key === undefined ? undefined : { key: key.key, values: [...new Set(values)] }
}

interface Modified { active?: boolean, from?: Bound, to?: Bound }

/** Narrows `modified` by one conjunct; false when the conjunct is not an active test or a lastModified bound. */
function narrow (modified: Modified, filter: ScimFilter, resourceType: DirectoryResourceType): boolean {
  if (resourceType === 'User' && filter.op === 'eq' && filter.attribute === 'active' && typeof filter.value === 'boolean') {
    if (modified.active !== undefined && modified.active !== filter.value) return false
    modified.active = filter.value
    return true
  }
  if (!('value' in filter) || filter.attribute !== 'meta.lastModified' || typeof filter.value !== 'string') return false
  const bound = { ms: Date.parse(filter.value), inclusive: filter.op === 'ge' || filter.op === 'le' }
  if (filter.op === 'ge' || filter.op === 'gt') {
    if (modified.from === undefined || bound.ms > modified.from.ms || (bound.ms === modified.from.ms && !bound.inclusive)) modified.from = bound
    return true
  }
  if (filter.op === 'le' || filter.op === 'lt') {
    if (modified.to === undefined || bound.ms < modified.to.ms || (bound.ms === modified.to.ms && !bound.inclusive)) modified.to = bound
    return true
  }
  return false
}

/** The plan of a listing of `resourceType` with `filter`. */
export function planQuery (resourceType: DirectoryResourceType, filter: ScimFilter | undefined): QueryPlan {
  if (filter === undefined) return { path: { kind: 'all' }, exact: true, needsMembers: false }
  const needsMembers = resourceType === 'Group' && filterAttributes(filter).some((name) => name === 'members' || name === 'members.value')
  const conjuncts = filter.op === 'and' ? filter.filters : [filter]
  for (const conjunct of conjuncts) {
    const keys = keysOf(resourceType, conjunct)
    if (keys !== undefined) return { path: { kind: 'keys', ...keys }, exact: conjuncts.length === 1, needsMembers }
  }
  const modified: Modified = {}
  let consumed = 0
  for (const conjunct of conjuncts) if (narrow(modified, conjunct, resourceType)) consumed++
  if (consumed === 0) return { path: { kind: 'scan' }, exact: false, needsMembers }
  return { path: { kind: 'modified', ...modified }, exact: consumed === conjuncts.length, needsMembers }
}
