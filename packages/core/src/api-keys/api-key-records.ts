/**
 * What every core API key store checks before writing a record: a store refuses what no service
 * should have let through (an empty scope list, an expiry that is not a date, a digest without its
 * version), whoever calls it.
 */
import { DirectoryInvalidValueError } from '../directory/directory-errors.js'
import { digestVersionOf } from './api-key-digest.js'
import type { ApiKeyInput } from './api-key-store.js'

const MAX_TEXT = 1024

function checkText (value: unknown, attribute: string): void {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_TEXT) throw new DirectoryInvalidValueError(attribute, `a string of 1-${MAX_TEXT} characters is required`)
}

export function checkApiKeyInput (input: ApiKeyInput): void {
  for (const attribute of ['id', 'scheme', 'prefix', 'name', 'digest', 'lastFour'] as const) checkText(input[attribute], attribute)
  if (digestVersionOf(input.digest) === undefined) throw new DirectoryInvalidValueError('digest', 'a versioned digest (v1:...) is required')
  if (!Array.isArray(input.scopes) || input.scopes.length === 0) throw new DirectoryInvalidValueError('scopes', 'at least one scope is required')
  for (const scope of input.scopes) checkText(scope, 'scopes')
  if (Number.isNaN(Date.parse(input.expires))) throw new DirectoryInvalidValueError('expires', 'an ISO 8601 date-time is required')
  if (input.owner.kind === 'tenant') checkText(input.owner.tenant, 'owner.tenant')
  else for (const part of ['scheme', 'issuer', 'subject'] as const) checkText(input.owner.identity[part], `owner.identity.${part}`)
  for (const part of ['scheme', 'issuer', 'subject'] as const) checkText(input.createdBy[part], `createdBy.${part}`)
}
