/**
 * Providers added at runtime (issue 28; docs/providers/runtime-providers.md): when the
 * app passes a `providerSource`, the core registers parametric routes once at startup
 * (`/signin-:scheme`, `/signout-callback-:scheme`, `/backchannel-logout-:scheme`,
 * `/Saml2/:scheme/Acs`, `/Saml2/:scheme/Metadata`, `/Saml2/:scheme/Logout`; the static routes of
 * configured schemes win in the router) that find the runtime instance per request and call the
 * endpoint it declares for the path and method; a path no runtime provider owns gets a safe
 * answer (a callback: a lost correlation; else the 404 problem). The source is read when the app
 * is ready and on `app.authentication.reloadProviders()`; the set of providers in use
 * (providers/runtime-provider-set.ts) validates each definition like configuration
 * (providers/runtime-definitions.ts), and the change is announced on the state store's
 * invalidation channel so every instance reloads. Instances are opened as configured ones are
 * (plugins/providers/open-provider.ts), but lazily: discovery or metadata is fetched on first use
 * (challenge), then refreshed by its own schedule. Each successful read also records the tenants
 * the source names (providers/source-tenants.ts, {@link sourceTenantsOf}): API keys of a tenant
 * the source no longer names are refused and revoked (plugins/api-keys.ts).
 */
import { randomUUID } from 'node:crypto'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ApplicationConfiguration } from '../providers/application-schema.js'
import { defaultPathsOf, SCHEME_TYPES } from '../providers/provider-types.js'
import type { ConfigurationProblem } from '../config/bind.js'
import { configuredTenantsOf, internalHostAllowanceOf, internalTargetProblem, outboundUrlsOf, validateRuntimeProvider, type RuntimeProviderDefinition, type ValidatedRuntimeProvider } from '../providers/runtime-definitions.js'
import { resolvedTargetProblem, type InternalHostAllowance } from '../http/outbound-address.js'
import { publicAddressDispatcher } from '../http/public-address-dispatcher.js'
import { isDevelopment } from '../environment-name.js'
import { RuntimeProviderSet, type ProviderReloadResult, type ReloadProvidersOptions } from '../providers/runtime-provider-set.js'
import { ENDPOINT_KINDS, type ProviderEndpointKind } from '../providers/provider.js'
import { PROVIDERS_INVALIDATION_MESSAGE } from '../state/keys.js'
import { providerIndexKeyOf } from '../session/session-store.js'
import { sendError } from '../http/responses.js'
import { messageOf } from '../errors.js'
import { sessionStoreOf } from './session.js'
import { provisioningRuntimeOf } from './directory.js'
import { verifiedAtMsOf } from '../providers/domain-ownership.js'
import type { ConnectionReloadResult } from '../providers/runtime-provider-set.js'
import { removeProvider, setProviderReloader } from './authentication.js'
import { openProvider } from './providers/open-provider.js'
import { configuredApplicationTenantsOf, SourceTenants } from '../providers/source-tenants.js'
import { enabledProviderInstancesUnder } from '../providers/provider-instances.js'

const SOURCE_TENANTS = Symbol('runtime-providers.tenants')

/** The tenants the app's provider source names, or undefined without a provider source. */
export function sourceTenantsOf (app: FastifyInstance): SourceTenants | undefined {
  return (app as unknown as Record<symbol, SourceTenants | undefined>)[SOURCE_TENANTS]
}

/**
 * The app's provider source: the definitions of every runtime provider, read at start and on each
 * reload. It is given the app, so it can open the secrets its rows keep sealed
 * (`app.dataProtection.unprotectSecret`, docs/providers/runtime-providers.md).
 *
 * @public @experimental
 */
export type ProviderSource = (app: FastifyInstance) => Promise<readonly RuntimeProviderDefinition[]> | readonly RuntimeProviderDefinition[]

export interface RuntimeProvidersOptions {
  readonly config: ApplicationConfiguration
  readonly environmentName: string
  readonly rootKey: string
  readonly source: ProviderSource
}

/** The kind of endpoint each path key serves ({@link ENDPOINT_KINDS}). */
const KIND_OF_PATH_KEY = new Map(Object.entries(ENDPOINT_KINDS).map(([kind, rules]) => [rules.pathKey as string, kind as ProviderEndpointKind]))

