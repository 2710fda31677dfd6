/**
 * Providers added at runtime (issue 28; docs/providers.md "Providers added at runtime"): when the
 * app passes a `providerSource`, the core registers parametric routes once at startup
 * (`/signin-:scheme`, `/signout-callback-:scheme`, `/backchannel-logout-:scheme`,
 * `/Saml2/:scheme/Acs`, `/Saml2/:scheme/Metadata`, `/Saml2/:scheme/Logout`; the static routes of
 * configured schemes win in the router) that find the runtime instance per request and call the
 * endpoint it declares for the path and method; a path no runtime provider owns gets a safe
 * answer (a callback: a lost correlation; else the 404 problem). The source is read when the app
 * is ready and on `app.authentication.reloadProviders()`; each definition is validated like configuration
 * (providers/runtime-definitions.ts), and the change is announced on the state store's
 * invalidation channel so every instance reloads. Instances open lazily: discovery or metadata is
 * fetched on first use (challenge), then refreshed by its own schedule.
 */
import { createHash, randomUUID } from 'node:crypto'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { KeyRing } from '../data-protection/key-ring.js'
import type { ApplicationConfiguration } from '../config/schema.js'
import { ProviderConflictError } from '../providers/registry.js'
import { runtimeSectionKey, validateRuntimeProvider, type RuntimeProviderDefinition, type ValidatedRuntimeProvider } from '../providers/runtime-definitions.js'
import { PROVIDERS_INVALIDATION_MESSAGE } from '../state/keys.js'
import { providerIndexKeyOf } from '../session/session-store.js'
import type { RateLimitBucket } from './rate-limits.js'
import type { ProviderEndpoint, ProviderEndpointKind } from '../providers/provider.js'
import { sendError } from '../http/responses.js'
import { messageOf } from '../errors.js'
import { BACK_CHANNEL_LOGOUT_BODY_LIMIT, FORM_POST_BODY_LIMIT } from './providers/openid-connect.js'
import { ACS_BODY_LIMIT } from './providers/saml2-instance.js'
import { sessionStoreOf } from './session.js'
import { removeProvider, setProviderReloader, type ProviderReloadResult, type RefusedProvider, type ReloadProvidersOptions } from './authentication.js'
import { openRuntimeInstance, type RuntimeInstance } from './providers/runtime-instance.js'

/** The app's provider source: the definitions of every runtime provider, read at start and on each reload. */
export type ProviderSource = () => Promise<readonly RuntimeProviderDefinition[]> | readonly RuntimeProviderDefinition[]

export interface RuntimeProvidersOptions {
  readonly config: ApplicationConfiguration
  readonly environmentName: string
  readonly keyRing: KeyRing
  readonly rootKey: string
  readonly source: ProviderSource
}

interface Entry {
  readonly fingerprint: string
  /** {@link identityFingerprintOf}: a change ends the provider's sessions when the reload asks to revoke. */
  readonly identity: string
  readonly instance: RuntimeInstance
}

/**
 * The parametric routes: method, pattern, and the kind of endpoint a runtime path may be. They are
 * registered once, before any runtime provider exists, so their body limits and rate-limit groups
 * are set here, to those of the configured providers' endpoints of the same kind.
 */
const ROUTES: ReadonlyArray<{ method: 'GET' | 'POST', url: string, kind: ProviderEndpointKind, bucket?: RateLimitBucket, bodyLimit?: number }> = [
  { method: 'GET', url: '/signin-:scheme', kind: 'callback', bucket: 'callback' },
  { method: 'POST', url: '/signin-:scheme', kind: 'callback', bucket: 'callback', bodyLimit: FORM_POST_BODY_LIMIT },
  { method: 'GET', url: '/signout-callback-:scheme', kind: 'signed-out-callback', bucket: 'sign-out' },
  { method: 'POST', url: '/backchannel-logout-:scheme', kind: 'back-channel-logout', bucket: 'logout-receiver', bodyLimit: BACK_CHANNEL_LOGOUT_BODY_LIMIT },
  { method: 'POST', url: '/Saml2/:scheme/Acs', kind: 'acs', bucket: 'callback', bodyLimit: ACS_BODY_LIMIT },
  { method: 'GET', url: '/Saml2/:scheme/Metadata', kind: 'metadata' },
  { method: 'GET', url: '/Saml2/:scheme/Logout', kind: 'logout', bucket: 'logout-receiver' },
  { method: 'POST', url: '/Saml2/:scheme/Logout', kind: 'logout', bucket: 'logout-receiver', bodyLimit: ACS_BODY_LIMIT }
]

/** The request's path without the query, lower case (runtime paths are compared case-insensitively). */
const pathOf = (url: string): string => (url.indexOf('?') === -1 ? url : url.slice(0, url.indexOf('?'))).toLowerCase()

