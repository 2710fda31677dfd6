/**
 * `attributes` and `excludedAttributes` (RFC 7644 §3.4.2.5, §3.9): which attributes of a resource
 * are answered. `id` and `schemas` are always returned; an unknown name selects nothing (it is
 * not an error: clients ask for attributes of extensions they assume). Names in any case, with
 * sub-attributes (`name.givenName`) and enterprise attributes by their URN. Plain data.
 */
import { scimAttribute, SCIM_ENTERPRISE_USER_SCHEMA, type DirectoryResourceType } from '../directory/attributes.js'
import { isObject, locationOf } from './document.js'

/** What a request asks to see; undefined members: no restriction. */
export interface Projection {
  readonly attributes?: readonly string[]
  readonly excludedAttributes?: readonly string[]
}

const ALWAYS = new Set(['id', 'schemas'])

/** The canonical names of a comma-separated list (`attributes=userName,emails`), unknown ones dropped. */
export function attributeListOf (resourceType: DirectoryResourceType, text: unknown): string[] | undefined {
  if (typeof text !== 'string' || text.trim() === '') return undefined
  return text.split(',').map((name) => name.trim()).flatMap((name) => {
    if (name.toLowerCase() === SCIM_ENTERPRISE_USER_SCHEMA.toLowerCase()) return [SCIM_ENTERPRISE_USER_SCHEMA]
    const definition = scimAttribute(resourceType, name)
    return definition === undefined ? [] : [definition.name]
  })
}

/** Whether a projection leaves `members` out (then a group's members are not even read). */
export function excludesMembers (projection: Projection): boolean {
  if (projection.attributes !== undefined) return !projection.attributes.some((name) => name === 'members' || name.startsWith('members.'))
  return projection.excludedAttributes?.includes('members') === true
}

function pick (source: Record<string, unknown>, target: Record<string, unknown>, local: string): void {
  const dot = local.indexOf('.')
  const head = dot === -1 ? local : local.slice(0, dot)
  if (!(head in source)) return
  if (dot === -1) {
    target[head] = source[head]
    return
  }
  const sub = local.slice(dot + 1)
  const value = source[head]
  if (Array.isArray(value)) {
    const picked = Array.isArray(target[head]) ? target[head] as Array<Record<string, unknown>> : value.map((): Record<string, unknown> => ({}))
    value.forEach((item, index) => { if (isObject(item) && sub in item && picked[index] !== undefined) picked[index][sub] = item[sub] })
    target[head] = picked
  } else if (isObject(value) && sub in value) target[head] = { ...(isObject(target[head]) ? target[head] as object : {}), [sub]: value[sub] }
}

function drop (target: Record<string, unknown>, local: string): void {
  const dot = local.indexOf('.')
  if (dot === -1) {
    delete target[local]
    return
  }
  const value = target[local.slice(0, dot)]
  const sub = local.slice(dot + 1)
  if (Array.isArray(value)) target[local.slice(0, dot)] = value.map((item) => isObject(item) ? Object.fromEntries(Object.entries(item).filter(([key]) => key !== sub)) : item)
  else if (isObject(value)) target[local.slice(0, dot)] = Object.fromEntries(Object.entries(value).filter(([key]) => key !== sub))
}

/** `resource` as the projection asks (a new object; `resource` is not changed). */
export function project (resource: Record<string, unknown>, projection: Projection): Record<string, unknown> {
  if (projection.attributes !== undefined) {
    const result: Record<string, unknown> = {}
    for (const key of ALWAYS) if (key in resource) result[key] = resource[key]
    for (const name of projection.attributes) {
      if (name === SCIM_ENTERPRISE_USER_SCHEMA) {
        if (resource[name] !== undefined) result[name] = resource[name]
        continue
      }
      const { extension, local } = locationOf(name)
      if (!extension) {
        pick(resource, result, local)
        continue
      }
      const source = resource[SCIM_ENTERPRISE_USER_SCHEMA]
      if (!isObject(source)) continue
      const target = isObject(result[SCIM_ENTERPRISE_USER_SCHEMA]) ? result[SCIM_ENTERPRISE_USER_SCHEMA] as Record<string, unknown> : {}
      pick(source, target, local)
      if (Object.keys(target).length > 0) result[SCIM_ENTERPRISE_USER_SCHEMA] = target
    }
    return result
  }
  const result = structuredClone(resource)
  for (const name of projection.excludedAttributes ?? []) {
    if (ALWAYS.has(name)) continue
    if (name === SCIM_ENTERPRISE_USER_SCHEMA) {
      delete result[name]
      continue
    }
    const { extension, local } = locationOf(name)
    if (!extension) drop(result, local)
    else if (isObject(result[SCIM_ENTERPRISE_USER_SCHEMA])) drop(result[SCIM_ENTERPRISE_USER_SCHEMA] as Record<string, unknown>, local)
  }
  return result
}
