/**
 * SCIM error responses (RFC 7644 §3.12): `application/scim+json` with `status` (a string) and,
 * for 400 and 409, a `scimType`. Every refusal of a SCIM endpoint is a {@link ScimError}; the
 * directory store's and the filter parser's typed errors map onto it. A `detail` names an
 * attribute or a rule, never a submitted value and never another connection's data.
 */
import { CoreError } from '../errors.js'
import { DirectoryConflictError, DirectoryInvalidValueError, DirectoryStoreUnavailableError, ScimFilterError } from '../directory/directory-errors.js'
import { StateStoreUnavailableError, StateStoreFullError } from '../state/state-store.js'

export const SCIM_ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error'
export const SCIM_CONTENT_TYPE = 'application/scim+json; charset=utf-8'

/** RFC 7644 Table 9, plus what this service provider uses. */
export type ScimType = 'invalidFilter' | 'tooMany' | 'uniqueness' | 'mutability' | 'invalidSyntax' | 'invalidPath' | 'noTarget' | 'invalidValue' | 'invalidVers' | 'sensitive'

/** A SCIM refusal: its status, `scimType` and a safe detail. */
export class ScimError extends CoreError {
  readonly status: number
  readonly scimType?: ScimType
  /** Extra response headers (`Retry-After`, `Allow`, `WWW-Authenticate`). */
  readonly headers: Readonly<Record<string, string>>

  constructor (status: number, detail: string, scimType?: ScimType, headers: Readonly<Record<string, string>> = {}) {
    super(detail)
    this.name = 'ScimError'
    this.status = status
    if (scimType !== undefined) this.scimType = scimType
    this.headers = headers
  }
}

/** The same 401 for every unauthenticated request (no header, Basic, a session, another connection's or a revoked token, an unknown connection). */
export const unauthenticated = (): ScimError =>
  new ScimError(401, 'A valid connection token is required (Authorization: Bearer).', undefined, { 'www-authenticate': 'Bearer realm="scim"' })

export const notFound = (resourceType: string): ScimError => new ScimError(404, `${resourceType} not found.`)

/** The SCIM error body. */
export function scimErrorBody (error: ScimError): Record<string, unknown> {
  return { schemas: [SCIM_ERROR_SCHEMA], status: String(error.status), ...(error.scimType === undefined ? {} : { scimType: error.scimType }), detail: error.message }
}

/** Any error a SCIM handler met, as a {@link ScimError}: the store's and the parser's typed errors keep their meaning, anything else is a generic 500. */
export function toScimError (error: unknown): ScimError {
  if (error instanceof ScimError) return error
  if (error instanceof ScimFilterError) return new ScimError(400, error.message, error.scimType)
  if (error instanceof DirectoryConflictError) return new ScimError(409, error.message, 'uniqueness')
  if (error instanceof DirectoryInvalidValueError) return new ScimError(400, error.message, 'invalidValue')
  if (error instanceof DirectoryStoreUnavailableError || error instanceof StateStoreUnavailableError || error instanceof StateStoreFullError) {
    return new ScimError(503, 'The service is unavailable; nothing was changed. Try again later.', undefined, { 'retry-after': '5' })
  }
  return new ScimError(500, 'The request could not be processed.')
}