/**
 * The parametric routes: one per endpoint kind and method of the protocols a provider source may
 * use (the named schemes' types), at the kind's default path with `:scheme` for the name (a
 * runtime provider's paths are fixed to the defaults). They are registered once, before any
 * runtime provider exists, with the limits of their kind, as a configured provider's endpoints of
 * the same kind have them.
 */
const ROUTES = SCHEME_TYPES.flatMap((type) => Object.entries(defaultPathsOf(type, ':scheme')).flatMap(([key, url]) => {
  const kind = KIND_OF_PATH_KEY.get(key)!
  return ENDPOINT_KINDS[kind].methods.map((method) => ({ method, url, kind }))
}))

/** The request's path without the query (runtime paths are compared case-insensitively). */
const pathOf = (url: string): string => url.indexOf('?') === -1 ? url : url.slice(0, url.indexOf('?'))

/**
 * Outside Development, a host name of a definition's URLs that resolves to an internal address is
 * refused when the definition is applied, naming the key (the literal forms are refused by
 * validation; every connection is checked again by the dispatcher).
 */
async function refuseInternalTargets (validated: ValidatedRuntimeProvider, options: RuntimeProvidersOptions, allowance: InternalHostAllowance): Promise<void> {
  if (isDevelopment(options.environmentName)) return
  const at = validated.instance.keyPrefix
  const settings = validated.instance.settings as unknown as Record<string, unknown>
  const problems: ConfigurationProblem[] = []
  for (const { key, url } of outboundUrlsOf(settings)) {
    const problem = await resolvedTargetProblem(url, allowance)
    if (problem !== undefined) problems.push(internalTargetProblem(at, key, problem, options.rootKey))
  }
  if (problems.length > 0) throw Object.assign(new Error('internal target'), { problems })
}

/**
 * A SAML2 definition naming (`IdpEntityId`) an IdP that another provider already trusts is refused,
 * naming the key; one whose metadata claims it is unavailable once the metadata loads (issue 33,
 * item 6: a customer's IdP declaring another's entity id).
 */
function refuseTakenIssuer (validated: ValidatedRuntimeProvider, issuerTaken: (issuer: string) => boolean): void {
  const instance = validated.instance
  if (instance.protocol !== 'Saml2') return
  const entityId = instance.settings.IdpEntityId.trim()
  if (entityId === '' || !issuerTaken(entityId)) return
  const key = `${instance.keyPrefix}:IdpEntityId`
  throw Object.assign(new Error('issuer taken'), { problems: [{ key, message: `${key} names an IdP that another provider already trusts; an IdP belongs to one provider.` }] })
}

/** The set of runtime providers, on this app: opened, registered and revoked through the app's plugins. */
function runtimeProviderSet (app: FastifyInstance, options: RuntimeProvidersOptions): RuntimeProviderSet {
  const allowance = internalHostAllowanceOf(options.config)
  // One pool of connections for every provider from the source; outside Development they reach only public addresses.
  const dispatcher = isDevelopment(options.environmentName) ? undefined : publicAddressDispatcher(allowance)
  if (dispatcher !== undefined) app.addHook('onClose', async () => { await dispatcher.close() })
  const configuredTenants = configuredTenantsOf(options.config, options.rootKey)
  return new RuntimeProviderSet({
    rootKey: options.rootKey,
    validate: (definition) => validateRuntimeProvider(definition, options),
    open: async (validated) => {
      await refuseInternalTargets(validated, options, allowance)
      const scheme = validated.instance.scheme
      const issuerTaken = (issuer: string): boolean => [...app.authentication.providers.values()].some((provider) => provider.scheme !== scheme && provider.issuer?.() === issuer)
      refuseTakenIssuer(validated, issuerTaken)
      return await openProvider(app, {
        instance: validated.instance,
        environmentName: options.environmentName,
        runtime: { ...(validated.tenant === undefined ? {} : { tenant: validated.tenant }), ...(dispatcher === undefined ? {} : { dispatcher }), issuerTaken }
      })
    },
    registered: () => app.authentication.providers,
    register: (provider) => { app.authentication.registerProvider(provider) },
    unregister: (scheme) => { removeProvider(app.authentication, scheme) },
    endSessions: async (scheme) => { await sessionStoreOf(app).endIndexedSessions(providerIndexKeyOf(scheme)) },
    configuredTenants: () => configuredTenants
  })
}

