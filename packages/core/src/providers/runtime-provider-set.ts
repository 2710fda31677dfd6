/**
 * The bookkeeping of the providers from the app's provider source (issue 28;
 * docs/providers/runtime-providers.md): which are in use, under which fingerprint, and which one
 * owns each endpoint path. A reload applies the source's definitions: each is validated
 * (runtime-definitions.ts), removals go first (a domain may move), then, when asked, the sessions
 * of the providers removed or now trusting other users end, then additions in the source's order.
 * A verified domain claimed by several rows goes to one owner by a rule that does not depend on
 * that order (domain-ownership.ts); so does an Entra tenant id listed by several OpenID Connect
 * rows in `AllowedTenants`, the other rows being refused.
 * Plain data: the host (plugins/runtime-providers.ts) opens instances, registers their schemes and
 * ends sessions, so nothing here sees Fastify.
 */
import { ProviderConflictError } from './registry.js'
import type { AuthenticationProvider, OpenedProvider, ProviderEndpoint, ProviderEndpointKind } from './provider.js'
import { runtimeSectionKey, type RuntimeProviderDefinition, type RuntimeValidation, type ValidatedRuntimeProvider } from './runtime-definitions.js'
import { assignDomains, contestedTenants, verifiedAtMsOf, type DomainClaim, type TenantClaim } from './domain-ownership.js'
import { sha256Base64url } from '../sha256.js'

/** @public @experimental */
export interface ReloadProvidersOptions {
  /** End the sessions signed in through a provider this reload removes (every instance). */
  readonly revokeSessions?: boolean
}

/** A runtime provider definition that was not applied, and why (keys named, never a value). @public @experimental */
export interface RefusedProvider {
  readonly scheme: string
  readonly problems: ReadonlyArray<{ readonly key: string, readonly message: string }>
}

/**
 * A verified domain a provider from the source claimed and does not serve: a configured provider
 * serves it, or another row keeps it (domain-ownership.ts: the earliest `verifiedAt`, then the
 * scheme name). The provider itself is in use with its other domains.
 *
 * @public @experimental
 */
export interface RefusedDomain {
  readonly scheme: string
  readonly domain: string
  /** `<Root>:Authentication:Schemes:<Name>:Domains`. */
  readonly key: string
  readonly message: string
}

/** A connection a row declared that was not applied as declared, and why (keys named, never a value). @public @experimental */
export interface RefusedConnection {
  readonly connection: string
  /** The row (its scheme) that declared it. */
  readonly scheme: string
  /** true: it was in use and keeps its previous settings; false: it is not in use. */
  readonly kept: boolean
  readonly problems: ReadonlyArray<{ readonly key: string, readonly message: string }>
}

/** What a reload did to the SCIM connections of the rows (docs/provisioning.md, "Connections from the provider source"). @public @experimental */
export interface ConnectionReloadResult {
  readonly added: readonly string[]
  /** In use and declared otherwise now: they keep their users and tokens. */
  readonly changed: readonly string[]
  /** No longer declared: their endpoints answer as an unknown connection's, their tokens are refused. */
  readonly removed: readonly string[]
  readonly refused: readonly RefusedConnection[]
}

/** What a reload changed: schemes added (or replaced), removed, definitions refused, and domains refused to providers in use. @public @experimental */
export interface ProviderReloadResult {
  readonly added: readonly string[]
  readonly removed: readonly string[]
  readonly refused: readonly RefusedProvider[]
  /** Verified domains claimed by more than one provider, refused to all but their owner; empty when none. */
  readonly refusedDomains: readonly RefusedDomain[]
  /** The rows' SCIM connections; present only when `Provisioning:Enabled`. @experimental */
  readonly connections?: ConnectionReloadResult
}

