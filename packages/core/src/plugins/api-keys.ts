/**
 * API keys on requests (issue 42): for each enabled ApiKey scheme (`Authentication:Schemes:<Name>`
 * with `Type: ApiKey`), an {@link ApiKeyService} on the API key store beside the directory store
 * (plugins/directory.ts opens it), `app.apiKeys` for the app's own key management, and the ApiKey
 * request-credential type (api-keys/api-key-credential-type.ts) registered with the bearer
 * handler: a key sent as `Authorization: Bearer`, or as `X-API-Key` where its scheme sets
 * AllowXApiKeyHeader, goes to the scheme of its prefix only (never to JwtBearer or an
 * introspection endpoint), on the routes that accept bearer tokens.
 *
 * - A malformed key (wrong length, alphabet or checksum) is refused before any store access; an
 *   unknown or revoked key is `inactive`, an expired one `expired`, one whose owner may no longer
 *   act `denied`: 401 `invalid_token` for every one (`bearer.refused` names the failure class).
 * - The owner check: a user-owned key's owner deprovisioned by their directory
 *   (`app.provisioning.isDeprovisioned`); a tenant-owned key's tenant no longer named by the
 *   provider source (plugins/runtime-providers.ts `sourceTenantsOf`; each instance reads the
 *   source on every change). `app.session.revokeUser` revokes the user's keys (`owner_revoked`),
 *   a tenant's removal from the source its tenant's keys (`tenant_removed`).
 * - A revocation on any instance is published on the state store's invalidation channel
 *   (`api-keys:<ids>`); every instance drops those keys from its one-second cache.
 * - Limits (RateLimits:ApiKeyRequestsPerWindow per key, RateLimits:ApiKeyFailuresPerWindow per
 *   address), counted in the state store (api-keys/api-key-limits.ts).
 * - Keys kept in memory (the memory directory store) outside Development: one warning at
 *   startup, naming `Provisioning:Store:Provider`, as the embedded stores warn.
 *
 * - A scheme's TenantAdministratorPolicy is looked up by name when asked (the app's policies are
 *   added before `ready()`); a name no policy has fails `ready()`. The key pages, routes/api-keys.ts.
 *
 * A SCIM deactivation or deletion revokes the person's keys (`deprovisioned`, plugins/scim.ts through
 * scim/deprovisioning.ts); until then the owner check refuses them.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { ApiKeyService } from '../api-keys/api-key-service.js'
import type { ApiKeyOwner, ApiKeyRevocationReason } from '../api-keys/api-key-store.js'
import { apiKeyStoreBeside } from '../api-keys/open-api-key-store.js'
import type { ApiKeyInstance, ApiKeySettings } from '../api-keys/settings-schema.js'
import { apiKeyCredentialType } from '../api-keys/api-key-credential-type.js'
import { ApiKeyLimits } from '../api-keys/api-key-limits.js'
import { MemoryApiKeyStore } from '../api-keys/memory-api-key-store.js'
import { isDevelopment } from '../environment-name.js'
import { decidePolicy, type AuthorizationPolicy } from '../authorization/policies.js'
import { keyOfInstance } from '../config/provider-type.js'
import { createError } from '../errors.js'
import type { ApplicationConfiguration } from '../providers/application-schema.js'
import { enabledProviderInstancesUnder } from '../providers/provider-instances.js'
import type { UserIdentity } from '../session/user-identity.js'
import { API_KEYS_INVALIDATION_PREFIX } from '../state/keys.js'
import { namedPolicyOf } from './authorization.js'
import { directoryStoreOf } from './directory.js'
import { sourceTenantsOf } from './runtime-providers.js'
import type { SourceTenants } from '../providers/source-tenants.js'

/** `app.apiKeys`: the API keys of the enabled ApiKey schemes, for an app's own key pages. @public @experimental */
export interface ApiKeysApi {
  /** The enabled ApiKey schemes' names, in configuration order. */
  readonly schemes: readonly string[]
  /** The service of `scheme` (default: the first enabled ApiKey scheme): create, list, revoke. Throws for an unknown scheme. */
  scheme: (name?: string) => ApiKeyService
  /** Revokes every key of `owner` in every scheme (the store holds all schemes' keys); how many. */
  revokeAllOf: (owner: ApiKeyOwner, reason: ApiKeyRevocationReason) => Promise<number>
}

