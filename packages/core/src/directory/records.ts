/**
 * What every core store does to a record before writing it, in one place: the input checks
 * (a store refuses what no SCIM endpoint should have let through, and never holds a password),
 * new ids, timestamps, "did anything change", and paging arithmetic.
 */
import { randomUUID } from 'node:crypto'
import { DirectoryInvalidValueError } from './directory-errors.js'
import type { ConnectionTokenInput, DirectoryGroup, DirectoryGroupChange, DirectoryGroupInput, DirectoryQuery, DirectoryUserInput, LinkedIdentity, ScimAttributes } from './directory-store.js'

/** Longest connection name, id, userName, externalId or displayName a store accepts. */
export const MAX_KEY_LENGTH = 1024

/** A new resource id: a random UUID, unguessable, never reused. */
export const newId = (): string => randomUUID()

export const isoOf = (ms: number): string => new Date(ms).toISOString()

function checkText (value: unknown, attribute: string, optional = false): void {
  if (optional && value === undefined) return
  if (typeof value !== 'string' || value.length === 0) throw new DirectoryInvalidValueError(attribute, 'a non-empty string is required')
  if (value.length > MAX_KEY_LENGTH) throw new DirectoryInvalidValueError(attribute, `at most ${MAX_KEY_LENGTH} characters`)
}

export function checkConnection (connection: string): void {
  checkText(connection, 'connection')
}

function checkAttributes (attributes: ScimAttributes): void {
  if (typeof attributes !== 'object' || attributes === null || Array.isArray(attributes)) {
    throw new DirectoryInvalidValueError('attributes', 'a JSON object is required')
  }
  if (Object.keys(attributes).some((key) => key.toLowerCase() === 'password')) {
    throw new DirectoryInvalidValueError('password', 'a directory store never holds a password')
  }
}

function checkIdentity (identity: LinkedIdentity | undefined): void {
  if (identity === undefined) return
  checkText(identity.scheme, 'identity.scheme')
  checkText(identity.issuer, 'identity.issuer')
  checkText(identity.subject, 'identity.subject')
}

export function checkUserInput (input: DirectoryUserInput): void {
  checkText(input.userName, 'userName')
  checkText(input.externalId, 'externalId', true)
  if (typeof input.active !== 'boolean') throw new DirectoryInvalidValueError('active', 'true or false is required')
  checkAttributes(input.attributes)
  checkIdentity(input.identity)
}

export function checkGroupInput (input: DirectoryGroupChange): void {
  checkText(input.displayName, 'displayName')
  checkText(input.externalId, 'externalId', true)
  checkAttributes(input.attributes)
  for (const list of [input.members?.replace, input.members?.add, input.members?.remove]) {
    for (const member of list ?? []) checkText(member, 'members')
  }
}

export function checkTokenInput (token: ConnectionTokenInput): void {
  checkText(token.id, 'id')
  checkText(token.digest, 'digest')
  if (token.expires !== undefined && Number.isNaN(Date.parse(token.expires))) throw new DirectoryInvalidValueError('expires', 'an ISO 8601 date-time is required')
}

/** JSON with object keys sorted: equal for equal documents whatever their key order. */
export function stableJson (value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return item
    return Object.fromEntries(Object.entries(item).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0))
  })
}

/** The stored fields of a user input (optional ones absent, not undefined), for comparison and writing. */
export function userFields (input: DirectoryUserInput): DirectoryUserInput {
  return {
    ...(input.externalId === undefined ? {} : { externalId: input.externalId }),
    userName: input.userName,
    active: input.active,
    attributes: input.attributes,
    ...(input.identity === undefined ? {} : { identity: { scheme: input.identity.scheme, issuer: input.identity.issuer, subject: input.identity.subject } })
  }
}

/** A new group of `connection` created at `nowMs`: a fresh id, version 1 (members are kept apart). */
export function newGroupRecord (connection: string, input: DirectoryGroupInput, nowMs: number): DirectoryGroup {
  return {
    connection,
    id: newId(),
    ...(input.externalId === undefined ? {} : { externalId: input.externalId }),
    displayName: input.displayName,
    attributes: input.attributes,
    created: isoOf(nowMs),
    lastModified: isoOf(nowMs),
    version: 1
  }
}

/** A later lastModified than `previous`, never earlier (a clock set back keeps the order of changes). */
export const modifiedAt = (now: number, previous: number): number => Math.max(now, previous)

/**
 * The page a query asks for (RFC 7644 §3.4.2.4): `startIndex` below 1 counts as 1, a negative
 * `count` as 0; `count` is capped by the caller (the SCIM endpoint's maximum).
 */
export function pageOf (query: DirectoryQuery): { offset: number, limit: number, startIndex: number } {
  if (!Number.isSafeInteger(query.startIndex) || !Number.isSafeInteger(query.count)) {
    throw new DirectoryInvalidValueError(Number.isSafeInteger(query.startIndex) ? 'count' : 'startIndex', 'an integer is required')
  }
  const startIndex = Math.max(1, query.startIndex)
  return { offset: startIndex - 1, limit: Math.max(0, query.count), startIndex }
}

/** The members a group has after `change`, from `current`, and what was added and removed. */
export function applyMembers (current: readonly string[], change: DirectoryGroupChange['members']): { members: string[], added: string[], removed: string[] } {
  if (change === undefined) return { members: [...current], added: [], removed: [] }
  const next = new Set(change.replace ?? current)
  for (const member of change.add ?? []) next.add(member)
  for (const member of change.remove ?? []) next.delete(member)
  const before = new Set(current)
  return {
    members: [...next].sort(),
    added: [...next].filter((member) => !before.has(member)).sort(),
    removed: current.filter((member) => !next.has(member)).sort()
  }
}
