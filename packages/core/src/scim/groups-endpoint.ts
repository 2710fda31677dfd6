/**
 * `/Groups` of a connection (RFC 7644 §3.3 to §3.6): list, create, read, replace, PATCH, delete,
 * with members (user ids of the same connection: another connection's user is refused by the
 * store, 400 `invalidValue`, and named nowhere). A change that takes roles away from someone
 * (`GroupRoles`: a removed membership, a deleted or renamed mapped group) ends their sessions
 * before the answer, so their next sign-in carries the roles they have now. A change that gives
 * someone roles asks the app's provisioning hook first (provisioning-grants.ts). Plain inputs.
 */
import type { DirectoryGroup, DirectoryGroupUpdate } from '../directory/directory-store.js'
import { normalizeDocument } from './document.js'
import { bodyOf, listQueryOf, projectionOf, type ScimAnswer, type ScimContext, type ScimQuery } from './endpoint-context.js'
import { listResponse } from './discovery.js'
import { applyGroupPatch, memberIdsOf, parsePatchOperations } from './patch.js'
import { excludesMembers, project } from './projection.js'
import { groupDocumentOf, groupFieldsOf, groupResourceOf } from './resources.js'
import { notFound } from './scim-errors.js'
import { groupRolesGrant, updateGroupGranting, usersOf } from './provisioning-grants.js'
import { rolesOfGroups } from './sign-in-admission.js'

async function representation (context: ScimContext, group: DirectoryGroup, query: ScimQuery): Promise<Record<string, unknown>> {
  const projection = projectionOf('Group', query)
  const members = excludesMembers(projection) ? undefined : await context.store.groupMembers(context.connection.name, group.id)
  return project(groupResourceOf(group, members, context.base), projection)
}

export async function listGroups (context: ScimContext, query: ScimQuery): Promise<ScimAnswer> {
  const page = await context.store.listGroups(context.connection.name, listQueryOf('Group', query))
  const resources = []
  for (const group of page.resources) resources.push(await representation(context, group, query))
  return { status: 200, body: listResponse(resources, page.totalResults, page.startIndex) }
}

export async function getGroup (context: ScimContext, id: string, query: ScimQuery): Promise<ScimAnswer> {
  const group = await context.store.getGroup(context.connection.name, id)
  if (group === undefined) throw notFound('Group')
  return { status: 200, body: await representation(context, group, query) }
}

/** The `members` of a body (any case of the key); undefined when absent. */
function membersOfBody (body: Record<string, unknown>): string[] | undefined {
  const key = Object.keys(body).find((name) => name.toLowerCase() === 'members')
  if (key === undefined || body[key] === null) return key === undefined ? undefined : []
  return memberIdsOf(body[key])
}

export async function createGroup (context: ScimContext, body: Record<string, unknown> | undefined, query: ScimQuery): Promise<ScimAnswer> {
  const raw = bodyOf(body)
  const fields = groupFieldsOf(normalizeDocument('Group', raw, context.notes))
  const members = membersOfBody(raw) ?? []
  if (context.checkGrant !== undefined) {
    const grant = await groupRolesGrant(context, undefined, { ...fields, members: { replace: members } })
    if (grant !== undefined) await context.checkGrant(grant)
  }
  const group = await context.store.createGroup(context.connection.name, { ...fields, members })
  return { status: 201, body: await representation(context, group, query) }
}

/** The users whose sessions end after a group change: the removed members of a group that granted roles, every member when the group grants fewer roles now. */
async function afterChange (context: ScimContext, update: DirectoryGroupUpdate): Promise<void> {
  const connection = context.connection
  const rolesBefore = rolesOfGroups(connection, [update.before])
  if (rolesBefore.length === 0) return
  const rolesAfter = new Set(rolesOfGroups(connection, [update.after]))
  const lostRoles = rolesBefore.some((role) => !rolesAfter.has(role))
  const ids = lostRoles ? [...update.removed, ...await context.store.groupMembers(connection.name, update.after.id)] : [...update.removed]
  await context.effects.endSessions(connection.name, await usersOf(context, ids), lostRoles ? 'group_roles_changed' : 'group_membership_removed')
}

export async function replaceGroup (context: ScimContext, id: string, body: Record<string, unknown> | undefined, query: ScimQuery): Promise<ScimAnswer> {
  const raw = bodyOf(body)
  const fields = groupFieldsOf(normalizeDocument('Group', raw, context.notes))
  const members = membersOfBody(raw)
  // Without `members` the membership is kept (Okta renames a group with a PUT that lists none).
  const update = await updateGroupGranting(context, id, () => ({ ...fields, ...(members === undefined ? {} : { members: { replace: members } }) }))
  if (update === undefined) throw notFound('Group')
  await afterChange(context, update)
  return { status: 200, body: await representation(context, update.after, query) }
}

export async function patchGroup (context: ScimContext, id: string, body: Record<string, unknown> | undefined, query: ScimQuery): Promise<ScimAnswer> {
  const operations = parsePatchOperations('Group', bodyOf(body), context.notes)
  const update = await updateGroupGranting(context, id, (current) => {
    const { document, members } = applyGroupPatch(groupDocumentOf(current), operations, context.notes)
    return {
      ...groupFieldsOf(document),
      members: { ...(members.replace === undefined ? {} : { replace: [...members.replace] }), add: [...members.add], remove: [...members.remove] }
    }
  })
  if (update === undefined) throw notFound('Group')
  await afterChange(context, update)
  return { status: 200, body: await representation(context, update.after, query) }
}

export async function deleteGroup (context: ScimContext, id: string): Promise<ScimAnswer> {
  const group = await context.store.getGroup(context.connection.name, id)
  if (group === undefined) throw notFound('Group')
  const members = rolesOfGroups(context.connection, [group]).length === 0 ? [] : await usersOf(context, await context.store.groupMembers(context.connection.name, id))
  if (!await context.store.deleteGroup(context.connection.name, id)) throw notFound('Group')
  await context.effects.endSessions(context.connection.name, members, 'group_deleted')
  return { status: 204 }
}
