/**
 * Linking and admission at sign-in (issue 41, items 3 to 5): the sign-in pipeline's provisioning
 * step (sign-in/provisioning-admission.ts) for the configured connections.
 *
 * 1. The connection of the sign-in: its tenant's, else the one listing its scheme; none: admitted.
 * 2. Its SCIM user: the one already linked to this identity; else the one whose `externalId`
 *    equals the connection's `ExternalIdClaim` of the sign-in (default: the subject); else, only
 *    where the connection opts in (`LinkByEmail`) and no user has that externalId, the one user
 *    with the sign-in's verified e-mail address at a verified domain (email-linking.ts). That user
 *    is then linked to this identity, once: a user linked to another identity is never re-linked,
 *    a linked user is found by the identity alone (never by e-mail again), and a change of
 *    `userName` or e-mail address never moves a link.
 * 3. Deactivated: refused (`deprovisioned`). Unknown: refused where the connection requires
 *    provisioned users (`not_provisioned`), else admitted without roles.
 * 4. Active: the application roles its groups map to (`GroupRoles`, by group externalId or
 *    displayName, case-insensitively); nothing else of the directory grants anything.
 */
import { foldCase } from '../directory/attributes.js'
import { DirectoryConflictError } from '../directory/directory-errors.js'
import type { DirectoryGroup, DirectoryStore, DirectoryUser, LinkedIdentity } from '../directory/directory-store.js'
import type { ProvisioningAdmission, ProvisioningDecision, ProvisioningLinking, ProvisioningSignIn } from '../sign-in/provisioning-admission.js'
import { sameIdentity } from '../session/user-identity.js'
import { connectionOfSignIn, type ScimConnection } from './connections.js'
import { hasEmail, linkableEmailOf, type EmailLinking, type EmailLinkRefusal } from './email-linking.js'

/** The roles `groups` grant through a connection's `GroupRoles`, sorted, each once. */
export function rolesOfGroups (connection: ScimConnection, groups: ReadonlyArray<Pick<DirectoryGroup, 'externalId' | 'displayName'>>): string[] {
  const roles = new Set<string>()
  for (const group of groups) {
    for (const key of [group.externalId, group.displayName]) {
      if (key === undefined) continue
      for (const role of connection.groupRoles.get(foldCase(key)) ?? []) roles.add(role)
    }
  }
  return [...roles].sort()
}

/** Whether a group grants roles through the connection's `GroupRoles`. */
export function isMappedGroup (connection: ScimConnection, group: Pick<DirectoryGroup, 'externalId' | 'displayName'>): boolean {
  return [group.externalId, group.displayName].some((key) => key !== undefined && connection.groupRoles.has(foldCase(key)))
}

/** The value the sign-in offers for `externalId`: the connection's claim, or the subject. */
function externalIdOf (connection: ScimConnection, signIn: ProvisioningSignIn): string | undefined {
  if (connection.externalIdClaim === undefined) return signIn.identity.subject
  const values = signIn.providerClaims.filter((claim) => claim.type === connection.externalIdClaim).map((claim) => claim.value)
  // Two different values: not an immutable identifier; link nothing.
  return values.length > 0 && values.every((value) => value === values[0]) ? values[0] : undefined
}

/** `candidate` linked to `identity`, once: undefined when it is (or meanwhile became) another person's. */
async function link (store: DirectoryStore, connection: ScimConnection, candidate: DirectoryUser, identity: LinkedIdentity): Promise<DirectoryUser | undefined> {
  if (candidate.identity !== undefined) return sameIdentity({ ...candidate.identity }, identity) ? candidate : undefined
  try {
    const update = await store.updateUser(connection.name, candidate.id, (current) => current.identity !== undefined
      ? undefined
      : { userName: current.userName, active: current.active, attributes: current.attributes, identity, ...(current.externalId === undefined ? {} : { externalId: current.externalId }) })
    const after = update?.after
    return after !== undefined && after.identity !== undefined && sameIdentity({ ...after.identity }, identity) ? after : undefined
  } catch (error) {
    // Linked to another user of this connection meanwhile: that link stands.
    if (error instanceof DirectoryConflictError) return undefined
    throw error
  }
}