/** A fingerprint of a definition (secrets included; kept in memory only) to tell a changed one from an unchanged one. */
const fingerprintOf = (definition: RuntimeProviderDefinition): string => createHash('sha256').update(JSON.stringify(definition)).digest('base64url')

/**
 * The settings that decide who a provider's users are, and so whether its existing sessions still
 * speak for them: the protocol, the IdP trusted (OpenID Connect `Authority` and `ClientId`, a SAML2
 * IdP's `IdpEntityId` and `MetadataUrl`), the `ClaimMappings` that choose the subject and roles,
 * and the tenant key. A replacement that changes none of them (a display name, a rotated secret or
 * certificate, domains, timings) keeps the sessions, even with `revokeSessions`.
 */
const IDENTITY_KEYS = ['type', 'authority', 'clientid', 'idpentityid', 'metadataurl', 'claimmappings']

/** A fingerprint of a definition's {@link IDENTITY_KEYS} (keys compared case-insensitively, as the binder does). */
function identityFingerprintOf (definition: RuntimeProviderDefinition): string {
  const settings = definition.settings ?? {}
  const picked = IDENTITY_KEYS.map((key) => Object.entries(settings).filter(([name]) => name.toLowerCase() === key).map(([, value]) => value))
  return createHash('sha256').update(JSON.stringify([definition.tenant ?? null, picked])).digest('base64url')
}

class RuntimeProviderSet {
  readonly #entries = new Map<string, Entry>()
  readonly #byPath = new Map<string, { entry: Entry, kind: ProviderEndpointKind }>()

  constructor (private readonly app: FastifyInstance, private readonly options: RuntimeProvidersOptions) {}

  /** The endpoints a runtime provider declares at `request`'s path when they are of `kind`, or undefined when none owns it. */
  find (request: FastifyRequest, kind: ProviderEndpointKind): readonly ProviderEndpoint[] | undefined {
    const path = pathOf(request.url)
    const found = this.#byPath.get(path)
    return found?.kind === kind ? found.entry.instance.provider.endpoints.filter((endpoint) => endpoint.path.toLowerCase() === path) : undefined
  }

  #configured: ReadonlySet<string> | undefined

