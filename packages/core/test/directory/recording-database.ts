/** A SQL database that records every statement the directory store sends (to EXPLAIN them in the index tests). */
import type { SqlDatabase, SqlSession } from '../../src/directory/sql-database.js'

export interface RecordedStatement {
  readonly sql: string
  readonly parameters: readonly unknown[]
}

export function recording (db: SqlDatabase, statements: RecordedStatement[]): SqlDatabase {
  const wrap = (session: SqlSession): SqlSession => ({
    query: async (sql, parameters = []) => { statements.push({ sql, parameters }); return await session.query(sql, parameters) },
    execute: async (sql, parameters = []) => { statements.push({ sql, parameters }); return await session.execute(sql, parameters) }
  })
  return {
    provider: db.provider,
    forUpdate: db.forUpdate,
    read: async (work) => await db.read(async (session) => await work(wrap(session))),
    transaction: async (work) => await db.transaction(async (session) => await work(wrap(session))),
    lockConnection: async (session, connection) => { await db.lockConnection(session, connection) },
    close: async () => { await db.close() }
  }
}

/** The filters whose listing must read an index (issue 41: the common ones). */
export const INDEXED_FILTERS = (id: string, since: string): string[] => [
  `id eq "${id}"`, 'userName eq "ADA"', 'externalId eq "ext-5"', `active eq true and meta.lastModified ge "${since}"`, 'userName eq "ada" and not (title pr)'
]
