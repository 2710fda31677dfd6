/**
 * What a deactivation or deletion does beyond the store (issue 41, item 4), before the SCIM
 * response is sent, in this order:
 *
 * 1. the person is marked deprovisioned in the state store (deprovisioned-identities.ts): from the
 *    next request on every instance, the bearer handler's deny check and API keys refuse them;
 * 2. the person's API keys (every ApiKey scheme) are revoked with the reason `deprovisioned` and
 *    the revocation is announced to every instance's key cache; they stay revoked after a
 *    reactivation, as after any revocation;
 * 3. every session of the linked identity ends on every instance (`app.session.revokeUser`: the
 *    records are deleted and the deletion is pushed to every instance's cache), and with the
 *    sessions the downstream tokens saved in them (SaveTokens keeps them in the session record,
 *    nowhere else);
 * 4. one audit line lists what was revoked (never a token).
 *
 * A failure of 1 to 3 rejects: the SCIM request answers 503 and the client sends it again; a
 * repeated deactivation of an inactive user runs 1 to 3 again (each idempotent). A reactivation
 * clears the mark. A user never linked (never signed in) has no session; the sign-in step refuses
 * them by `externalId`. Removing a membership that grants roles ends that person's sessions, so
 * that their next sign-in carries the new roles.
 */
import type { DirectoryUser } from '../directory/directory-store.js'
import { identityAuditFields, type UserIdentity } from '../session/user-identity.js'
import type { DeprovisionedIdentities } from './deprovisioned-identities.js'

/** The effects the SCIM handlers call. */
export interface DeprovisioningEffects {
  /** A user was deactivated or deleted. */
  readonly closeDoors: (connection: string, user: DirectoryUser, cause: 'deactivated' | 'deleted') => Promise<void>
  /** A user was reactivated: the mark is cleared, sign-in works again with no other step. */
  readonly reopen: (connection: string, user: DirectoryUser) => Promise<void>
  /** Memberships granting roles ended: the sessions of these users end. */
  readonly endSessions: (connection: string, users: readonly DirectoryUser[], cause: 'group_membership_removed' | 'group_deleted' | 'group_roles_changed') => Promise<void>
}

/** What the effects need of the app. */
export interface DeprovisioningPorts {
  /** `app.session.revokeUser`: ends every session of the identity on every instance; how many. */
  readonly revokeUser: (identity: UserIdentity) => Promise<number>
  /**
   * Revokes the person's API keys with the reason `deprovisioned`; how many. Absent: no ApiKey
   * scheme. Called before `revokeUser`, which revokes the keys too, as `owner_revoked`.
   */
  readonly revokeApiKeys?: (identity: UserIdentity) => Promise<number>
  readonly deprovisioned: DeprovisionedIdentities
  /** Writes one audit line. */
  readonly audit: (fields: Record<string, unknown>, message: string) => void
}

const identityOf = (user: DirectoryUser): UserIdentity | undefined =>
  user.identity === undefined ? undefined : { scheme: user.identity.scheme, issuer: user.identity.issuer, subject: user.identity.subject }

/** The effects over the app's session API and state store. */
export function deprovisioningEffects (ports: DeprovisioningPorts): DeprovisioningEffects {
  return {
    async closeDoors (connection, user, cause) {
      const identity = identityOf(user)
      let sessionsEnded = 0
      let apiKeysRevoked = 0
      if (identity !== undefined) {
        await ports.deprovisioned.mark(identity)
        apiKeysRevoked = await ports.revokeApiKeys?.(identity) ?? 0
        sessionsEnded = await ports.revokeUser(identity)
      }
      ports.audit({
        event: 'provisioning.user.deprovisioned',
        connection,
        scimUserId: user.id,
        cause,
        linked: identity !== undefined,
        ...(identity === undefined ? {} : identityAuditFields(identity)),
        revoked: { sessions: sessionsEnded, apiKeys: apiKeysRevoked, savedDownstreamTokens: 'with their sessions', bearerTokensAndApiKeys: identity === undefined ? 'none linked' : 'refused from the next request' }
      }, 'a provisioned user was deprovisioned: sessions ended, credentials refused')
    },
    async reopen (connection, user) {
      const identity = identityOf(user)
      if (identity !== undefined) await ports.deprovisioned.clear(identity)
      ports.audit({ event: 'provisioning.user.reactivated', connection, scimUserId: user.id, linked: identity !== undefined, ...(identity === undefined ? {} : identityAuditFields(identity)) }, 'a provisioned user was reactivated')
    },
    async endSessions (connection, users, cause) {
      let sessionsEnded = 0
      const linked = users.map(identityOf).filter((identity) => identity !== undefined)
      for (const identity of linked) sessionsEnded += await ports.revokeUser(identity)
      if (users.length === 0) return
      ports.audit({ event: 'provisioning.group.sessions_ended', connection, cause, users: users.length, linked: linked.length, sessions: sessionsEnded }, 'group roles changed: the sessions of the users concerned ended')
    }
  }
}
