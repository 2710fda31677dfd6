/**
 * What the SQL directory store (sql-directory-store.ts) needs of a database, so that one body of
 * SQL serves SQLite (sqlite-directory-database.ts) and PostgreSQL
 * (postgres-directory-database.ts): statements with `?` placeholders and their parameters only
 * (never a value spliced into SQL), reads, transactions, and the driver's errors turned into the
 * directory's own (a constraint into a conflict, anything else into "unavailable", never the
 * driver's message).
 */

export type SqlValue = string | number | boolean | null
export type SqlRow = Readonly<Record<string, unknown>>

export interface SqlSession {
  /** Rows of a statement (`?` placeholders, `parameters` in order). */
  query: (sql: string, parameters?: readonly SqlValue[]) => Promise<SqlRow[]>
  /** The number of rows a statement changed. */
  execute: (sql: string, parameters?: readonly SqlValue[]) => Promise<number>
}

export interface SqlDatabase {
  readonly provider: string
  /** Appended to a SELECT that reads a row about to be changed (`FOR UPDATE`; SQLite serialises writers instead). */
  readonly forUpdate: string
  /** Runs `work` outside a transaction (one statement is atomic by itself). */
  read: <T>(work: (session: SqlSession) => Promise<T>) => Promise<T>
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction: <T>(work: (session: SqlSession) => Promise<T>) => Promise<T>
  /** Serialises the writers of one connection's tokens until the transaction ends. */
  lockConnection: (session: SqlSession, connection: string) => Promise<void>
  close: () => Promise<void>
}

/** The column a unique-index violation names (an index or column name in the driver's error). */
export function conflictingAttribute (text: string): 'userName' | 'externalId' | 'identity' | undefined {
  if (text.includes('user_name')) return 'userName'
  if (text.includes('external_id')) return 'externalId'
  if (text.includes('identity')) return 'identity'
  return undefined
}
