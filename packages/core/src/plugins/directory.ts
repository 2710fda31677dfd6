/**
 * Provisioning's store and API (issue 41), registered only when `Provisioning:Enabled`: opens the
 * configured directory store (directory/open-directory-store.ts) and closes it on shutdown,
 * decorates `app.directory` (read access to the tenants' users and groups, for the app's own
 * pages and joins) and `app.provisioning` (connection tokens, the deprovisioned check, the
 * provisioning hooks), and hands
 * the sign-in pipeline its provisioning step (scim/sign-in-admission.ts). The SCIM endpoints are
 * plugins/scim.ts. Without provisioning both decorations are undefined; the store is still opened
 * when an ApiKey scheme is enabled (issue 42: the keys live in its database, plugins/api-keys.ts
 * reads it with {@link directoryStoreOf}), else nothing is opened.
 */
import fp from 'fastify-plugin'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { ConnectionToken, DirectoryStore } from '../directory/directory-store.js'
import { openDirectoryStore } from '../directory/open-directory-store.js'
import type { ApplicationConfiguration } from '../providers/application-schema.js'
import { enabledProviderInstancesUnder } from '../providers/provider-instances.js'
import { connectionsOf, type ScimConnection } from '../scim/connections.js'
import { issuedTenantsOf, unmatchedConnections } from '../scim/connection-schemes.js'
import { nextRuntimeConnections, type DeclaredConnection, type RuntimeConnectionsContext, type RuntimeConnectionsResult } from '../scim/runtime-connections.js'
import { issueConnectionToken, type IssuedConnectionToken } from '../scim/connection-tokens.js'
import { DeprovisionedIdentities, type DeprovisionedIdentity } from '../scim/deprovisioned-identities.js'
import type { ProvisioningHook } from '../scim/provisioning-hook.js'
import { signInAdmission } from '../scim/sign-in-admission.js'
import type { ProvisioningAdmission } from '../sign-in/provisioning-admission.js'

/** What `app.directory` lets the app read (writes come from the customers' directories only). @public @experimental */
export type DirectoryReader = Pick<DirectoryStore, 'getUser' | 'listUsers' | 'findUsersByIdentity' | 'getGroup' | 'listGroups' | 'groupMembers' | 'groupsOfUser'>

/** A connection token as listed: never its digest, never its secret. @public @experimental */
export type ConnectionTokenInfo = Omit<ConnectionToken, 'digest'>

/** `app.provisioning` (issue 41). @public @experimental */
export interface ProvisioningApi {
  /** The connections' names now: the configured ones, then those of the provider source (docs/provisioning.md). */
  readonly connections: readonly string[]
  /**
   * Issues a token for a connection and returns its secret, this once (only its digest is
   * stored). At most two are active at once: revoke one first (409 `DirectoryConflictError`).
   */
  createToken: (connection: string, options?: { readonly expiresAt?: Date }) => Promise<IssuedConnectionToken>
  listTokens: (connection: string) => Promise<ConnectionTokenInfo[]>
  /** Revokes a token: refused from the next request on every instance; false when unknown or revoked already. */
  revokeToken: (connection: string, id: string) => Promise<boolean>
  /**
   * Whether the person (issuer and subject) was deactivated or deleted by their directory: the
   * check for bearer tokens (asked on every bearer request already) and API keys. Answered from
   * this instance's memory for at most a second (a deactivation on any instance drops it at once),
   * else one state-store read; rejects when the store cannot answer.
   */
  isDeprovisioned: (identity: DeprovisionedIdentity) => Promise<boolean>
  /**
   * Adds a provisioning hook (scim/provisioning-hook.ts), asked before a SCIM request creates or
   * activates a user or gives people roles through a group; it may refuse (a 400, 403 or 409 SCIM
   * error of its choice, nothing changed). Never asked about a deactivation, a deletion or a
   * membership removal. A hook that fails fails the request (503, nothing changed).
   */
  onProvision: (hook: ProvisioningHook) => void
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The provisioned users and groups (read only); undefined when `Provisioning:Enabled` is false. @experimental */
    directory: DirectoryReader | undefined
    /** Connection tokens and the deprovisioned check; undefined when `Provisioning:Enabled` is false. @experimental */
    provisioning: ProvisioningApi | undefined
  }
}

