/**
 * Users and groups between the directory store and SCIM JSON (RFC 7643 §4): a stored resource as
 * a canonical document (what PATCH changes) and as the representation answered (with `schemas`,
 * `id`, `meta`; never a password, never the linked identity), and a document as the store's input
 * (the linked identity always carried over: a SCIM change never moves a link). Plain data.
 */
import { SCIM_ENTERPRISE_USER_SCHEMA, SCIM_GROUP_SCHEMA, SCIM_USER_SCHEMA } from '../directory/attributes.js'
import type { DirectoryGroup, DirectoryUser, DirectoryUserInput, ScimAttributes } from '../directory/directory-store.js'
import { type ScimDocument } from './document.js'
import { ScimError } from './scim-errors.js'

/** The canonical document of a stored user (what a PATCH applies to). */
export function userDocumentOf (user: DirectoryUser): ScimDocument {
  return structuredClone({
    ...user.attributes,
    userName: user.userName,
    ...(user.externalId === undefined ? {} : { externalId: user.externalId }),
    active: user.active
  })
}

function optionalText (document: ScimDocument, name: string): string | undefined {
  const value = document[name]
  if (value === undefined) return undefined
  if (typeof value !== 'string' || value === '') throw new ScimError(400, `The value of ${name} must be a non-empty string.`, 'invalidValue')
  return value
}

/**
 * The store input of a user document. `userName` is required; `active` absent means true (RFC 7643
 * §4.1.1 leaves the default to the service provider); `current`'s linked identity is kept.
 */
export function userInputOf (document: ScimDocument, current?: DirectoryUser): DirectoryUserInput {
  const { userName, externalId, active, ...attributes } = document
  const name = optionalText({ userName }, 'userName')
  if (name === undefined) throw new ScimError(400, 'userName is required.', 'invalidValue')
  if (active !== undefined && typeof active !== 'boolean') throw new ScimError(400, 'The value of active must be true or false.', 'invalidValue')
  const external = optionalText({ externalId }, 'externalId')
  return {
    userName: name,
    ...(external === undefined ? {} : { externalId: external }),
    active: active ?? true,
    attributes: attributes as ScimAttributes,
    ...(current?.identity === undefined ? {} : { identity: current.identity })
  }
}

/** The canonical document of a stored group (its members are kept apart). */
export function groupDocumentOf (group: DirectoryGroup): ScimDocument {
  return structuredClone({ ...group.attributes, displayName: group.displayName, ...(group.externalId === undefined ? {} : { externalId: group.externalId }) })
}

/** A group document's store fields. */
export function groupFieldsOf (document: ScimDocument): { displayName: string, externalId?: string, attributes: ScimAttributes } {
  const { displayName, externalId, ...attributes } = document
  const name = optionalText({ displayName }, 'displayName')
  if (name === undefined) throw new ScimError(400, 'displayName is required.', 'invalidValue')
  const external = optionalText({ externalId }, 'externalId')
  return { displayName: name, ...(external === undefined ? {} : { externalId: external }), attributes: attributes as ScimAttributes }
}

function meta (resourceType: 'User' | 'Group', resource: { created: string, lastModified: string }, location: string): Record<string, unknown> {
  return { resourceType, created: resource.created, lastModified: resource.lastModified, location }
}

/** A user as answered. `base`: the connection's base URL (`https://app.example/scim/v2/<connection>`). */
export function userResourceOf (user: DirectoryUser, base: string): Record<string, unknown> {
  const hasExtension = user.attributes[SCIM_ENTERPRISE_USER_SCHEMA] !== undefined
  return {
    schemas: hasExtension ? [SCIM_USER_SCHEMA, SCIM_ENTERPRISE_USER_SCHEMA] : [SCIM_USER_SCHEMA],
    id: user.id,
    ...(user.externalId === undefined ? {} : { externalId: user.externalId }),
    userName: user.userName,
    active: user.active,
    ...user.attributes,
    meta: meta('User', user, `${base}/Users/${user.id}`)
  }
}

/** A group as answered, with its members (user ids) unless left out. */
export function groupResourceOf (group: DirectoryGroup, members: readonly string[] | undefined, base: string): Record<string, unknown> {
  return {
    schemas: [SCIM_GROUP_SCHEMA],
    id: group.id,
    ...(group.externalId === undefined ? {} : { externalId: group.externalId }),
    displayName: group.displayName,
    ...group.attributes,
    ...(members === undefined ? {} : { members: members.map((value) => ({ value, $ref: `${base}/Users/${value}`, type: 'User' })) }),
    meta: meta('Group', group, `${base}/Groups/${group.id}`)
  }
}