/** What the set needs of the app: validation, opening, the scheme registry and the session store. */
export interface RuntimeProviderHost {
  /** The app's root key, for the section keys refusals name. */
  readonly rootKey: string
  /** Validates one definition (runtime-definitions.ts `validateRuntimeProvider`, with the app's configuration). */
  validate: (definition: RuntimeProviderDefinition) => RuntimeValidation
  /** Opens the instance of a validated provider (nothing is fetched until first use); throws when its protocol cannot open it. */
  open: (validated: ValidatedRuntimeProvider) => Promise<OpenedProvider>
  /** Every provider registered now, configured ones among them. */
  registered: () => ReadonlyMap<string, AuthenticationProvider>
  /** Adds a provider to the scheme registry; throws when its scheme or a domain is taken. */
  register: (provider: AuthenticationProvider) => void
  /** Removes a provider from the scheme registry. */
  unregister: (scheme: string) => void
  /** Ends every session signed in with `scheme`, on every instance. */
  endSessions: (scheme: string) => Promise<void>
  /** The tenant ids the configured OpenID Connect providers list in `AllowedTenants` (never given to a runtime one); none when absent. */
  configuredTenants?: () => ReadonlySet<string>
}

interface Wanted {
  readonly validated: ValidatedRuntimeProvider
  readonly fingerprint: string
  readonly identity: string
}

interface Entry {
  readonly fingerprint: string
  /** {@link identityFingerprintOf}: a change ends the provider's sessions when the reload asks to revoke. */
  readonly identity: string
  readonly opened: OpenedProvider
}

/**
 * A fingerprint of a definition (secrets included; kept in memory only) to tell a changed one from
 * an unchanged one. Its SCIM `connection` is not part of the provider: a change of it alone keeps the instance.
 */
const fingerprintOf = (definition: RuntimeProviderDefinition): string => sha256Base64url(JSON.stringify({ ...definition, connection: undefined }))

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
  return sha256Base64url(JSON.stringify([definition.tenant ?? null, picked]))
}

export class RuntimeProviderSet {
  readonly #entries = new Map<string, Entry>()
  readonly #byPath = new Map<string, { entry: Entry, kind: ProviderEndpointKind }>()
  #configured: ReadonlySet<string> | undefined

  constructor (private readonly host: RuntimeProviderHost) {}

  /** The endpoints a runtime provider declares at `path` (without the query) when they are of `kind`, or undefined when none owns it. */
  find (path: string, kind: ProviderEndpointKind): readonly ProviderEndpoint[] | undefined {
    const lower = path.toLowerCase()
    const found = this.#byPath.get(lower)
    return found?.kind === kind ? found.entry.opened.provider.endpoints.filter((endpoint) => endpoint.path.toLowerCase() === lower) : undefined
  }