/**
 * A path no runtime provider owns: a callback or ACS (a sign-in in flight when its provider was
 * removed, or a guess) fails as a sign-in whose correlation is lost; anything else is the 404
 * problem. Never the fallback policy's login redirect, which would carry the code in ReturnUrl.
 */
function unknownScheme (request: FastifyRequest, reply: FastifyReply, kind: ProviderEndpointKind): FastifyReply {
  if (kind === 'callback' || kind === 'acs') return request.server.externalSignIn.fail(request, reply, UNKNOWN_SCHEME, 'correlation')
  // A provider's server posting a logout token for a provider that is gone: the endpoint's own refusal.
  if (kind === 'back-channel-logout') return reply.code(400).header('cache-control', 'no-store').send({ error: 'invalid_request' })
  return sendError(request, reply, 404, { code: 'APP_ERR_NOT_FOUND', detail: messageOf('APP_ERR_NOT_FOUND') })
}

/**
 * With provisioning on, the SCIM connections the rows declare (scim/runtime-connections.ts),
 * applied after the providers, against the sign-in schemes from the source now in use; each
 * refusal is logged naming its keys. Undefined without provisioning.
 */
function reloadConnections (app: FastifyInstance, definitions: readonly RuntimeProviderDefinition[]): ConnectionReloadResult | undefined {
  const provisioning = provisioningRuntimeOf(app)
  if (provisioning === undefined) return undefined
  const tenants = new Map(definitions.flatMap((definition) => typeof definition?.scheme === 'string' ? [[definition.scheme, definition.tenant === undefined ? undefined : String(definition.tenant)] as const] : []).reverse())
  const signIn = [...app.authentication.providers.values()].filter((provider) => provider.credentialScheme === undefined)
  const runtimeSchemes = new Map(signIn.filter((provider) => provider.runtime === true).map((provider) => [provider.scheme, tenants.get(provider.scheme)]))
  const configuredSchemes = new Set(signIn.filter((provider) => provider.runtime !== true).map((provider) => provider.scheme))
  const declared = definitions.flatMap((definition) => {
    if (definition?.connection === undefined || definition.connection === null) return []
    const createdAtMs = verifiedAtMsOf(definition.createdAt)
    const scheme = typeof definition.scheme === 'string' ? definition.scheme : ''
    const verifiedDomains = Array.isArray(definition.domains) ? definition.domains.flatMap((domain) => domain?.verified === true && typeof domain.name === 'string' ? [domain.name] : []) : []
    return [{ scheme, declaration: definition.connection, tenant: definition.tenant === undefined ? undefined : String(definition.tenant), verifiedDomains, ...(createdAtMs === undefined ? {} : { createdAtMs }) }]
  })
  const { added, changed, removed, refused } = provisioning.reloadConnections(declared, { runtimeSchemes, configuredSchemes })
  provisioning.warnUnmatchedTenants(app.log, runtimeSchemes.values())
  for (const refusal of refused) {
    app.log.warn({ event: 'provisioning.connection.refused', connection: refusal.connection, provider: refusal.scheme, kept: refusal.kept, problems: refusal.problems }, 'SCIM connection from the provider source refused')
  }
  return { added, changed, removed, refused }
}

/** The provider named in the log for a path no runtime provider owns (the path's text is not logged). */
const UNKNOWN_SCHEME = 'unknown'

/** The app's safe 404: the path's runtime provider has no endpoint of the request's method (HEAD is a GET). */
function notFound (reply: FastifyReply): FastifyReply {
  reply.callNotFound()
  return reply
}

/**
 * Registers the parametric routes; each dispatches to the endpoint of its kind and the request's
 * method that the runtime provider owning the path declares, else answers safely.
 */