declare module 'fastify' {
  interface FastifyInstance {
    /** API keys (issue 42); undefined when no ApiKey scheme is enabled. @experimental */
    apiKeys: ApiKeysApi | undefined
  }
}

export interface ApiKeysPluginOptions {
  readonly config: ApplicationConfiguration
  readonly now: () => number
  /** Outside Development, keys kept in memory are warned about at startup. */
  readonly environmentName: string
  readonly rootKey: string
}

/** The keys' rate limits, counted in the state store; none when `RateLimits:Enabled` is false. */
function limitsOf (app: FastifyInstance, config: ApplicationConfiguration): ApiKeyLimits | undefined {
  const limits = config.RateLimits
  if (!limits.Enabled || app.state.increment === undefined) return undefined
  return new ApiKeyLimits({ increment: app.state.increment.bind(app.state), requestsPerWindow: limits.ApiKeyRequestsPerWindow, failuresPerWindow: limits.ApiKeyFailuresPerWindow, windowMs: limits.WindowSeconds * 1000 })
}

/**
 * A scheme's TenantAdministratorPolicy (Owners with Tenant), or undefined: met when the policy it
 * names allows the caller (a step-up it would ask for is not met), looked up on each use.
 */
export function tenantAdministratorOf (app: FastifyInstance, settings: Pick<ApiKeySettings, 'Owners' | 'TenantAdministratorPolicy'>): AuthorizationPolicy | undefined {
  const name = settings.TenantAdministratorPolicy.trim()
  if (name === '' || !settings.Owners.includes('Tenant')) return undefined
  return {
    name,
    requirement: (principal) => {
      const policy = namedPolicyOf(app.authorization, name)
      return policy !== undefined && decidePolicy(policy, principal).outcome === 'allow'
    }
  }
}

/** At `ready()`: every TenantAdministratorPolicy names a registered policy. */
function checkTenantAdministrators (app: FastifyInstance, instances: readonly ApiKeyInstance[]): void {
  app.addHook('onReady', async () => {
    for (const instance of instances) {
      const policy = tenantAdministratorOf(app, instance.settings)
      if (policy !== undefined && namedPolicyOf(app.authorization, policy.name) === undefined) {
        throw createError('APP_ERR_API_KEY_POLICY_UNKNOWN', keyOfInstance(instance, 'TenantAdministratorPolicy'), policy.name)
      }
    }
  })
}

/**
 * A key never outlives its owner (issue 42, item 4): revoking a user revokes their keys
 * (`owner_revoked`), and a tenant removed from the provider source has its keys revoked
 * (`tenant_removed`) on every instance that reads the change (the first revokes them).
 */
function revokeWithTheirOwners (app: FastifyInstance, revokeAllOf: ApiKeysApi['revokeAllOf'], tenants: SourceTenants | undefined): void {
  const session = app.session as { revokeUser: (identity: UserIdentity) => Promise<number>, revokeSubject: (identity: UserIdentity) => Promise<number> }
  const revokeSessions = session.revokeUser
  const revokeUser = async (identity: UserIdentity): Promise<number> => {
    const ended = await revokeSessions(identity)
    await revokeAllOf({ kind: 'user', identity }, 'owner_revoked')
    return ended
  }
  session.revokeUser = revokeUser
  session.revokeSubject = revokeUser
  tenants?.onRemoved(async (removed) => {
    for (const tenant of removed) {
      await revokeAllOf({ kind: 'tenant', tenant }, 'tenant_removed').catch((error: unknown) => {
        app.log.error({ event: 'api_keys.tenant_revocation_failed', tenant, errorName: (error as Error).name }, 'the keys of a removed tenant could not be revoked; they are refused on each use')
      })
    }
  })
}