  /**
   * The paths of the configured providers, lower case. Read once, at the first addition (the app
   * is ready by then, and configured providers are registered before ready and never removed),
   * instead of once per provider added.
   */
  #configuredPaths (): ReadonlySet<string> {
    this.#configured ??= new Set([...this.app.authentication.providers.values()].filter((provider) => provider.runtime !== true).flatMap((provider) => provider.paths.map((path) => path.toLowerCase())))
    return this.#configured
  }

  #remove (scheme: string): void {
    const entry = this.#entries.get(scheme)
    if (entry === undefined) return
    removeProvider(this.app.authentication, scheme)
    for (const [path, target] of this.#byPath) if (target.entry === entry) this.#byPath.delete(path)
    this.#entries.delete(scheme)
    entry.instance.stop()
  }

  /** Adds one validated provider; a refusal (name, path or domain taken) adds nothing. */
  #add (validated: ValidatedRuntimeProvider, fingerprint: string, identity: string): RefusedProvider | undefined {
    const scheme = validated.instance.scheme
    const at = runtimeSectionKey(scheme, this.options.rootKey)
    let instance: RuntimeInstance
    try {
      instance = openRuntimeInstance(this.app, { ...this.options, name: scheme, instance: validated.instance, runtime: validated.tenant === undefined ? {} : { tenant: validated.tenant } })
    } catch (error) {
      // A key that validation passed but the protocol cannot open (its own message names the key, never a value).
      const problems = (error as { problems?: RefusedProvider['problems'] }).problems
      return { scheme, problems: problems ?? [{ key: at, message: `${at} could not be opened (${(error as Error | null)?.name ?? 'error'}).` }] }
    }
    const configuredPaths = this.#configuredPaths()
    const taken = instance.provider.paths.find((path) => this.#byPath.has(path.toLowerCase()) || configuredPaths.has(path.toLowerCase()))
    if (taken !== undefined) {
      instance.stop()
      return { scheme, problems: [{ key: at, message: `${at} would use the endpoint path of another provider (a configured one, or one from the source whose name differs in case only); choose another scheme name.` }] }
    }
    try {
      this.app.authentication.registerProvider(instance.provider)
    } catch (error) {
      instance.stop()
      const domain = error instanceof ProviderConflictError && error.domain !== undefined
      return { scheme, problems: [{ key: domain ? `${at}:Domains` : at, message: domain ? `${at}:Domains names a verified domain that another provider serves already; a domain belongs to one provider.` : `${at} names a scheme that is registered already.` }] }
    }
    const entry: Entry = { fingerprint, identity, instance }
    this.#entries.set(scheme, entry)
    for (const { path, kind } of instance.provider.endpoints) this.#byPath.set(path.toLowerCase(), { entry, kind })
    return undefined
  }

  /**
   * Reads the source and applies it: removals first (a domain may move), then, with
   * `revokeSessions`, the sessions of the providers removed and of those replaced with other
   * users ({@link IDENTITY_KEYS}) end, then additions in the source's order.
   */
  async apply (definitions: readonly RuntimeProviderDefinition[], options: ReloadProvidersOptions): Promise<ProviderReloadResult> {
    const refused: RefusedProvider[] = []
    const wanted = new Map<string, { validated: ValidatedRuntimeProvider, fingerprint: string, identity: string }>()
    for (const definition of definitions) {
      const scheme = typeof definition?.scheme === 'string' ? definition.scheme : ''
      const declared = this.app.authentication.providers.get(scheme)
      if (declared !== undefined && declared.runtime !== true) {
        const at = runtimeSectionKey(scheme, this.options.rootKey)
        refused.push({ scheme, problems: [{ key: at, message: `${at} is declared in configuration; the configured provider is used.` }] })
        continue
      }
      const result = validateRuntimeProvider(definition, this.options)
      if (!result.ok) refused.push({ scheme, problems: result.problems })
      else if (!result.provider.instance.settings.Enabled) continue // Enabled false: as if absent (removed when it was there)
      else if (wanted.has(scheme)) refused.push({ scheme, problems: [{ key: runtimeSectionKey(scheme, this.options.rootKey), message: `${runtimeSectionKey(scheme, this.options.rootKey)} is defined twice by the provider source.` }] })
      else wanted.set(scheme, { validated: result.provider, fingerprint: fingerprintOf(definition), identity: identityFingerprintOf(definition) })
    }
    const removed: string[] = []
    const otherUsers: string[] = []
    for (const [scheme, entry] of this.#entries) {
      const next = wanted.get(scheme)
      if (next?.fingerprint === entry.fingerprint) continue
      this.#remove(scheme)
      if (next === undefined) removed.push(scheme)
      else if (next.identity !== entry.identity) otherUsers.push(scheme)
    }
    // Before the additions: a session the new instance makes is never among those ended.
    if (options.revokeSessions === true) {
      for (const scheme of [...removed, ...otherUsers]) await sessionStoreOf(this.app).endIndexedSessions(providerIndexKeyOf(scheme))
    }
    const added: string[] = []
    for (const [scheme, { validated, fingerprint, identity }] of wanted) {
      if (this.#entries.has(scheme)) continue
      const refusal = this.#add(validated, fingerprint, identity)
      if (refusal === undefined) added.push(scheme)
      else refused.push(refusal)
    }
    return { added, removed, refused }
  }

  close (): void {
    for (const scheme of [...this.#entries.keys()]) this.#remove(scheme)
  }
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
    app.route({
      method: route.method,
      url: route.url,
      ...(route.bodyLimit === undefined ? {} : { bodyLimit: route.bodyLimit }),
      config: { allowAnonymous: true, ...(route.bucket === undefined ? {} : { rateLimitBucket: route.bucket }) },
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        const endpoints = set.find(request, route.kind)
        if (endpoints === undefined) return unknownScheme(request, reply, route.kind)
        const method = request.method === 'HEAD' ? 'GET' : request.method
        const endpoint = endpoints.find((candidate) => candidate.method === method)
        return endpoint === undefined ? notFound(reply) : await endpoint.handle(request, reply)
      }
    })
  }
}

async function runtimeProviders (app: FastifyInstance, options: RuntimeProvidersOptions): Promise<void> {
  const set = new RuntimeProviderSet(app, options)
  registerRoutes(app, set)
  const instanceId = randomUUID()
  // One reload at a time, in order: a reload reads the source after the one before has applied.
  let queue: Promise<unknown> = Promise.resolve()
  function reloadLocally (reloadOptions: ReloadProvidersOptions, trigger: string): Promise<ProviderReloadResult> {
    const run = queue.then(async () => {
      const definitions = await options.source()
      if (!Array.isArray(definitions)) throw new TypeError('providerSource must return an array of provider definitions')
      const result = await set.apply(definitions, reloadOptions)
      for (const refusal of result.refused) {
        app.log.warn({ event: 'external.runtime_provider.refused', provider: refusal.scheme, problems: refusal.problems }, 'provider from the provider source refused')
      }
      app.log.info({ event: 'external.runtime_providers.reloaded', trigger, added: result.added, removed: result.removed, refused: result.refused.map((refusal) => refusal.scheme) }, 'providers from the provider source applied')
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