  /**
   * The paths of the configured providers, lower case. Read once, at the first addition (the app
   * is ready by then, and configured providers are registered before ready and never removed),
   * instead of once per provider added.
   */
  #configuredPaths (): ReadonlySet<string> {
    this.#configured ??= new Set([...this.host.registered().values()].filter((provider) => provider.runtime !== true).flatMap((provider) => provider.paths.map((path) => path.toLowerCase())))
    return this.#configured
  }

  #remove (scheme: string): void {
    const entry = this.#entries.get(scheme)
    if (entry === undefined) return
    this.host.unregister(scheme)
    for (const [path, target] of this.#byPath) if (target.entry === entry) this.#byPath.delete(path)
    this.#entries.delete(scheme)
    entry.opened.stop()
  }

  /** Adds one validated provider; a refusal (name, path or domain taken) adds nothing. */
  async #add (validated: ValidatedRuntimeProvider, fingerprint: string, identity: string): Promise<RefusedProvider | undefined> {
    const scheme = validated.instance.scheme
    const at = runtimeSectionKey(scheme, this.host.rootKey)
    let opened: OpenedProvider
    try {
      opened = await this.host.open(validated)
    } catch (error) {
      // A key that validation passed but the protocol cannot open (its own message names the key, never a value).
      const problems = (error as { problems?: RefusedProvider['problems'] }).problems
      return { scheme, problems: problems ?? [{ key: at, message: `${at} could not be opened (${(error as Error | null)?.name ?? 'error'}).` }] }
    }
    const configuredPaths = this.#configuredPaths()
    const taken = opened.provider.paths.find((path) => this.#byPath.has(path.toLowerCase()) || configuredPaths.has(path.toLowerCase()))
    if (taken !== undefined) {
      opened.stop()
      return { scheme, problems: [{ key: at, message: `${at} would use the endpoint path of another provider (a configured one, or one from the source whose name differs in case only); choose another scheme name.` }] }
    }
    try {
      this.host.register(opened.provider)
    } catch (error) {
      opened.stop()
      const domain = error instanceof ProviderConflictError && error.domain !== undefined
      return { scheme, problems: [{ key: domain ? `${at}:Domains` : at, message: domain ? `${at}:Domains names a verified domain that another provider serves already; a domain belongs to one provider.` : `${at} names a scheme that is registered already.` }] }
    }
    const entry: Entry = { fingerprint, identity, opened }
    this.#entries.set(scheme, entry)
    for (const { path, kind } of opened.provider.endpoints) this.#byPath.set(path.toLowerCase(), { entry, kind })
    return undefined
  }

  /** The definitions to be in use, by scheme, and the refusals of the others (configured already, invalid, or twice). */
  #wanted (definitions: readonly RuntimeProviderDefinition[]): { wanted: Map<string, Wanted>, refused: RefusedProvider[] } {
    const refused: RefusedProvider[] = []
    const wanted = new Map<string, Wanted>()
    for (const definition of definitions) {
      const scheme = typeof definition?.scheme === 'string' ? definition.scheme : ''
      const at = runtimeSectionKey(scheme, this.host.rootKey)
      const declared = this.host.registered().get(scheme)
      if (declared !== undefined && declared.runtime !== true) {
        refused.push({ scheme, problems: [{ key: at, message: `${at} is declared in configuration; the configured provider is used.` }] })
        continue
      }
      const result = this.host.validate(definition)
      if (!result.ok) refused.push({ scheme, problems: result.problems })
      else if (!result.provider.instance.settings.Enabled) continue // Enabled false: as if absent (removed when it was there)
      else if (wanted.has(scheme)) refused.push({ scheme, problems: [{ key: at, message: `${at} is defined twice by the provider source.` }] })
      else wanted.set(scheme, { validated: result.provider, fingerprint: fingerprintOf(definition), identity: identityFingerprintOf(definition) })
    }
    return { wanted, refused }
  }

  /**
   * Refuses (and drops from `wanted`) each OpenID Connect row that lists in `AllowedTenants` a
   * tenant id another provider keeps (domain-ownership.ts `contestedTenants`: a configured
   * provider's, else the earliest `createdAt`, else the earlier scheme name), naming the entry.
   */
  #withOwnedTenants (wanted: Map<string, Wanted>, definitions: ReadonlyMap<string, RuntimeProviderDefinition>): RefusedProvider[] {
    const claims: TenantClaim[] = []
    const indexOf = new Map<string, number>()
    for (const [scheme, { validated }] of wanted) {
      if (validated.instance.protocol !== 'OpenIdConnect') continue
      const createdAtMs = verifiedAtMsOf(definitions.get(scheme)?.createdAt)
      for (const [index, entry] of validated.instance.settings.AllowedTenants.entries()) {
        const tenantId = entry.split('=', 1)[0]!
        indexOf.set(`${scheme}\n${tenantId}`, index)
        claims.push({ scheme, tenantId, ...(createdAtMs === undefined ? {} : { createdAtMs }) })
      }
    }
    const refused = new Map<string, RefusedProvider['problems'][number][]>()
    for (const lost of contestedTenants(claims, this.host.configuredTenants?.() ?? new Set())) {
      const key = `${runtimeSectionKey(lost.scheme, this.host.rootKey)}:AllowedTenants:${indexOf.get(`${lost.scheme}\n${lost.tenantId}`) ?? 0}`
      const owner = lost.reason === 'configured' ? 'a configured provider lists it' : 'another provider from the source lists it and was created earlier (or, undated, has the earlier scheme name)'
      const problems = refused.get(lost.scheme) ?? []
      problems.push({ key, message: `${key} names a tenant that another provider serves (${owner}); a tenant belongs to one provider.` })
      refused.set(lost.scheme, problems)
    }
    for (const scheme of refused.keys()) wanted.delete(scheme)
    return [...refused].map(([scheme, problems]) => ({ scheme, problems }))
  }

  /**
   * Each wanted provider with the verified domains it owns (domain-ownership.ts), and the domains
   * refused to the others. What a provider keeps is part of its fingerprint, so a provider whose
   * domains change (a rival row added or removed) is opened again.
   */
  #withOwnedDomains (wanted: Map<string, Wanted>, definitions: ReadonlyMap<string, RuntimeProviderDefinition>): RefusedDomain[] {
    const configured = new Set([...this.host.registered().values()].filter((provider) => provider.runtime !== true).flatMap((provider) => (provider.domains ?? []).map((domain) => domain.trim().toLowerCase())))
    const claims: DomainClaim[] = []
    for (const [scheme, { validated }] of wanted) {
      const dated = new Map<string, number | undefined>()
      for (const domain of definitions.get(scheme)?.domains ?? []) {
        const name = String(domain.name).trim().toLowerCase()
        if (domain.verified === true && validated.verifiedDomains.includes(name) && !dated.has(name)) dated.set(name, verifiedAtMsOf(domain.verifiedAt))
      }
      for (const [domain, verifiedAtMs] of dated) claims.push({ scheme, domain, ...(verifiedAtMs === undefined ? {} : { verifiedAtMs }) })
    }
    const { kept, lost } = assignDomains(claims, configured)
    for (const [scheme, entry] of wanted) {
      const domains = kept.get(scheme) ?? []
      if (domains.length === entry.validated.verifiedDomains.length) continue
      const instance = { ...entry.validated.instance, settings: { ...entry.validated.instance.settings, Domains: domains } } as ValidatedRuntimeProvider['instance']
      wanted.set(scheme, { ...entry, validated: { ...entry.validated, instance, verifiedDomains: domains }, fingerprint: `${entry.fingerprint}:${domains.join(',')}` })
    }
    return lost.map(({ scheme, domain, reason }) => {
      const key = `${runtimeSectionKey(scheme, this.host.rootKey)}:Domains`
      const owner = reason === 'configured' ? 'a configured provider serves it' : 'another provider from the source verified it earlier (or, undated, has the earlier scheme name)'
      return { scheme, domain, key, message: `${key}: the verified domain ${domain} is not routed to this provider: ${owner}.` }
    })
  }

  /**
   * Applies the source's definitions: removals first (a domain may move), then, with
   * `revokeSessions`, the sessions of the providers removed and of those replaced with other
   * users ({@link IDENTITY_KEYS}) end, then additions in the source's order.
   */
  async apply (definitions: readonly RuntimeProviderDefinition[], options: ReloadProvidersOptions): Promise<ProviderReloadResult> {
    const { wanted, refused } = this.#wanted(definitions)
    const bySchemes = new Map<string, RuntimeProviderDefinition>()
    for (const definition of definitions) if (typeof definition?.scheme === 'string' && !bySchemes.has(definition.scheme)) bySchemes.set(definition.scheme, definition)
    refused.push(...this.#withOwnedTenants(wanted, bySchemes))
    const refusedDomains = this.#withOwnedDomains(wanted, bySchemes)
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
      for (const scheme of [...removed, ...otherUsers]) await this.host.endSessions(scheme)
    }
    const added: string[] = []
    for (const [scheme, { validated, fingerprint, identity }] of wanted) {
      if (this.#entries.has(scheme)) continue
      const refusal = await this.#add(validated, fingerprint, identity)
      if (refusal === undefined) added.push(scheme)
      else refused.push(refusal)
    }
    return { added, removed, refused, refusedDomains }
  }

  close (): void {
    for (const scheme of [...this.#entries.keys()]) this.#remove(scheme)
  }
}
