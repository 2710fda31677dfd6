/**
 * The directory store port: where SCIM provisioning (issue 41) keeps each connection's users,
 * groups, memberships and connection tokens, and where API keys (issue 42) will keep theirs.
 * Implementations: the embedded store (embedded-directory-store.ts: SQLite beside the state
 * file on Node.js 22.13+, memory on Node.js 20) and PostgreSQL (postgres-directory-store.ts, for
 * several instances). An app may bring its own; `@project-template/core/testing`'s
 * `describeDirectoryStore` checks it with the cases the core's own stores pass.
 *
 * The rules every implementation keeps:
 * - **Scoped by connection.** Every operation names its connection; a resource id of another
 *   connection is exactly "not found" (undefined, false), never a conflict, never revealed.
 * - **Atomic per call.** An update applies the whole change or none of it (`mutate` runs inside
 *   the store's transaction; if it throws, nothing is written and the error reaches the caller).
 * - **Unique within a connection:** `userName` (case-insensitive, {@link foldCase}), a user's
 *   `externalId`, a linked identity; a breach is a {@link DirectoryConflictError}.
 * - **Parsed filters only**: a listing receives a {@link ScimFilter}, never a filter string, and
 *   answers the common filters (`id`, `userName`, `externalId`, a group's `displayName` `eq`;
 *   `active eq ... and meta.lastModified ge ...`) from indexes, not a scan of the connection.
 * - **No secrets**: a connection token is stored as its digest only.
 */
import type { ScimFilter } from './filter.js'

/**
 * The identity a SCIM user is linked to once that person signs in (issue 41, item 3): the
 * scheme they signed in with, its issuer and the immutable subject (or the claim the connection
 * links by).
 *
 * @public @experimental
 */
export interface LinkedIdentity {
  readonly scheme: string
  readonly issuer: string
  readonly subject: string
}

/**
 * The SCIM attributes of a resource other than those the store keeps apart (`id`, `externalId`,
 * `userName`, `active`, a group's `displayName`, `meta`, `schemas`, members): `name`, `emails`,
 * `title`, the enterprise extension under its URN, ... as a JSON object with the canonical
 * attribute names (attributes.ts). Never a `password`.
 *
 * @public @experimental
 */
export type ScimAttributes = Readonly<Record<string, unknown>>

/** A provisioned user. Timestamps are ISO 8601 UTC with milliseconds. @public @experimental */
export interface DirectoryUser {
  readonly connection: string
  /** Assigned by the store (unguessable); never reused. */
  readonly id: string
  readonly externalId?: string
  readonly userName: string
  readonly active: boolean
  readonly attributes: ScimAttributes
  /** The signed-in identity this user is linked to, once known. */
  readonly identity?: LinkedIdentity
  readonly created: string
  readonly lastModified: string
  /** Starts at 1, grows by one with each change (a SCIM `meta.version`, an optimistic check). */
  readonly version: number
}

/** What a user is created with, or changed to. @public @experimental */
export interface DirectoryUserInput {
  readonly externalId?: string
  readonly userName: string
  readonly active: boolean
  readonly attributes: ScimAttributes
  readonly identity?: LinkedIdentity
}

/** A provisioned group. @public @experimental */
export interface DirectoryGroup {
  readonly connection: string
  readonly id: string
  readonly externalId?: string
  readonly displayName: string
  readonly attributes: ScimAttributes
  readonly created: string
  readonly lastModified: string
  readonly version: number
}

/** What a group is created with (`members`: user ids of the same connection). @public @experimental */
export interface DirectoryGroupInput {
  readonly externalId?: string
  readonly displayName: string
  readonly attributes: ScimAttributes
  readonly members?: readonly string[]
}

/**
 * A change of a group: its fields, and its members in the order `replace` (the whole list),
 * then `add`, then `remove`. Member ids must be users of the same connection.
 *
 * @public @experimental
 */
export interface DirectoryGroupChange {
  readonly externalId?: string
  readonly displayName: string
  readonly attributes: ScimAttributes
  readonly members?: {
    readonly replace?: readonly string[]
    readonly add?: readonly string[]
    readonly remove?: readonly string[]
  }
}

/** What an update did: the resource before and after, and whether anything changed. @public @experimental */
export interface DirectoryUpdate<T> {
  readonly before: T
  readonly after: T
  /** False when the change equalled the resource: nothing written, version and lastModified kept. */
  readonly changed: boolean
}

/** A group update, with the members it added and removed (user ids). @public @experimental */
export interface DirectoryGroupUpdate extends DirectoryUpdate<DirectoryGroup> {
  readonly added: readonly string[]
  readonly removed: readonly string[]
}

/** A deleted user, with the groups it was removed from (the deprovisioning step needs both). @public @experimental */
export interface DirectoryUserDeletion {
  readonly user: DirectoryUser
  readonly groups: readonly string[]
}

/**
 * A listing: the parsed filter (none: every resource), the 1-based `startIndex` and the
 * `count` of resources wanted (RFC 7644 §3.4.2.4). Resources come in creation order.
 *
 * @public @experimental
 */
