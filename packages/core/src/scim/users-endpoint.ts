/**
 * `/Users` of a connection (RFC 7644 §3.3 to §3.6): list, create, read, replace, PATCH, delete.
 * Every change is one store call (a PATCH or PUT runs inside `updateUser`'s transaction, so it
 * applies whole or not at all, and a change equal to the resource writes nothing and answers 200
 * with it); a deactivation or deletion closes every door before the answer (deprovisioning.ts).
 * A create or an activation asks the app's provisioning hook first (provisioning-grants.ts).
 * Another connection's user id is exactly a missing one (404). Plain inputs.
 */
import type { DirectoryUpdate, DirectoryUser } from '../directory/directory-store.js'
import { normalizeDocument } from './document.js'
import { bodyOf, listQueryOf, projectionOf, type ScimAnswer, type ScimContext, type ScimQuery } from './endpoint-context.js'
import { listResponse } from './discovery.js'
import { applyPatch, parsePatchOperations } from './patch.js'
import { project } from './projection.js'
import { grantBase, updateUserGranting } from './provisioning-grants.js'
import { userDocumentOf, userInputOf, userResourceOf } from './resources.js'
import { notFound } from './scim-errors.js'

const answer = (context: ScimContext, user: DirectoryUser, query: ScimQuery, status = 200): ScimAnswer =>
  ({ status, body: project(userResourceOf(user, context.base), projectionOf('User', query)) })

export async function listUsers (context: ScimContext, query: ScimQuery): Promise<ScimAnswer> {
  const list = listQueryOf('User', query)
  const projection = projectionOf('User', query)
  const page = await context.store.listUsers(context.connection.name, list)
  const resources = page.resources.map((user) => project(userResourceOf(user, context.base), projection))
  return { status: 200, body: listResponse(resources, page.totalResults, page.startIndex) }
}

export async function getUser (context: ScimContext, id: string, query: ScimQuery): Promise<ScimAnswer> {
  const user = await context.store.getUser(context.connection.name, id)
  if (user === undefined) throw notFound('User')
  return answer(context, user, query)
}

export async function createUser (context: ScimContext, body: Record<string, unknown> | undefined, query: ScimQuery): Promise<ScimAnswer> {
  const input = userInputOf(normalizeDocument('User', bodyOf(body), context.notes))
  // A new user has no linked identity yet: nothing of it to close when created inactive.
  const { identity: _ignored, ...fields } = input
  await context.checkGrant?.({ type: 'user.create', ...grantBase(context), user: fields })
  const user = await context.store.createUser(context.connection.name, fields)
  return answer(context, user, query, 201)
}

/** The effects of a change of `active`: a deactivation (or a repeated one) closes the doors, a reactivation reopens. */
async function afterChange (context: ScimContext, update: DirectoryUpdate<DirectoryUser>): Promise<void> {
  const { before, after } = update
  if (!after.active && (before.active || !update.changed)) await context.effects.closeDoors(context.connection.name, after, 'deactivated')
  else if (after.active && !before.active) await context.effects.reopen(context.connection.name, after)
}

export async function replaceUser (context: ScimContext, id: string, body: Record<string, unknown> | undefined, query: ScimQuery): Promise<ScimAnswer> {
  const document = normalizeDocument('User', bodyOf(body), context.notes)
  const update = await updateUserGranting(context, id, (current) => userInputOf(document, current))
  if (update === undefined) throw notFound('User')
  await afterChange(context, update)
  return answer(context, update.after, query)
}

export async function patchUser (context: ScimContext, id: string, body: Record<string, unknown> | undefined, query: ScimQuery): Promise<ScimAnswer> {
  const operations = parsePatchOperations('User', bodyOf(body), context.notes)
  const update = await updateUserGranting(context, id, (current) =>
    userInputOf(applyPatch('User', userDocumentOf(current), operations, context.notes), current))
  if (update === undefined) throw notFound('User')
  await afterChange(context, update)
  return answer(context, update.after, query)
}

/**
 * The doors close before the user is deleted: should closing fail, the user is still there and
 * the client's retry closes them; deleted first, a retry would find nothing to close.
 */
export async function deleteUser (context: ScimContext, id: string): Promise<ScimAnswer> {
  const user = await context.store.getUser(context.connection.name, id)
  if (user === undefined) throw notFound('User')
  await context.effects.closeDoors(context.connection.name, user, 'deleted')
  if (await context.store.deleteUser(context.connection.name, id) === undefined) throw notFound('User')
  return { status: 204 }
}
