/**
 * API keys on requests (issue 42): for each enabled ApiKey scheme (`Authentication:Schemes:<Name>`
 * with `Type: ApiKey`), an {@link ApiKeyService} on the API key store beside the directory store
 * (plugins/directory.ts opens it), `app.apiKeys` for the app's own key management, and the ApiKey
 * request-credential type (bearer/credential-types.ts) registered with the bearer handler: a token
 * sent as `Authorization: Bearer` that starts with a scheme's prefix goes to that scheme only
 * (never to JwtBearer or an introspection endpoint), on the routes that accept bearer tokens.
 *
 * - A malformed key (wrong length, alphabet or checksum) is refused before any store access; an
 *   unknown or revoked key is `inactive`, an expired one `expired`, one whose owner may no longer
 *   act `denied`: 401 `invalid_token` for every one (`bearer.refused` names the failure class).
 * - The owner check: a user-owned key's owner deprovisioned by their directory
 *   (`app.provisioning.isDeprovisioned`). `app.session.revokeUser` revokes the user's keys
 *   (reason `owner_revoked`), so they stay refused after the user signs in again.
 * - A revocation on any instance is published on the state store's invalidation channel
 *   (`api-keys:<ids>`); every instance drops those keys from its one-second cache.
 *
 * Not wired yet: the `X-API-Key` header (AllowXApiKeyHeader), the /Account/ApiKeys pages, the
 * per-key and failed-look-up rate limits, a tenant's removal from the provider source.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { ApiKeyService } from '../api-keys/api-key-service.js'
import type { ApiKeyOwner, ApiKeyRevocationReason } from '../api-keys/api-key-store.js'
import { apiKeyStoreBeside } from '../api-keys/open-api-key-store.js'
import type { ApiKeyInstance } from '../api-keys/settings-schema.js'
import type { CredentialType } from '../bearer/credential-types.js'
import { BearerTokenError, type BearerFailure } from '../bearer/failures.js'
import type { BearerAuthentication } from '../bearer/jwt-bearer-scheme.js'
import type { ApplicationConfiguration } from '../providers/application-schema.js'
import { enabledProviderInstances } from '../providers/provider-instances.js'
import type { UserIdentity } from '../session/user-identity.js'
import { API_KEYS_INVALIDATION_PREFIX } from '../state/keys.js'
import { directoryStoreOf } from './directory.js'

/** `app.apiKeys`: the API keys of the enabled ApiKey schemes, for an app's own key pages. @experimental */
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
}

/** The failure class of a refused key (bearer/failures.ts), as `bearer.refused` names it. */
const FAILURES = { malformed: 'malformed', unknown: 'inactive', revoked: 'inactive', expired: 'expired', owner_denied: 'denied' } as const satisfies Record<string, BearerFailure>

/** The ApiKey request-credential type over the schemes' services: a token goes to the scheme whose prefix it starts with. */
export function apiKeyCredentialType (services: readonly ApiKeyService[]): CredentialType {
  const serviceOf = (token: string): ApiKeyService | undefined => services.find((service) => token.startsWith(service.settings.Prefix))
  return {
    type: 'ApiKey',
    recognises: (token) => serviceOf(token) !== undefined,
    // The service keeps its own cache (one second, by digest); its answer is asynchronous.
    cached: () => undefined,
    verify: async (token, _path, names): Promise<BearerAuthentication> => {
      const service = serviceOf(token) as ApiKeyService
      // A route restricted to named JwtBearer schemes (config.bearerSchemes) takes no key.
      if (names !== undefined && !names.has(service.settings.Scheme)) throw new BearerTokenError('issuer')
      const result = await service.authenticate(token)
      if (!result.ok) throw new BearerTokenError(FAILURES[result.refusal])
      const { principal } = result
      return {
        scheme: service.settings.Scheme,
        principal,
        clientId: principal.apiKey.id,
        scopes: principal.access.scopes,
        machine: principal.access.machine,
        expiresAtMs: principal.ticket.expiresAt * 1000
      }
    },
    // A key is a bearer credential: sent as DPoP it is refused (it is bound to no key).
    refusalOf: (_authentication, presentation) => presentation === 'Bearer' ? undefined : 'dpop_unbound'
  }
}

async function apiKeysPlugin (app: FastifyInstance, options: ApiKeysPluginOptions): Promise<void> {
  const { config } = options
  const instances = config.Authentication.Enabled ? enabledProviderInstances(config).flatMap((instance) => instance.protocol === 'ApiKey' ? [instance as ApiKeyInstance] : []) : []
  const directory = directoryStoreOf(app)
  if (instances.length === 0 || directory === undefined) {
    app.decorate('apiKeys', undefined)
    return
  }
  const store = apiKeyStoreBeside(directory, { now: options.now })
  if (store === undefined) throw new TypeError('API keys need the core\'s directory store (Provisioning:Store): an app\'s own directory store has no API key store.')
  const ownerStatus = async (owner: ApiKeyOwner): Promise<'valid' | 'deprovisioned'> =>
    owner.kind === 'user' && app.provisioning !== undefined && await app.provisioning.isDeprovisioned(owner.identity) ? 'deprovisioned' : 'valid'
  // Awaited by the revocation: the other instances drop the keys before its caller's next request.
  const onRevoked = async (ids: readonly string[]): Promise<void> => {
    await app.state.publish(`${API_KEYS_INVALIDATION_PREFIX}${ids.join(' ')}`).catch((error: unknown) => {
      app.log.warn({ event: 'api_key.invalidation_failed', errorName: (error as Error).name }, 'API key revocation not announced to other instances (their cache holds it at most one second)')
    })
  }
  const services = instances.map((instance) => new ApiKeyService({ settings: instance.settings, store, log: app.log, ownerStatus, onRevoked, now: options.now }))
  app.state.subscribe({
    onInvalidate: (message) => {
      if (!message.startsWith(API_KEYS_INVALIDATION_PREFIX)) return
      const ids = message.slice(API_KEYS_INVALIDATION_PREFIX.length).split(' ').filter((id) => id !== '')
      for (const service of services) service.invalidate(ids)
    },
    // Messages may have been missed: forget every cached key.
    onReset: () => { for (const service of services) service.invalidate() }
  })
  const byName = new Map(services.map((service) => [service.settings.Scheme, service]))
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
  // Revoking a user revokes their keys too (issue 42, item 4): a key never outlives its owner's revocation.
  const session = app.session as { revokeUser: (identity: UserIdentity) => Promise<number>, revokeSubject: (identity: UserIdentity) => Promise<number> }
  const revokeSessions = session.revokeUser
  const revokeUser = async (identity: UserIdentity): Promise<number> => {
    const ended = await revokeSessions(identity)
    await revokeAllOf({ kind: 'user', identity }, 'owner_revoked')
    return ended
  }
  session.revokeUser = revokeUser
  session.revokeSubject = revokeUser
  app.requestCredentials.registerType(apiKeyCredentialType(services))
  app.log.info({ event: 'api_keys.enabled', schemes: [...byName.keys()] }, 'API keys accepted on bearer routes')
}

export default fp(apiKeysPlugin, { name: 'api-keys', dependencies: ['state', 'session', 'directory', 'bearer'] })