async function apiKeysPlugin (app: FastifyInstance, options: ApiKeysPluginOptions): Promise<void> {
  const { config } = options
  const instances = config.Authentication.Enabled ? enabledProviderInstancesUnder(config, options.rootKey).flatMap((instance) => instance.protocol === 'ApiKey' ? [instance as ApiKeyInstance] : []) : []
  const directory = directoryStoreOf(app)
  if (instances.length === 0 || directory === undefined) {
    app.decorate('apiKeys', undefined)
    return
  }
  const store = apiKeyStoreBeside(directory, { now: options.now })
  if (store === undefined) throw new TypeError('API keys need the core\'s directory store (Provisioning:Store): an app\'s own directory store has no API key store.')
  if (store instanceof MemoryApiKeyStore && !isDevelopment(options.environmentName)) {
    app.log.warn({ event: 'api_keys.store.not_persisted', key: `${options.rootKey}:Provisioning:Store:Provider` },
      'API keys are kept in memory: a restart forgets every key and other instances never see them; use the PostgreSql directory store (or the embedded store on Node.js 22.13 or later)')
  }
  const tenants = sourceTenantsOf(app)
  const ownerStatus = async (owner: ApiKeyOwner): Promise<'valid' | 'deprovisioned' | 'tenant_removed'> => {
    // Before the source was first read its tenants are unknown: the revocations in the store decide.
    if (owner.kind === 'tenant') return tenants?.present(owner.tenant) === false ? 'tenant_removed' : 'valid'
    return app.provisioning !== undefined && await app.provisioning.isDeprovisioned(owner.identity) ? 'deprovisioned' : 'valid'
  }
  // Awaited by the revocation: the other instances drop the keys before its caller's next request.
  const onRevoked = async (ids: readonly string[]): Promise<void> => {
    await app.state.publish(`${API_KEYS_INVALIDATION_PREFIX}${ids.join(' ')}`).catch((error: unknown) => {
      app.log.warn({ event: 'api_key.invalidation_failed', errorName: (error as Error).name }, 'API key revocation not announced to other instances (their cache holds it at most one second)')
    })
  }
  const services = instances.map((instance) => {
    const tenantAdministrator = tenantAdministratorOf(app, instance.settings)
    return new ApiKeyService({ scheme: instance.scheme, settings: instance.settings, store, log: app.log, ownerStatus, onRevoked, now: options.now, ...(tenantAdministrator === undefined ? {} : { tenantAdministrator }) })
  })
  checkTenantAdministrators(app, instances)
  app.state.subscribe({
    onInvalidate: (message) => {
      if (!message.startsWith(API_KEYS_INVALIDATION_PREFIX)) return
      const ids = message.slice(API_KEYS_INVALIDATION_PREFIX.length).split(' ').filter((id) => id !== '')
      for (const service of services) service.invalidate(ids)
    },
    // Messages may have been missed: forget every cached key.
    onReset: () => { for (const service of services) service.invalidate() }
  })
  const byName = new Map(services.map((service) => [service.scheme, service]))
  // Every service revokes in the one store; the first announces the ids (every instance drops them in every scheme).
  const revokeAllOf = async (owner: ApiKeyOwner, reason: ApiKeyRevocationReason): Promise<number> => await (services[0] as ApiKeyService).revokeAllOf(owner, reason)
  app.decorate('apiKeys', {
    schemes: [...byName.keys()],
    scheme: (name) => {
      const service = name === undefined ? services[0] : byName.get(name)
      if (service === undefined) throw new TypeError(`app.apiKeys.scheme: ${String(name)} is not an enabled ApiKey scheme.`)
      return service
    },
    revokeAllOf
  } satisfies ApiKeysApi)
  revokeWithTheirOwners(app, revokeAllOf, tenants)
  app.requestCredentials.registerType(apiKeyCredentialType(services, limitsOf(app, config)))
  app.log.info({ event: 'api_keys.enabled', schemes: [...byName.keys()] }, 'API keys accepted on bearer routes')
}

export default fp(apiKeysPlugin, { name: 'api-keys', dependencies: ['state', 'session', 'directory', 'bearer', 'authorization'] })
