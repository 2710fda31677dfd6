/**
 * What every SCIM resource handler (users-endpoint.ts, groups-endpoint.ts) works with, as plain
 * data and ports: the connection, its store, its base URL, the effects a change has beyond the
 * store (deprovisioning.ts) and the query of a listing (RFC 7644 §3.4.2). No Fastify types.
 */
import type { DirectoryResourceType } from '../directory/attributes.js'
import type { DirectoryStore } from '../directory/directory-store.js'
import { parseScimFilter } from '../directory/filter-parser.js'
import type { ScimFilter } from '../directory/filter.js'
import type { ScimConnection } from './connections.js'
import type { DialectNotes } from './document.js'
import type { DeprovisioningEffects } from './deprovisioning.js'
import type { ProvisioningGrant } from './provisioning-hook.js'
import { attributeListOf, type Projection } from './projection.js'
import { SCIM_BODY_LIMITS } from './request-body.js'
import { ScimError } from './scim-errors.js'

/** One SCIM request's context. */
export interface ScimContext {
  readonly store: DirectoryStore
  readonly connection: ScimConnection
  /** `<origin>/scim/v2/<connection>`: the base of every `location`. */
  readonly base: string
  readonly effects: DeprovisioningEffects
  /** The dialects this request used (document.ts). */
  readonly notes: DialectNotes
  /**
   * Asks the app's provisioning hooks about a grant (provisioning-hook.ts): resolves when allowed,
   * rejects with the SCIM error to answer. Undefined when the app registered none.
   */
  readonly checkGrant?: (grant: ProvisioningGrant) => Promise<void>
}

/** A handler's answer: a status and, but for 204, a SCIM JSON body. */
export interface ScimAnswer {
  readonly status: number
  readonly body?: Record<string, unknown>
}

/** The query string of a SCIM request, as Fastify parsed it. */
export type ScimQuery = Readonly<Record<string, unknown>>

/** A list request's parsed query. */
export interface ListQuery {
  readonly filter?: ScimFilter
  readonly startIndex: number
  readonly count: number
}

/** An integer query parameter (`startIndex`, `count`); absent: `fallback`. */
function integerOf (query: ScimQuery, name: string, fallback: number): number {
  const raw = query[name]
  if (raw === undefined) return fallback
  if (typeof raw !== 'string' || !/^-?\d{1,9}$/.test(raw.trim())) throw new ScimError(400, `${name} must be an integer.`, 'invalidValue')
  return Number(raw.trim())
}

/** `filter`, `startIndex` (below 1: 1) and `count` (negative: 0; above the maximum: the maximum). */
export function listQueryOf (resourceType: DirectoryResourceType, query: ScimQuery): ListQuery {
  const raw = query.filter
  if (raw !== undefined && typeof raw !== 'string') throw new ScimError(400, 'filter must be given once.', 'invalidFilter')
  const filter = raw === undefined ? undefined : parseScimFilter(resourceType, raw)
  return {
    ...(filter === undefined ? {} : { filter }),
    startIndex: Math.max(1, integerOf(query, 'startIndex', 1)),
    count: Math.min(SCIM_BODY_LIMITS.maxResults, Math.max(0, integerOf(query, 'count', SCIM_BODY_LIMITS.maxResults)))
  }
}

/** `attributes` and `excludedAttributes` of a request. */
export function projectionOf (resourceType: DirectoryResourceType, query: ScimQuery): Projection {
  const attributes = attributeListOf(resourceType, query.attributes)
  const excludedAttributes = attributeListOf(resourceType, query.excludedAttributes)
  return { ...(attributes === undefined ? {} : { attributes }), ...(excludedAttributes === undefined ? {} : { excludedAttributes }) }
}

/** The request body, which a create, replace or PATCH must have. */
export function bodyOf (body: Record<string, unknown> | undefined): Record<string, unknown> {
  if (body === undefined) throw new ScimError(400, 'A request body is required.', 'invalidSyntax')
  return body
}
