/**
 * The SCIM attributes a directory store supports (RFC 7643 §4.1 User, §4.2 Group, §4.3 the
 * enterprise extension), by resource type: their canonical names, types and case rules. The
 * filter parser (filter-parser.ts) refuses any attribute not listed here, so a store only ever
 * receives filters on these; filter-evaluation.ts reads their values from a stored record.
 *
 * A canonical name is the attribute's own spelling (`userName`), a sub-attribute's with a dot
 * (`name.familyName`, `meta.lastModified`), an extension attribute's behind its schema URN
 * (`urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value`).
 */

/** RFC 7643 §2.3 data types (`binary` is not filterable here, so not listed). @public @experimental */
export type ScimAttributeType = 'string' | 'boolean' | 'decimal' | 'integer' | 'dateTime' | 'reference' | 'complex'

/**
 * One attribute a filter may name.
 *
 * @public @experimental
 */
export interface ScimAttributeDefinition {
  /** The canonical name (see the module comment). */
  readonly name: string
  readonly type: ScimAttributeType
  /** RFC 7643 §2.2 `caseExact`: false compares strings case-insensitively. */
  readonly caseExact: boolean
  /** Multi-valued (`emails`) or a sub-attribute of one (`emails.value`): any value may match. */
  readonly multiValued: boolean
}

/** The SCIM resource types a directory holds. @public @experimental */
export type DirectoryResourceType = 'User' | 'Group'

/** @public @experimental */
export const SCIM_USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User'
/** @public @experimental */
export const SCIM_GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group'
/** @public @experimental */
export const SCIM_ENTERPRISE_USER_SCHEMA = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'

type Row = readonly [name: string, type: ScimAttributeType, caseExact?: boolean, multiValued?: boolean]

const multiValuedComplex = (name: string, subs: readonly string[]): Row[] => [
  [name, 'complex', false, true],
  ...subs.map((sub): Row => [`${name}.${sub}`, sub === 'primary' ? 'boolean' : sub === '$ref' ? 'reference' : 'string', false, true])
]

const META: Row[] = [
  ['meta', 'complex'],
  ['meta.created', 'dateTime'],
  ['meta.lastModified', 'dateTime'],
  ['meta.resourceType', 'string', true],
  ['meta.location', 'reference', true],
  ['meta.version', 'string', true]
]

const ENTERPRISE: Row[] = [
  ['employeeNumber', 'string'],
  ['costCenter', 'string'],
  ['organization', 'string'],
  ['division', 'string'],
  ['department', 'string'],
  ['manager', 'complex'],
  ['manager.value', 'string', true],
  ['manager.displayName', 'string']
].map(([name, ...rest]) => [`${SCIM_ENTERPRISE_USER_SCHEMA}:${name as string}`, ...rest] as unknown as Row)

const USER: Row[] = [
  ['id', 'string', true],
  ['externalId', 'string', true],
  ['userName', 'string'],
  ['name', 'complex'],
  ...['formatted', 'familyName', 'givenName', 'middleName', 'honorificPrefix', 'honorificSuffix'].map((sub): Row => [`name.${sub}`, 'string']),
  ['displayName', 'string'],
  ['nickName', 'string'],
  ['profileUrl', 'reference'],
  ['title', 'string'],
  ['userType', 'string'],
  ['preferredLanguage', 'string'],
  ['locale', 'string'],
  ['timezone', 'string'],
  ['active', 'boolean'],
  ...multiValuedComplex('emails', ['value', 'display', 'type', 'primary']),
  ...multiValuedComplex('phoneNumbers', ['value', 'display', 'type', 'primary']),
  ...multiValuedComplex('ims', ['value', 'display', 'type', 'primary']),
  ...multiValuedComplex('photos', ['value', 'display', 'type', 'primary']),
  ...multiValuedComplex('roles', ['value', 'display', 'type', 'primary']),
  ...multiValuedComplex('entitlements', ['value', 'display', 'type', 'primary']),
  ...multiValuedComplex('addresses', ['formatted', 'streetAddress', 'locality', 'region', 'postalCode', 'country', 'type', 'primary']),
  ...META,
  ...ENTERPRISE
]

const GROUP: Row[] = [
  ['id', 'string', true],
  ['externalId', 'string', true],
  ['displayName', 'string'],
  // members.value is a user id: compared exactly, as ids are.
  ['members', 'complex', false, true],
  ['members.value', 'string', true, true],
  ...META
]

function tableOf (rows: readonly Row[]): ReadonlyMap<string, ScimAttributeDefinition> {
  return new Map(rows.map(([name, type, caseExact = false, multiValued = false]) =>
    [name.toLowerCase(), Object.freeze({ name, type, caseExact, multiValued })]))
}

const TABLES: Readonly<Record<DirectoryResourceType, ReadonlyMap<string, ScimAttributeDefinition>>> = {
  User: tableOf(USER),
  Group: tableOf(GROUP)
}

/** The schema URNs whose attributes a path may be prefixed with, by resource type. */
export const RESOURCE_SCHEMAS: Readonly<Record<DirectoryResourceType, readonly string[]>> = {
  User: [SCIM_USER_SCHEMA, SCIM_ENTERPRISE_USER_SCHEMA],
  Group: [SCIM_GROUP_SCHEMA]
}

/**
 * The attribute named `name` (any case: RFC 7644 §3.4.2.2 makes names case-insensitive) of
 * `resourceType`, or undefined when the store does not support it. `name` is canonical but for
 * case: a core attribute without its URN, an extension attribute with it.
 *
 * @public @experimental
 */
export function scimAttribute (resourceType: DirectoryResourceType, name: string): ScimAttributeDefinition | undefined {
  return TABLES[resourceType].get(name.toLowerCase())
}

/** Every attribute of `resourceType`, in table order. @public @experimental */
export function scimAttributes (resourceType: DirectoryResourceType): readonly ScimAttributeDefinition[] {
  return [...TABLES[resourceType].values()]
}

/**
 * The form compared and indexed for a case-insensitive string (`userName`, a group's
 * `displayName`): NFC, then lower case. One function, so that a store's unique index, its
 * look-ups and the filter evaluation agree.
 *
 * @public @experimental
 */
export function foldCase (value: string): string {
  return value.normalize('NFC').toLowerCase()
}
