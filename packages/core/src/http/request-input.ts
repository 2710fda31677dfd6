/**
 * Reading request input the same way everywhere: a single-valued query or form field (a repeated
 * name is refused, not resolved), and the one return-URL rule with its one 400 answer, shared by
 * login, logout, the external challenge and the provider callbacks.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { isLocalUrl } from './local-url.js'
import { messageOf } from '../errors.js'
import { sendError } from './responses.js'

/** Reads an optional single-valued query or form field, with case-insensitive name matching. */
export function singleValue (source: unknown, name: string): string | undefined | null {
  if (source === null || typeof source !== 'object') return undefined
  const lower = name.toLowerCase()
  let found: unknown
  for (const [key, value] of Object.entries(source)) {
    if (key.toLowerCase() !== lower) continue
    if (found !== undefined) return null
    found = value
  }
  if (found === undefined) return undefined
  return typeof found === 'string' ? found : null
}

/** A return URL given more than once (`null` from {@link singleValue}) or not local. Absent is fine. */
export function isRejectedReturnUrl (value: string | null | undefined): boolean {
  return value === null || (value !== undefined && !isLocalUrl(value))
}

/** The safe 400 answer to a rejected return URL: no redirect, the value never echoed. */
export function sendReturnUrlRejected (request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendError(request, reply, 400, { code: 'APP_ERR_RETURN_URL_INVALID', detail: messageOf('APP_ERR_RETURN_URL_INVALID') })
}