export interface DirectoryPluginOptions {
  readonly config: ApplicationConfiguration
  readonly contentRoot: string
  readonly now: () => number
  readonly rootKey: string
  /** Whether the app has a provider source: then the tenant check waits for its rows (each reload). */
  readonly providerSource?: boolean
}

/** What plugins/scim.ts and the sign-in pipeline need beyond the public API. */
export interface ProvisioningRuntime {
  readonly store: DirectoryStore
  /** Every connection in use, configured and from the provider source; read on each request (a reload changes it in place). */
  readonly connections: ReadonlyMap<string, ScimConnection>
  readonly deprovisioned: DeprovisionedIdentities
  readonly admission: ProvisioningAdmission
  /**
   * Applies the connections the provider source's rows declare (plugins/runtime-providers.ts, on
   * every reload on every instance), given the sign-in schemes now in use: those from the source
   * with their rows' tenants, and the configured ones.
   */
  readonly reloadConnections: (declared: readonly DeclaredConnection[], schemes: Pick<RuntimeConnectionsContext, 'runtimeSchemes' | 'configuredSchemes'>) => RuntimeConnectionsResult
  /**
   * Warns, naming its `Tenant` key, of each configured connection no sign-in can belong to: no
   * `Schemes`, and a tenant neither a configured provider nor a row in use (`rowTenants`) issues.
   */
  readonly warnUnmatchedTenants: (log: FastifyBaseLogger, rowTenants: Iterable<string | undefined>) => void
  /** The app's provisioning hooks, in the order registered. */
  readonly hooks: ProvisioningHook[]
}

const RUNTIME = Symbol('provisioning.runtime')
const STORE = Symbol('directory.store')

/** The directory store plugins/directory.ts opened (provisioning on, or an ApiKey scheme enabled), or undefined. */
export function directoryStoreOf (app: FastifyInstance): DirectoryStore | undefined {
  return (app as unknown as Record<symbol, DirectoryStore | undefined>)[STORE]
}

/** Whether an enabled ApiKey scheme keeps its keys in the directory store's database. */
const apiKeysEnabled = (config: ApplicationConfiguration, rootKey: string): boolean =>
  config.Authentication.Enabled && enabledProviderInstancesUnder(config, rootKey).some((instance) => instance.protocol === 'ApiKey')

/** The runtime plugins/directory.ts registered on `app`, or undefined without provisioning. */
export function provisioningRuntimeOf (app: FastifyInstance): ProvisioningRuntime | undefined {
  return (app as unknown as Record<symbol, ProvisioningRuntime | undefined>)[RUNTIME]
}

function connectionOf (connections: ReadonlyMap<string, ScimConnection>, name: string, method: string): string {
  if (typeof name !== 'string' || !connections.has(name)) throw new TypeError(`app.provisioning.${method}: ${String(name)} is not a configured connection (Provisioning:Connections:<Name>) nor one of the provider source.`)
  return name
}

function provisioningApi (runtime: ProvisioningRuntime): ProvisioningApi {
  const { store, connections } = runtime
  return {
    get connections () { return [...connections.keys()] },
    createToken: async (connection, options) => await issueConnectionToken(store, connectionOf(connections, connection, 'createToken'), options?.expiresAt),
    listTokens: async (connection) => (await store.listTokens(connectionOf(connections, connection, 'listTokens'))).map(({ digest: _digest, ...token }) => token),
    revokeToken: async (connection, id) => await store.revokeToken(connectionOf(connections, connection, 'revokeToken'), id),
    isDeprovisioned: async (identity) => await runtime.deprovisioned.isDeprovisioned(identity),
    onProvision: (hook) => {
      if (typeof hook !== 'function') throw new TypeError('app.provisioning.onProvision: the hook must be a function.')
      runtime.hooks.push(hook)
    }
  }
}

