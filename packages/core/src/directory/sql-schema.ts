/**
 * The tables of the SQL directory stores (SQLite and PostgreSQL), as numbered migrations: a store
 * applies the ones its database lacks when it opens, each recorded in
 * `directory_schema_migrations`, in one transaction under a lock (so two instances starting at
 * once apply each migration once). Migrations are only ever added, never edited: a database
 * migrated by a newer release still opens with an older one during a rolling upgrade.
 *
 * The indexes are what the query plan (query-plan.ts) reads: every table leads with `connection`,
 * so no query of one connection reads another's rows; the unique indexes are the uniqueness rules
 * (userName folded, a user's externalId, a linked identity); memberships reference both ends by
 * (connection, id), so a membership across connections cannot exist. Key columns compare
 * byte-wise (`COLLATE "C"` in PostgreSQL, SQLite's default), whatever the database's locale.
 */

/** The column types of one SQL dialect. */
export interface SqlTypes {
  /** A key (ids, names): compared byte-wise. */
  readonly key: string
  readonly text: string
  readonly bigint: string
  readonly integer: string
  readonly boolean: string
  readonly json: string
  /** The insertion-order column (`seq`): what listings page in. */
  readonly sequence: string
  /** How (connection, id) is declared: the primary key, or unique beside SQLite's `seq` rowid. */
  readonly resourceKey: string
}

export const SQLITE_TYPES: SqlTypes = {
  key: 'TEXT',
  text: 'TEXT',
  bigint: 'INTEGER',
  integer: 'INTEGER',
  boolean: 'INTEGER',
  json: 'TEXT',
  // The rowid itself: assigned in insertion order, stable (an explicit INTEGER PRIMARY KEY survives VACUUM).
  sequence: 'seq INTEGER PRIMARY KEY',
  resourceKey: 'UNIQUE'
}
export const POSTGRES_TYPES: SqlTypes = {
  key: 'text COLLATE "C"',
  text: 'text',
  bigint: 'bigint',
  integer: 'integer',
  boolean: 'boolean',
  json: 'jsonb',
  sequence: 'seq bigint GENERATED ALWAYS AS IDENTITY',
  resourceKey: 'PRIMARY KEY'
}

export const MIGRATIONS_TABLE = 'directory_schema_migrations'

/**
 * One migration: its version and statements. Versions are numbered by area so that work on two
 * areas never takes the same number: 1-99 the directory (SCIM users, groups, tokens), 100-199
 * SCIM provisioning, 200-299 API keys (issue 42). A store applies the missing ones in ascending
 * order of version.
 */
export interface Migration {
  readonly version: number
  readonly statements: readonly string[]
}

/** Every migration, in ascending order of version. */
export function migrations (t: SqlTypes): readonly Migration[] {
  return [{ version: 1, statements: directoryTables(t) }, { version: 200, statements: apiKeyTables(t) }]
}

