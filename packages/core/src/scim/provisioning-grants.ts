/**
 * What a SCIM change grants, and the store updates that ask the provisioning hook first
 * (provisioning-hook.ts). The hook cannot run inside a store's transaction (`mutate` is
 * synchronous), so a change that may grant is planned on the resource as read, the hook is asked,
 * and the transaction then applies the change only if it grants nothing the hook was not asked
 * about: a user activated meanwhile by no one the hook approved, or a group changed since it was
 * read, answers 503 with `Retry-After` and changes nothing (the client sends it again). Without a
 * hook, every change is the one store call it always was. Plain inputs.
 */
import type { DirectoryGroup, DirectoryGroupChange, DirectoryGroupUpdate, DirectoryUpdate, DirectoryUser, DirectoryUserInput } from '../directory/directory-store.js'
import { applyMembers } from '../directory/records.js'
import type { ScimContext } from './endpoint-context.js'
import type { ProvisioningGrant, ProvisioningGrantBase } from './provisioning-hook.js'
import { ScimError } from './scim-errors.js'
import { rolesOfGroups } from './sign-in-admission.js'

/** The resource changed between the hook's answer and the transaction. */
const changedMeanwhile = (): ScimError =>
  new ScimError(503, 'The resource changed while this request was checked; nothing was changed. Try again.', undefined, { 'retry-after': '1' })

export const grantBase = (context: ScimContext): ProvisioningGrantBase => ({ connection: context.connection.name, tenant: context.connection.tenant })

/** Whether a change makes an inactive user active. */
const activates = (before: DirectoryUser, after: DirectoryUserInput): boolean => !before.active && after.active

/** The users of these ids in the connection (ids of no user are left out: the store refuses them). */
export async function usersOf (context: ScimContext, ids: readonly string[]): Promise<DirectoryUser[]> {
  const users: DirectoryUser[] = []
  for (const id of new Set(ids)) {
    const user = await context.store.getUser(context.connection.name, id)
    if (user !== undefined) users.push(user)
  }
  return users
}

/** `store.updateUser`, asking the hook first when the change activates the user. */
export async function updateUserGranting (context: ScimContext, id: string, change: (current: DirectoryUser) => DirectoryUserInput): Promise<DirectoryUpdate<DirectoryUser> | undefined> {
  const { store, connection, checkGrant } = context
  if (checkGrant === undefined) return await store.updateUser(connection.name, id, change)
  const current = await store.getUser(connection.name, id)
  if (current === undefined) return undefined
  const approved = activates(current, change(current))
  if (approved) await checkGrant({ type: 'user.activate', ...grantBase(context), user: current })
  return await store.updateUser(connection.name, id, (latest) => {
    const input = change(latest)
    if (!approved && activates(latest, input)) throw changedMeanwhile()
    return input
  })
}

/** A group as planned: its fields and its membership change. */
type PlannedGroup = Pick<DirectoryGroupChange, 'displayName' | 'externalId' | 'members'>

/**
 * The `group.roles` grant of a group change (`current` undefined: a group being created), or
 * undefined when nobody gains a role: the members added to a group that maps to roles, and every
 * member when the group maps to a role it did not map to before.
 */
export async function groupRolesGrant (context: ScimContext, current: DirectoryGroup | undefined, planned: PlannedGroup): Promise<ProvisioningGrant | undefined> {
  const { connection, store } = context
  const roles = rolesOfGroups(connection, [planned])
  if (roles.length === 0) return undefined
  const members = current === undefined ? [] : await store.groupMembers(connection.name, current.id)
  const { members: after, added } = applyMembers(members, planned.members)
  const before = new Set(current === undefined ? [] : rolesOfGroups(connection, [current]))
  const gaining = roles.some((role) => !before.has(role)) ? after : added
  if (gaining.length === 0) return undefined
  const group = { ...(current === undefined ? {} : { id: current.id }), displayName: planned.displayName, ...(planned.externalId === undefined ? {} : { externalId: planned.externalId }) }
  return { type: 'group.roles', ...grantBase(context), group, roles, users: await usersOf(context, gaining) }
}

/** `store.updateGroup`, asking the hook first when the change gives someone roles. */
export async function updateGroupGranting (context: ScimContext, id: string, change: (current: DirectoryGroup) => DirectoryGroupChange): Promise<DirectoryGroupUpdate | undefined> {
  const { store, connection, checkGrant } = context
  if (checkGrant === undefined) return await store.updateGroup(connection.name, id, change)
  const current = await store.getGroup(connection.name, id)
  if (current === undefined) return undefined
  const grant = await groupRolesGrant(context, current, change(current))
  if (grant !== undefined) await checkGrant(grant)
  return await store.updateGroup(connection.name, id, (latest) => {
    const next = change(latest)
    // What the grant was planned on (fields and members: each change of either is a new version) must still hold.
    if (latest.version !== current.version && rolesOfGroups(connection, [next]).length > 0) throw changedMeanwhile()
    return next
  })
}
