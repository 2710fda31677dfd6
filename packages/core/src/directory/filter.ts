/**
 * A parsed SCIM filter (RFC 7644 §3.4.2.2): what the core hands a directory store instead of the
 * filter string. Plain data (it survives `JSON.stringify`), every attribute canonical and known
 * (attributes.ts), every value checked against its attribute's type by the parser
 * (filter-parser.ts): a store never parses, never meets an unknown attribute, and a `dateTime`
 * value is always an ISO 8601 UTC string with milliseconds.
 */

/** @public @experimental */
export type ScimCompareOperator = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le'

/** A literal a filter compares with (`dateTime` values as ISO 8601 UTC strings). @public @experimental */
export type ScimFilterValue = string | number | boolean | null

/**
 * A parsed filter. `and`/`or` hold two or more operands (a chain is one node, so a long chain is
 * no deep tree); `valuePath` is `emails[type eq "work"]`: some value of the multi-valued
 * `attribute` satisfies `filter`, whose attributes are that attribute's sub-attributes
 * (`emails.type`). A comparison on a complex attribute names its `value` sub-attribute
 * (`emails eq "a@example.com"` is `emails.value eq ...`).
 *
 * @public @experimental
 */
export type ScimFilter =
  | { readonly op: 'and' | 'or', readonly filters: readonly ScimFilter[] }
  | { readonly op: 'not', readonly filter: ScimFilter }
  | { readonly op: 'pr', readonly attribute: string }
  | { readonly op: ScimCompareOperator, readonly attribute: string, readonly value: ScimFilterValue }
  | { readonly op: 'valuePath', readonly attribute: string, readonly filter: ScimFilter }

/**
 * A parsed PATCH path (RFC 7644 §3.5.2): `attribute` (`emails`, `name.familyName`), optionally
 * narrowed to the values matching `filter` (`emails[type eq "work"]`) and then to one of their
 * sub-attributes (`emails[type eq "work"].value`: `subAttribute` is `emails.value`).
 *
 * @public @experimental
 */
export interface ScimPath {
  readonly attribute: string
  readonly filter?: ScimFilter
  readonly subAttribute?: string
}

/**
 * The bounds of a filter (documented in docs/provisioning.md): longer, deeper or with more
 * comparisons is refused with `invalidFilter` before anything is matched.
 *
 * @public @experimental
 */
export const SCIM_FILTER_LIMITS = Object.freeze({
  /** Characters of the filter string. */
  maxLength: 1024,
  /** Nesting of parentheses, `not` and value paths. */
  maxDepth: 8,
  /** Comparisons and presence tests. */
  maxTerms: 32
})

/** The attributes a filter names (each comparison's, each value path's and its filter's). @public @experimental */
export function filterAttributes (filter: ScimFilter): string[] {
  switch (filter.op) {
    case 'and':
    case 'or': return filter.filters.flatMap(filterAttributes)
    case 'not': return filterAttributes(filter.filter)
    case 'valuePath': return [filter.attribute, ...filterAttributes(filter.filter)]
    default: return [filter.attribute]
  }
}