/**
 * The reload of the connections from the provider source: the next set (scim/runtime-connections.ts),
 * applied to `connections` in place, so the SCIM endpoints, the tokens API and the sign-in step
 * see it from their next call. Configured names are never touched (a row cannot take one).
 */
function connectionReloader (connections: Map<string, ScimConnection>, configured: ReadonlyMap<string, ScimConnection>, rootKey: string): ProvisioningRuntime['reloadConnections'] {
  let current: RuntimeConnectionsContext['current'] = new Map()
  return (declared, schemes) => {
    const result = nextRuntimeConnections(declared, { ...schemes, rootKey, configured, current })
    for (const name of result.removed) connections.delete(name)
    for (const [name, { connection }] of result.connections) connections.set(name, connection)
    current = result.connections
    return result
  }
}

function tenantCheck (configured: ReadonlyMap<string, ScimConnection>, issued: ReadonlySet<string>, rootKey: string): ProvisioningRuntime['warnUnmatchedTenants'] {
  return (log, rowTenants) => {
    const tenants = new Set([...issued, ...[...rowTenants].filter((tenant) => tenant !== undefined)])
    for (const connection of unmatchedConnections(configured.values(), tenants)) {
      const key = `${rootKey}:Provisioning:Connections:${connection.name}:Tenant`
      log.warn({ event: 'provisioning.connection.tenant_unmatched', connection: connection.name, key }, `${key} names a tenant no provider issues (no AllowedTenants entry maps to it, no row of the provider source in use has it) and the connection lists no Schemes: no sign-in belongs to it.`)
    }
  }
}

async function directoryPlugin (app: FastifyInstance, options: DirectoryPluginOptions): Promise<void> {
  const { config } = options
  if (!config.Provisioning.Enabled && !apiKeysEnabled(config, options.rootKey)) {
    app.decorate('directory', undefined)
    app.decorate('provisioning', undefined)
    return
  }
  const store = await openDirectoryStore(config.Provisioning, config.State, options.contentRoot, app.log, options.now, options.rootKey)
  app.addHook('onClose', async () => { await store.close() })
  ;(app as unknown as Record<symbol, DirectoryStore>)[STORE] = store
  if (!config.Provisioning.Enabled) {
    app.decorate('directory', undefined)
    app.decorate('provisioning', undefined)
    return
  }
  const configured = connectionsOf(config.Provisioning.Connections)
  const connections = new Map(configured)
  const runtime: ProvisioningRuntime = {
    store,
    connections,
    deprovisioned: new DeprovisionedIdentities(app.state, undefined, options.now),
    admission: signInAdmission(store, connections),
    reloadConnections: connectionReloader(connections, configured, options.rootKey),
    warnUnmatchedTenants: tenantCheck(configured, issuedTenantsOf(config, options.rootKey), options.rootKey),
    hooks: []
  }
  ;(app as unknown as Record<symbol, ProvisioningRuntime>)[RUNTIME] = runtime
  const { getUser, listUsers, findUsersByIdentity, getGroup, listGroups, groupMembers, groupsOfUser } = store
  const bind = <F extends (...args: never[]) => unknown>(method: F): F => method.bind(store) as F
  app.decorate('directory', {
    getUser: bind(getUser), listUsers: bind(listUsers), findUsersByIdentity: bind(findUsersByIdentity), getGroup: bind(getGroup), listGroups: bind(listGroups), groupMembers: bind(groupMembers), groupsOfUser: bind(groupsOfUser)
  })
  app.decorate('provisioning', provisioningApi(runtime))
  app.log.info({ event: 'provisioning.enabled', store: store.provider, connections: runtime.connections.size }, 'SCIM provisioning enabled')
  if (options.providerSource !== true) runtime.warnUnmatchedTenants(app.log, [])
}

export default fp(directoryPlugin, { name: 'directory', dependencies: ['state'] })