export interface DirectoryQuery {
  readonly filter?: ScimFilter
  readonly startIndex: number
  readonly count: number
}

/** One page of a listing: `totalResults` counts every match, not only this page's. @public @experimental */
export interface DirectoryPage<T> {
  readonly totalResults: number
  readonly startIndex: number
  readonly resources: readonly T[]
}

/**
 * A connection token as stored: its id and the digest of the secret (the secret itself is shown
 * once when issued and never stored). Active while not revoked and not expired.
 *
 * @public @experimental
 */
export interface ConnectionToken {
  readonly connection: string
  readonly id: string
  /** The secret's digest, with its algorithm's version (for example `sha256:<base64url>`). */
  readonly digest: string
  readonly created: string
  readonly expires?: string
  readonly revoked?: string
}

/** What a token is added with. @public @experimental */
export interface ConnectionTokenInput {
  readonly id: string
  readonly digest: string
  readonly expires?: string
}

/**
 * Most active tokens a connection holds at once: two, so that a new one can be issued and
 * deployed before the old one is revoked.
 *
 * @public @experimental
 */
export const MAX_ACTIVE_CONNECTION_TOKENS = 2

/**
 * The directory store port (see the module comment for the rules every implementation keeps).
 * Every method rejects with {@link DirectoryStoreUnavailableError} when the store cannot answer.
 *
 * @public @experimental
 */
export interface DirectoryStore {
  /** `Embedded`, `PostgreSql`, or an app's own name. */
  readonly provider: string

  /** Creates a user; rejects with {@link DirectoryConflictError} on a taken `userName`, `externalId` or identity. */
  createUser: (connection: string, input: DirectoryUserInput) => Promise<DirectoryUser>
  getUser: (connection: string, id: string) => Promise<DirectoryUser | undefined>
  /**
   * Changes a user atomically: `mutate` receives the current user (inside the store's
   * transaction: it must be synchronous and quick) and returns what it becomes, or undefined for
   * no change. Undefined when the user does not exist in this connection.
   */
  updateUser: (connection: string, id: string, mutate: (current: DirectoryUser) => DirectoryUserInput | undefined) => Promise<DirectoryUpdate<DirectoryUser> | undefined>
  /** Deletes a user and its memberships; undefined when it does not exist in this connection. */
  deleteUser: (connection: string, id: string) => Promise<DirectoryUserDeletion | undefined>
  listUsers: (connection: string, query: DirectoryQuery) => Promise<DirectoryPage<DirectoryUser>>
  /**
   * The users linked to `identity`, in every connection (the sign-in callback asks whether any
   * connection has deactivated that person). The one look-up not scoped by connection: an
   * identity belongs to one tenant, and each user returned names its connection.
   */
  findUsersByIdentity: (identity: LinkedIdentity) => Promise<DirectoryUser[]>

  /** Creates a group with its members; rejects with {@link DirectoryInvalidValueError} for a member that is not a user of this connection. */
  createGroup: (connection: string, input: DirectoryGroupInput) => Promise<DirectoryGroup>
  getGroup: (connection: string, id: string) => Promise<DirectoryGroup | undefined>
  /** Changes a group atomically, as {@link DirectoryStore.updateUser} does a user. */
  updateGroup: (connection: string, id: string, mutate: (current: DirectoryGroup) => DirectoryGroupChange | undefined) => Promise<DirectoryGroupUpdate | undefined>
  /** Deletes a group and its memberships (never a user); false when it does not exist in this connection. */
  deleteGroup: (connection: string, id: string) => Promise<boolean>
  listGroups: (connection: string, query: DirectoryQuery) => Promise<DirectoryPage<DirectoryGroup>>
  /** The user ids of a group's members, sorted; empty for a group not in this connection. */
  groupMembers: (connection: string, groupId: string) => Promise<string[]>
  /** The groups a user belongs to, sorted by id; empty for a user not in this connection. */
  groupsOfUser: (connection: string, userId: string) => Promise<DirectoryGroup[]>

  /** Adds a token; rejects with {@link DirectoryConflictError} (`activeTokens`) when the connection already has {@link MAX_ACTIVE_CONNECTION_TOKENS} active ones. */
  addToken: (connection: string, token: ConnectionTokenInput) => Promise<ConnectionToken>
  /** Every token of the connection, revoked and expired ones included, oldest first. */
  listTokens: (connection: string) => Promise<ConnectionToken[]>
  /** The active tokens (not revoked, unexpired now), oldest first: what a request's token is compared with. */
  activeTokens: (connection: string) => Promise<ConnectionToken[]>
  /** Revokes a token; false when it does not exist in this connection or is revoked already. */
  revokeToken: (connection: string, id: string) => Promise<boolean>

  /** Deletes every user, group, membership and token of a connection (the connection was removed). */
  deleteConnection: (connection: string) => Promise<void>
  close: () => Promise<void>
}
