/**
 * The API key store beside a directory store: on the core's SQL directory stores (SQLite,
 * PostgreSQL) it shares their database (one file, one pool, the migrations already applied when
 * the directory store opened); beside the memory directory store it is kept in memory too. An
 * app's own directory store has no database the core can share: the app brings its own
 * `ApiKeyStore` then (held to the same cases by `describeApiKeyStore`).
 */
import type { DirectoryStore } from '../directory/directory-store.js'
import { MemoryDirectoryStore } from '../directory/memory-directory-store.js'
import { SqlDirectoryStore } from '../directory/sql-directory-store.js'
import type { ApiKeyStore } from './api-key-store.js'
import { MemoryApiKeyStore } from './memory-api-key-store.js'
import { SqlApiKeyStore } from './sql-api-key-store.js'

/**
 * The API key store sharing `directory`'s database, or undefined for a directory store the core
 * did not open.
 *
 * @experimental
 */
export function apiKeyStoreBeside (directory: DirectoryStore, options: { readonly now?: () => number } = {}): ApiKeyStore | undefined {
  if (directory instanceof SqlDirectoryStore) return new SqlApiKeyStore(directory.database, options)
  if (directory instanceof MemoryDirectoryStore) return new MemoryApiKeyStore(options)
  return undefined
}