function directoryTables (t: SqlTypes): readonly string[] {
  return [
    `CREATE TABLE directory_users (
      connection ${t.key} NOT NULL, id ${t.key} NOT NULL, external_id ${t.key}, user_name ${t.text} NOT NULL, user_name_key ${t.key} NOT NULL,
      active ${t.boolean} NOT NULL, attributes ${t.json} NOT NULL,
      identity_scheme ${t.key}, identity_issuer ${t.key}, identity_subject ${t.key},
      created_ms ${t.bigint} NOT NULL, last_modified_ms ${t.bigint} NOT NULL, version ${t.integer} NOT NULL, ${t.sequence},
      ${t.resourceKey} (connection, id))`,
    'CREATE UNIQUE INDEX directory_users_user_name_key ON directory_users (connection, user_name_key)',
    'CREATE UNIQUE INDEX directory_users_external_id_key ON directory_users (connection, external_id) WHERE external_id IS NOT NULL',
    'CREATE UNIQUE INDEX directory_users_identity_key ON directory_users (connection, identity_subject, identity_issuer, identity_scheme) WHERE identity_subject IS NOT NULL',
    'CREATE INDEX directory_users_identity ON directory_users (identity_subject, identity_issuer) WHERE identity_subject IS NOT NULL',
    'CREATE INDEX directory_users_order ON directory_users (connection, seq)',
    'CREATE INDEX directory_users_active_modified ON directory_users (connection, active, last_modified_ms)',
    'CREATE INDEX directory_users_modified ON directory_users (connection, last_modified_ms)',
    `CREATE TABLE directory_groups (
      connection ${t.key} NOT NULL, id ${t.key} NOT NULL, external_id ${t.key}, display_name ${t.text} NOT NULL, display_name_key ${t.key} NOT NULL,
      attributes ${t.json} NOT NULL, created_ms ${t.bigint} NOT NULL, last_modified_ms ${t.bigint} NOT NULL, version ${t.integer} NOT NULL, ${t.sequence},
      ${t.resourceKey} (connection, id))`,
    'CREATE INDEX directory_groups_display_name ON directory_groups (connection, display_name_key)',
    'CREATE INDEX directory_groups_external_id ON directory_groups (connection, external_id)',
    'CREATE INDEX directory_groups_order ON directory_groups (connection, seq)',
    'CREATE INDEX directory_groups_modified ON directory_groups (connection, last_modified_ms)',
    `CREATE TABLE directory_memberships (
      connection ${t.key} NOT NULL, group_id ${t.key} NOT NULL, user_id ${t.key} NOT NULL,
      PRIMARY KEY (connection, group_id, user_id),
      FOREIGN KEY (connection, group_id) REFERENCES directory_groups (connection, id) ON DELETE CASCADE,
      FOREIGN KEY (connection, user_id) REFERENCES directory_users (connection, id) ON DELETE CASCADE)`,
    'CREATE INDEX directory_memberships_user ON directory_memberships (connection, user_id)',
    `CREATE TABLE directory_tokens (
      connection ${t.key} NOT NULL, id ${t.key} NOT NULL, digest ${t.text} NOT NULL,
      created_ms ${t.bigint} NOT NULL, expires_ms ${t.bigint}, revoked_ms ${t.bigint}, ${t.sequence},
      ${t.resourceKey} (connection, id))`
  ]
}

/**
 * API keys (issue 42; api-keys/sql-api-key-store.ts): one row per key, never the key itself (its
 * versioned digest), found by id (the key's id part) and listed by owner (`owner_key`: `user:`
 * and the user key, or `tenant:` and the tenant) in creation order.
 */
function apiKeyTables (t: SqlTypes): readonly string[] {
  return [
    `CREATE TABLE directory_api_keys (
      id ${t.key} NOT NULL, scheme ${t.key} NOT NULL, prefix ${t.text} NOT NULL, owner_key ${t.key} NOT NULL, owner_kind ${t.key} NOT NULL,
      owner_scheme ${t.key}, owner_issuer ${t.key}, owner_subject ${t.key}, owner_identity_kind ${t.key}, owner_tenant ${t.key},
      created_by_scheme ${t.key} NOT NULL, created_by_issuer ${t.key} NOT NULL, created_by_subject ${t.key} NOT NULL, created_by_kind ${t.key},
      name ${t.text} NOT NULL, scopes ${t.json} NOT NULL, digest ${t.text} NOT NULL, last_four ${t.text} NOT NULL,
      created_ms ${t.bigint} NOT NULL, expires_ms ${t.bigint} NOT NULL, revoked_ms ${t.bigint}, revoked_reason ${t.key}, last_used_ms ${t.bigint}, ${t.sequence},
      ${t.resourceKey} (id))`,
    'CREATE INDEX directory_api_keys_owner ON directory_api_keys (owner_key, seq)'
  ]
}

/** The versions this release applies, ascending. */
export const MIGRATION_VERSIONS: readonly number[] = migrations(SQLITE_TYPES).map((migration) => migration.version)

/** The newest schema version this release writes. */
export const SCHEMA_VERSION = MIGRATION_VERSIONS.at(-1) as number
