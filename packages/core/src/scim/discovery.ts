/**
 * The discovery documents of a connection (RFC 7644 §4, RFC 7643 §5 to §7):
 * `ServiceProviderConfig` (PATCH and filtering supported; bulk, sort, ETags and password change
 * not; the one authentication scheme, a bearer connection token), `ResourceTypes` (User with the
 * enterprise extension, Group) and `Schemas` (built from the attribute table the filter parser
 * uses, directory/attributes.ts, so a schema lists exactly what a filter may name). Plain data.
 */
import { scimAttributes, SCIM_ENTERPRISE_USER_SCHEMA, SCIM_GROUP_SCHEMA, SCIM_USER_SCHEMA, type DirectoryResourceType, type ScimAttributeDefinition } from '../directory/attributes.js'
import { SCIM_BODY_LIMITS } from './request-body.js'

export const SCIM_LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse'
const CONFIG_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'
const RESOURCE_TYPE_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType'
const SCHEMA_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Schema'

/** `GET /ServiceProviderConfig`. */
export function serviceProviderConfig (base: string, documentationUri?: string): Record<string, unknown> {
  return {
    schemas: [CONFIG_SCHEMA],
    ...(documentationUri === undefined ? {} : { documentationUri }),
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: SCIM_BODY_LIMITS.maxResults },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [{
      type: 'oauthbearertoken',
      name: 'Connection token',
      description: 'The connection\'s own token, sent as Authorization: Bearer <token>.',
      primary: true
    }],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` }
  }
}

const RESOURCE_TYPES = [
  { id: 'User', name: 'User', endpoint: '/Users', schema: SCIM_USER_SCHEMA, schemaExtensions: [{ schema: SCIM_ENTERPRISE_USER_SCHEMA, required: false }] },
  { id: 'Group', name: 'Group', endpoint: '/Groups', schema: SCIM_GROUP_SCHEMA }
] as const

/** `GET /ResourceTypes` entries. */
export function resourceTypes (base: string): Array<Record<string, unknown>> {
  return RESOURCE_TYPES.map((type) => ({ schemas: [RESOURCE_TYPE_SCHEMA], ...type, meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/${type.id}` } }))
}

const READ_ONLY = new Set(['id', 'meta', 'members.$ref'])

function attributeOf (definition: ScimAttributeDefinition, local: string, subs: readonly ScimAttributeDefinition[]): Record<string, unknown> {
  const name = local.slice(local.lastIndexOf('.') + 1)
  return {
    name,
    type: definition.type,
    multiValued: definition.multiValued && !local.includes('.'),
    required: definition.name === 'userName',
    caseExact: definition.caseExact,
    mutability: READ_ONLY.has(definition.name) || definition.name.startsWith('meta') ? 'readOnly' : 'readWrite',
    returned: 'default',
    uniqueness: name === 'userName' ? 'server' : 'none',
    ...(subs.length === 0 ? {} : { subAttributes: subs.map((sub) => attributeOf(sub, sub.name, [])) })
  }
}

/** The attributes of one schema (core User or Group: names without a URN; the extension: names under it). */
function schemaAttributes (resourceType: DirectoryResourceType, urn: string | undefined): Array<Record<string, unknown>> {
  const prefix = urn === undefined ? '' : `${urn}:`
  const all = scimAttributes(resourceType).filter((definition) => urn === undefined ? !definition.name.startsWith('urn:') : definition.name.startsWith(prefix))
  const local = (definition: ScimAttributeDefinition): string => definition.name.slice(prefix.length)
  return all.filter((definition) => !local(definition).includes('.') && definition.name !== 'id' && definition.name !== 'meta')
    .map((definition) => attributeOf(definition, local(definition), all.filter((sub) => local(sub).startsWith(`${local(definition)}.`))))
}

/** `GET /Schemas` entries: User, the enterprise extension, Group. */
export function schemas (base: string): Array<Record<string, unknown>> {
  const entry = (id: string, name: string, attributes: Array<Record<string, unknown>>): Record<string, unknown> =>
    ({ schemas: [SCHEMA_SCHEMA], id, name, attributes, meta: { resourceType: 'Schema', location: `${base}/Schemas/${id}` } })
  return [
    entry(SCIM_USER_SCHEMA, 'User', schemaAttributes('User', undefined)),
    entry(SCIM_ENTERPRISE_USER_SCHEMA, 'EnterpriseUser', schemaAttributes('User', SCIM_ENTERPRISE_USER_SCHEMA)),
    entry(SCIM_GROUP_SCHEMA, 'Group', schemaAttributes('Group', undefined))
  ]
}

/** A list response (RFC 7644 §3.4.2). */
export function listResponse (resources: ReadonlyArray<Record<string, unknown>>, totalResults: number, startIndex: number): Record<string, unknown> {
  return { schemas: [SCIM_LIST_SCHEMA], totalResults, startIndex, itemsPerPage: resources.length, Resources: resources }
}
