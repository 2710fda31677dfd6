/**
 * The `/Account/ApiKeys` creation form as the service's request (issue 42, items 3 and 6): the
 * form's fields (`name`, `scopes` as repeated checkboxes, `lifetimeDays`, `owner`) converted from
 * form strings, the page's own fields (the scheme, the anti-forgery token) left out, and every
 * other field passed on unchanged, so the service refuses a body that names an owner, a user id or
 * a tenant as a whole (CVE-2025-61928) and audits it. Plain data, no Fastify types.
 */
import type { CreateFormValues } from '../views/api-keys-page.js'
import type { ApiKeyCreateRequest } from './api-key-service.js'

/** The page's own fields: not part of the key request. */
const PAGE_FIELDS = new Set(['scheme', '__RequestVerificationToken'])

const text = (value: unknown): string => typeof value === 'string' ? value : ''

/** Repeated checkboxes arrive as a list, one as a string, none as nothing. */
const list = (value: unknown): unknown[] => value === undefined ? [] : Array.isArray(value) ? value : [value]

/**
 * The service's request from a form body (or a JSON body). An empty lifetime or owner means the
 * scheme's default; a lifetime that is not a whole number stays a string, which the service
 * refuses naming `lifetimeDays`.
 */
export function createRequestOf (body: unknown): ApiKeyCreateRequest {
  const fields = body !== null && typeof body === 'object' && !Array.isArray(body) ? body as Record<string, unknown> : {}
  const request: Record<string, unknown> = {}
  for (const [field, value] of Object.entries(fields)) {
    if (PAGE_FIELDS.has(field)) continue
    if (field === 'scopes') request.scopes = list(value)
    else if ((field === 'lifetimeDays' || field === 'owner') && value === '') continue
    else if (field === 'lifetimeDays' && typeof value === 'string' && /^\d{1,6}$/.test(value.trim())) request.lifetimeDays = Number(value.trim())
    else request[field] = value
  }
  if (request.scopes === undefined) request.scopes = []
  return request as unknown as ApiKeyCreateRequest
}

/** The values to show again in the form after a refusal. */
export function formValuesOf (body: unknown): CreateFormValues {
  const fields = body !== null && typeof body === 'object' && !Array.isArray(body) ? body as Record<string, unknown> : {}
  return {
    name: text(fields.name).slice(0, 200),
    scopes: list(fields.scopes).filter((scope): scope is string => typeof scope === 'string'),
    lifetimeDays: text(fields.lifetimeDays).slice(0, 12),
    owner: text(fields.owner)
  }
}
