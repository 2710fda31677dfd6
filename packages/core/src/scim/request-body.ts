/**
 * A SCIM request body (RFC 7644 §3.1, §8.1): `application/scim+json` or `application/json`, at
 * most {@link SCIM_BODY_LIMITS}`.maxBytes` bytes, valid JSON whose top level is an object, nested
 * no deeper than `maxDepth`, and with no `__proto__`, `constructor` or `prototype` key anywhere (a
 * body is never merged into an object whose prototype it could reach, but such a key is never a
 * SCIM attribute either: refused, not dropped). Plain inputs.
 */
import { ScimError } from './scim-errors.js'

/** The documented bounds of a SCIM request (docs/provisioning.md). @public @experimental */
export const SCIM_BODY_LIMITS = Object.freeze({
  /** Bytes of a request body; larger: 413. */
  maxBytes: 256 * 1024,
  /** Nesting of objects and arrays; deeper: 400 invalidSyntax. */
  maxDepth: 8,
  /** Operations of one PATCH; more: 400 tooMany... (RFC 7644 names no type; invalidValue). */
  maxOperations: 100,
  /** Resources of one list page (`count` above it is lowered to it). */
  maxResults: 200
})

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype'])

/** The media types a SCIM body may have. */
export function isScimMediaType (contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';', 1)[0]?.trim().toLowerCase()
  return type === 'application/scim+json' || type === 'application/json'
}

function checkNode (value: unknown, depth: number): void {
  if (typeof value !== 'object' || value === null) return
  if (depth > SCIM_BODY_LIMITS.maxDepth) throw new ScimError(400, `The request body nests deeper than ${SCIM_BODY_LIMITS.maxDepth} levels.`, 'invalidSyntax')
  if (Array.isArray(value)) {
    for (const item of value) checkNode(item, depth + 1)
    return
  }
  for (const key of Object.keys(value)) {
    if (FORBIDDEN_KEYS.has(key)) throw new ScimError(400, 'The request body holds a reserved key (__proto__, constructor or prototype).', 'invalidSyntax')
    checkNode((value as Record<string, unknown>)[key], depth + 1)
  }
}

/** The parsed body of a SCIM request: a JSON object within the limits, or a {@link ScimError}. */
export function parseScimBody (text: string): Record<string, unknown> {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new ScimError(400, 'The request body is not valid JSON.', 'invalidSyntax')
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ScimError(400, 'The request body must be a JSON object.', 'invalidSyntax')
  checkNode(value, 1)
  return value as Record<string, unknown>
}
