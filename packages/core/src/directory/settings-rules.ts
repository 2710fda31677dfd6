/**
 * The startup rule of `<Root>:Provisioning` (docs/provisioning.md): with `Store:Provider`
 * PostgreSql, a connection string the `pg` driver reads as a PostgreSQL URL. The message names the
 * key, never the value (it may carry a password).
 */
import { isMissing, problem, type Rule } from '../config/rules.js'

/** A PostgreSQL connection string's problem, named under `key`; undefined when usable. */
export function checkPostgresConnectionString (value: string, key: string): string | undefined {
  let url: URL
  try {
    url = new URL(value.trim())
  } catch {
    return `${key} must be a postgres:// or postgresql:// connection string.`
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') return `${key} must use postgres:// or postgresql://.`
  // A unix socket is given as ?host=/path with no host in the authority.
  if (url.hostname === '' && (url.searchParams.get('host') ?? '') === '') return `${key} must name a host (or a socket directory as ?host=/path).`
  if (url.pathname.length <= 1) return `${key} must name a database (postgres://host/<database>).`
  return undefined
}

export const directoryStoreSettings: Rule = ({ config, rootKey }) => {
  const store = config.Provisioning.Store
  if (store.Provider !== 'PostgreSql') return []
  const key = `${rootKey}:Provisioning:Store:PostgreSql:ConnectionString`
  if (isMissing(store.PostgreSql.ConnectionString)) return [problem(key, `${key} is required when ${rootKey}:Provisioning:Store:Provider is PostgreSql.`)]
  const message = checkPostgresConnectionString(store.PostgreSql.ConnectionString.reveal(), key)
  return message === undefined ? [] : [problem(key, message)]
}