function registerRoutes (app: FastifyInstance, set: RuntimeProviderSet): void {
  for (const route of ROUTES) {
    const { rateLimitBucket, postBodyLimit } = ENDPOINT_KINDS[route.kind]
    app.route({
      method: route.method,
      url: route.url,
      ...(route.method === 'POST' && postBodyLimit !== undefined ? { bodyLimit: postBodyLimit } : {}),
      config: { allowAnonymous: true, ...(rateLimitBucket === undefined ? {} : { rateLimitBucket }) },
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        const endpoints = set.find(pathOf(request.url), route.kind)
        if (endpoints === undefined) return unknownScheme(request, reply, route.kind)
        const method = request.method === 'HEAD' ? 'GET' : request.method
        const endpoint = endpoints.find((candidate) => candidate.method === method)
        return endpoint === undefined ? notFound(reply) : await endpoint.handle(request, reply)
      }
    })
  }
}

async function runtimeProviders (app: FastifyInstance, options: RuntimeProvidersOptions): Promise<void> {
  const set = runtimeProviderSet(app, options)
  const tenants = new SourceTenants(configuredApplicationTenantsOf(enabledProviderInstancesUnder(options.config, options.rootKey)))
  ;(app as unknown as Record<symbol, SourceTenants>)[SOURCE_TENANTS] = tenants
  registerRoutes(app, set)
  const instanceId = randomUUID()
  // One reload at a time, in order: a reload reads the source after the one before has applied.
  let queue: Promise<unknown> = Promise.resolve()
  function reloadLocally (reloadOptions: ReloadProvidersOptions, trigger: string): Promise<ProviderReloadResult> {
    const run = queue.then(async () => {
      const definitions = await options.source(app)
      if (!Array.isArray(definitions)) throw new TypeError('providerSource must return an array of provider definitions')
      const applied = await set.apply(definitions, reloadOptions)
      const connections = reloadConnections(app, definitions)
      const result = connections === undefined ? applied : { ...applied, connections }
      await tenants.update(definitions)
      for (const refusal of result.refused) {
        app.log.warn({ event: 'external.runtime_provider.refused', provider: refusal.scheme, problems: refusal.problems }, 'provider from the provider source refused')
      }
      for (const refusal of result.refusedDomains) {
        app.log.warn({ event: 'external.runtime_provider.domain_refused', provider: refusal.scheme, key: refusal.key, domain: refusal.domain }, 'verified domain of a provider from the provider source refused')
      }
      app.log.info({ event: 'external.runtime_providers.reloaded', trigger, added: result.added, removed: result.removed, refused: result.refused.map((refusal) => refusal.scheme), ...(connections === undefined ? {} : { connections: { added: connections.added, changed: connections.changed, removed: connections.removed } }) }, 'providers from the provider source applied')
      return result
    })
    queue = run.catch(() => {})
    return run
  }
  function reloadQuietly (trigger: string): void {
    reloadLocally({}, trigger).catch((error: unknown) => {
      app.log.error({ event: 'external.runtime_providers.source_failed', trigger, errorName: (error as Error | null)?.name }, 'the provider source could not be read; the providers in use are kept')
    })
  }
  const announcement = `${PROVIDERS_INVALIDATION_MESSAGE} ${instanceId}`
  app.state.subscribe({
    onInvalidate: (message) => {
      if (message.startsWith(`${PROVIDERS_INVALIDATION_MESSAGE} `) && message !== announcement) reloadQuietly('announcement')
    },
    // Announcements may have been missed while the subscription was down: read the source again.
    onReset: () => { reloadQuietly('reset') }
  })
  setProviderReloader(app.authentication, async (reloadOptions) => {
    const result = await reloadLocally(reloadOptions, 'call')
    try {
      await app.state.publish(announcement)
    } catch (error) {
      // The others read the source again when their subscription is back (onReset above).
      app.log.warn({ event: 'external.runtime_providers.announce_failed', errorName: (error as Error | null)?.name }, 'the provider change could not be announced to the other instances yet')
    }
    return result
  })
  app.addHook('onReady', async () => { reloadQuietly('start'); await queue })
  app.addHook('onClose', async () => { await queue; set.close() })
}

export default fp(runtimeProviders, { name: 'runtime-providers', dependencies: ['authentication', 'external-sign-in', 'external-providers'] })