/** Most SCIM users read for one address: more is ambiguous anyway. */
const EMAIL_CANDIDATES = 10

/** The one unlinked SCIM user with the sign-in's verified address (email-linking.ts), linked now; or why none. */
async function linkByEmail (store: DirectoryStore, connection: ScimConnection, linking: EmailLinking, signIn: ProvisioningSignIn, identity: LinkedIdentity): Promise<{ user: DirectoryUser } | { refused: EmailLinkRefusal }> {
  const email = linkableEmailOf(linking, signIn)
  if ('refused' in email) return email
  const found = new Map<string, DirectoryUser>()
  for (const value of email.lookups) {
    const page = await store.listUsers(connection.name, { filter: { op: 'eq', attribute: 'emails.value', value }, startIndex: 1, count: EMAIL_CANDIDATES })
    if (page.totalResults > EMAIL_CANDIDATES) return { refused: 'ambiguous' }
    for (const user of page.resources) if (hasEmail(user.attributes, email.key)) found.set(user.id, user)
  }
  const [candidate, ...others] = found.values()
  if (candidate === undefined) return { refused: 'no_match' }
  if (others.length > 0) return { refused: 'ambiguous' }
  if (candidate.identity !== undefined) return { refused: 'linked_to_another' }
  // With an ExternalIdClaim the directory's externalId is the immutable id: another one is another person.
  const externalId = connection.externalIdClaim === undefined ? undefined : externalIdOf(connection, signIn)
  if (externalId !== undefined && candidate.externalId !== undefined && candidate.externalId !== externalId) return { refused: 'external_id_mismatch' }
  const user = await link(store, connection, candidate, identity)
  return user === undefined ? { refused: 'linked_to_another' } : { user }
}

interface Found {
  readonly user?: DirectoryUser
  readonly linking?: ProvisioningLinking
}

/** The connection's user of this sign-in: the one linked to it; else by externalId, else (opted in) by e-mail, linking it on first sight. */
async function userOf (store: DirectoryStore, connection: ScimConnection, signIn: ProvisioningSignIn): Promise<Found> {
  const identity = { scheme: signIn.identity.scheme, issuer: signIn.identity.issuer, subject: signIn.identity.subject }
  const linked = (await store.findUsersByIdentity(identity)).find((user) => user.connection === connection.name)
  if (linked !== undefined) return { user: linked }
  const externalId = externalIdOf(connection, signIn)
  const page = externalId === undefined || externalId === ''
    ? undefined
    : await store.listUsers(connection.name, { filter: { op: 'eq', attribute: 'externalId', value: externalId }, startIndex: 1, count: 1 })
  const candidate = page?.resources[0]
  if (candidate !== undefined) {
    const user = await link(store, connection, candidate, identity)
    return user === undefined ? {} : { user, ...(candidate.identity === undefined ? { linking: { linked: 'externalId' } } : {}) }
  }
  if (connection.linkByEmail === undefined) return {}
  const byEmail = await linkByEmail(store, connection, connection.linkByEmail, signIn, identity)
  return 'user' in byEmail ? { user: byEmail.user, linking: { linked: 'email' } } : { linking: { emailNotLinked: byEmail.refused } }
}

/** The provisioning step over `store` and the configured `connections`. */
export function signInAdmission (store: DirectoryStore, connections: ReadonlyMap<string, ScimConnection>): ProvisioningAdmission {
  return {
    async admit (signIn): Promise<ProvisioningDecision> {
      const connection = connectionOfSignIn(connections.values(), signIn.scheme, signIn.tenant)
      if (connection === undefined) return { admitted: true, roles: [] }
      const { user, linking } = await userOf(store, connection, signIn)
      const noted = { connection: connection.name, ...(linking === undefined ? {} : { linking }) }
      if (user === undefined) return connection.requireProvisionedUsers ? { refused: 'not_provisioned', ...noted } : { admitted: true, roles: [], ...noted }
      if (!user.active) return { refused: 'deprovisioned', ...noted }
      return { admitted: true, roles: rolesOfGroups(connection, await store.groupsOfUser(connection.name, user.id)), ...noted }
    }
  }
}
