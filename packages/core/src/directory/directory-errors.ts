/**
 * What a directory store and the SCIM filter parser refuse, as typed errors a SCIM endpoint
 * renders (RFC 7644 §3.12: `status` and `scimType`). Each is a {@link CoreError} subclass, told
 * apart with `instanceof`, never by its message; messages name an attribute or a position, never a
 * submitted value (a filter may carry an e-mail address) and never a connection string.
 */
import { CoreError } from '../errors.js'

/**
 * A SCIM filter or attribute path that cannot be used (RFC 7644 §3.4.2.2): 400 `invalidFilter`,
 * or `invalidPath` for a PATCH path. Nothing of it is ever matched partially.
 *
 * @public @experimental
 */
export class ScimFilterError extends CoreError {
  readonly status = 400
  readonly scimType: 'invalidFilter' | 'invalidPath'
  /** Why: `syntax`, `too_long`, `too_deep`, `too_complex`, `unknown_attribute`, `type_mismatch`. */
  readonly reason: 'syntax' | 'too_long' | 'too_deep' | 'too_complex' | 'unknown_attribute' | 'type_mismatch'
  /** The character position (0-based) the parser stopped at. */
  readonly position: number

  constructor (reason: ScimFilterError['reason'], position: number, detail: string, scimType: 'invalidFilter' | 'invalidPath' = 'invalidFilter') {
    super(`The ${scimType === 'invalidPath' ? 'path' : 'filter'} is not valid at character ${position}: ${detail}.`)
    this.name = 'ScimFilterError'
    this.reason = reason
    this.position = position
    this.scimType = scimType
  }
}

/**
 * A write would break a uniqueness rule within the connection (409 `uniqueness`): `userName`
 * (case-insensitive), a user's `externalId`, an identity already linked to another user, or a
 * third active connection token (`activeTokens`). Never says which resource holds the value,
 * and is never raised because of another connection's resources.
 *
 * @public @experimental
 */
export class DirectoryConflictError extends CoreError {
  readonly status = 409
  readonly scimType = 'uniqueness'
  readonly attribute: 'userName' | 'externalId' | 'identity' | 'activeTokens'

  constructor (attribute: DirectoryConflictError['attribute'], options?: ErrorOptions) {
    super(attribute === 'activeTokens'
      ? 'The connection already has the maximum number of active tokens.'
      : `Another resource of this connection has the same ${attribute}.`, options)
    this.name = 'DirectoryConflictError'
    this.attribute = attribute
  }
}

/**
 * A value the store cannot hold (400 `invalidValue`): an empty `userName` or `displayName`, a
 * group member that is not a user of the same connection, a paging parameter out of range.
 *
 * @public @experimental
 */
export class DirectoryInvalidValueError extends CoreError {
  readonly status = 400
  readonly scimType = 'invalidValue'
  readonly attribute: string

  constructor (attribute: string, detail: string) {
    super(`The value of ${attribute} is not valid: ${detail}.`)
    this.name = 'DirectoryInvalidValueError'
    this.attribute = attribute
  }
}

/**
 * The store cannot answer (its database is unreachable, timed out or refused): a SCIM request
 * answers 503 and changes nothing. `reason` is a failure class, never the driver's message.
 *
 * @public @experimental
 */
export class DirectoryStoreUnavailableError extends CoreError {
  readonly status = 503
  readonly reason: string

  constructor (reason: string, options?: ErrorOptions) {
    super(`The directory store is unavailable (${reason}).`, options)
    this.name = 'DirectoryStoreUnavailableError'
    this.reason = reason
  }
}
