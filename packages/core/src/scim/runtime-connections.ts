/**
 * Connections from the provider source (issue 41, item 1; docs/provisioning.md "Connections from
 * the provider source"): a runtime customer's row declares its SCIM connection beside its
 * provider (`connection: { name, settings }`), and each reload of the source computes the set in
 * use from the rows. A declaration is bound as if it were written at
 * `<Root>:Provisioning:Connections:<Name>` (the binder with the configured connections' schema)
 * and checked by the configured connections' own rules (connections.ts), so every problem names
 * that colon path, never a value. Its tenant is the row's `tenant` (the key `Tenant` is not read);
 * its `Schemes` may list only sign-in schemes from the provider source in use, of its tenant or of
 * none (never a configured scheme: a row cannot claim the users of the app's own providers).
 *
 * What the set refuses, naming the key: a configured connection's name (also in another case),
 * a name declared twice, a tenant or a scheme of another connection (a configured one always
 * keeps it; among rows, the connection in use keeps it, then the earlier `createdAt`, then the
 * earlier name). A connection in use whose new declaration is refused keeps its previous settings
 * (the refusal says so); one whose row no longer declares it is gone. Users and tokens live in the
 * directory store under the name, so a changed connection keeps them. Plain data.
 */
import { bindConfiguration, sectionNameProblem, type ConfigurationProblem } from '../config/bind.js'
import { ProvisioningConnectionSchema, type ProvisioningConnectionConfiguration } from '../config/schema.js'
import { flattenJson } from '../config/sources.js'
import { connectionProblems, connectionsOf, schemeNotEnabledMessage, schemeTakenMessage, tenantTakenMessage, type ScimConnection } from './connections.js'

/** One row's connection, as the plugin hands it over. */
export interface DeclaredConnection {
  /** The row's scheme (logs name it with the refusal). */
  readonly scheme: string
  /** The row's `connection`, as the source gave it (`{ name, settings }`). */
  readonly declaration: unknown
  /** The row's `tenant`: the connection's tenant. */
  readonly tenant: string | undefined
  /** The row's `createdAt` in milliseconds, when given. */
  readonly createdAtMs?: number
  /** The row's verified domains (lower case): the only `VerifiedDomains` its connection may link e-mail addresses in. */
  readonly verifiedDomains?: readonly string[]
}

export interface RuntimeConnectionsContext {
  readonly rootKey: string
  /** The configured connections (`Provisioning:Connections`). */
  readonly configured: ReadonlyMap<string, ScimConnection>
  /** The schemes from the provider source in use after this reload, with their row's tenant. */
  readonly runtimeSchemes: ReadonlyMap<string, string | undefined>
  /** The configured sign-in schemes (never listed by a connection from the source). */
  readonly configuredSchemes: ReadonlySet<string>
  /** The connections from the source in use before this reload, with their declarations' fingerprints. */
  readonly current: ReadonlyMap<string, { readonly connection: ScimConnection, readonly fingerprint: string }>
}

/** A declaration not applied, and why (keys named, never a value). */
export interface RefusedConnection {
  readonly connection: string
  /** The row that declared it. */
  readonly scheme: string
  /** Whether the connection keeps its previous settings (it was in use and still is). */
  readonly kept: boolean
  readonly problems: readonly ConfigurationProblem[]
}

export interface RuntimeConnectionsResult {
  /** The connections from the source to use, by name, with their fingerprints. */
  readonly connections: Map<string, { readonly connection: ScimConnection, readonly fingerprint: string }>
  readonly added: readonly string[]
  readonly changed: readonly string[]
  readonly removed: readonly string[]
  readonly refused: readonly RefusedConnection[]
}

interface Candidate {
  readonly declared: DeclaredConnection
  readonly name: string
  readonly fingerprint: string
}

type Validation =
  | { readonly ok: true, readonly connection: ScimConnection }
  | { readonly ok: false, readonly problems: ConfigurationProblem[] }

/** `<Root>:Provisioning:Connections:<Name>`. */
export const runtimeConnectionKey = (name: string, rootKey: string): string => `${rootKey}:Provisioning:Connections:${name}`

const nameOf = (declaration: unknown): string => {
  const name = (declaration as { name?: unknown } | null)?.name
  return typeof name === 'string' ? name : ''
}

const fingerprintOf = (declared: DeclaredConnection): string => JSON.stringify([declared.tenant ?? null, declared.declaration])

/** A declaration bound and checked on its own: its keys, the configured connections' rules, its schemes. */
export function validateRuntimeConnection (declared: DeclaredConnection, context: Pick<RuntimeConnectionsContext, 'rootKey' | 'runtimeSchemes' | 'configuredSchemes'>): Validation {
  const name = nameOf(declared.declaration)
  const at = runtimeConnectionKey(name, context.rootKey)
  // Checked before binding, as the binder checks a configured name: a name is a path segment and a key segment.
  const nameProblem = sectionNameProblem(name, at)
  if (nameProblem !== undefined) return { ok: false, problems: [nameProblem] }
  const raw = (declared.declaration as { settings?: unknown }).settings ?? {}
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { ok: false, problems: [{ key: at, message: `${at} must be an object of the keys of a provisioning connection.` }] }
  const problems: ConfigurationProblem[] = []
  const settings = { ...raw as Record<string, unknown> }
  for (const key of Object.keys(settings)) {
    if (key.toLowerCase() !== 'tenant') continue
    problems.push({ key: `${at}:Tenant`, message: `${at}:Tenant is not read for a connection from the provider source: its tenant is its row's tenant.` })
    delete settings[key]
  }
  const flat = flattenJson({ [context.rootKey]: { Provisioning: { Connections: { [name]: { ...settings, Tenant: declared.tenant ?? '' } } } } }, 'provider source').entries
  const bound = bindConfiguration<ProvisioningConnectionConfiguration>(flat, ProvisioningConnectionSchema, at)
  problems.push(...bound.errors)
  for (const key of bound.unknownKeys) problems.push({ key, message: `${key} is not a key of a provisioning connection.` })
  if (bound.errors.length === 0) {
    problems.push(...connectionProblems(name, bound.value, (sub) => `${at}${sub}`))
    bound.value.Schemes.forEach((scheme, index) => {
      const key = `${at}:Schemes:${index}`
      const trimmed = scheme.trim()
      if (trimmed === '') return
      if (context.configuredSchemes.has(trimmed)) problems.push({ key, message: `${key} names a configured scheme; a connection from the provider source lists only schemes from the provider source.` })
      else if (!context.runtimeSchemes.has(trimmed)) problems.push({ key, message: schemeNotEnabledMessage(key) })
      else if (![undefined, declared.tenant].includes(context.runtimeSchemes.get(trimmed))) problems.push({ key, message: `${key} names a scheme of another tenant; a connection from the provider source lists only schemes of its tenant or of none.` })
    })
  }
  if (bound.errors.length === 0 && bound.value.LinkByEmail) {
    // A row links e-mail addresses only in domains it has proved (its verified domains), never one it merely names.
    const proved = new Set((declared.verifiedDomains ?? []).map((domain) => domain.toLowerCase()))
    bound.value.VerifiedDomains.forEach((domain, index) => {
      const key = `${at}:VerifiedDomains:${index}`
      if (!proved.has(domain.trim().toLowerCase())) problems.push({ key, message: `${key} is not a verified domain of the row; a connection from the provider source links e-mail addresses only in its row's verified domains.` })
    })
  }
  if (problems.length > 0) return { ok: false, problems }
  return { ok: true, connection: connectionsOf({ [name]: bound.value }).get(name)! }
}

/**
 * The order claims are settled in: connections in use and unchanged, then in use and changed,
 * then new ones by `createdAt` (undated last), then name.
 */
function claimOrder (candidates: readonly Candidate[], current: RuntimeConnectionsContext['current']): Candidate[] {
  const rank = (candidate: Candidate): number => {
    const inUse = current.get(candidate.name)
    return inUse === undefined ? 2 : inUse.fingerprint === candidate.fingerprint ? 0 : 1
  }
  return [...candidates].sort((a, b) => rank(a) - rank(b) ||
    (a.declared.createdAtMs ?? Number.POSITIVE_INFINITY) - (b.declared.createdAtMs ?? Number.POSITIVE_INFINITY) ||
    (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

/** Who holds each tenant and scheme: the configured connections first, then each accepted one. */
class Claims {
  readonly #tenants = new Map<string, string>()
  readonly #schemes = new Map<string, string>()

  constructor (configured: Iterable<ScimConnection>) {
    for (const connection of configured) this.add(connection)
  }

  /** The problems `connection` (declared at `at`) would cause beside the connections accepted so far. */
  problems (connection: ScimConnection, at: string): ConfigurationProblem[] {
    const problems: ConfigurationProblem[] = []
    const owner = this.#tenants.get(connection.tenant)
    if (owner !== undefined) problems.push({ key: `${at}:Tenant`, message: tenantTakenMessage(`${at}:Tenant`, owner) })
    connection.schemes.forEach((scheme, index) => {
      const holder = this.#schemes.get(scheme)
      if (holder !== undefined) problems.push({ key: `${at}:Schemes:${index}`, message: schemeTakenMessage(`${at}:Schemes:${index}`, holder) })
    })
    return problems
  }

  add (connection: ScimConnection): void {
    this.#tenants.set(connection.tenant, connection.name)
    for (const scheme of connection.schemes) this.#schemes.set(scheme, connection.name)
  }
}

/** The connections from the source to use after this reload, what changed, and the refusals. */
export function nextRuntimeConnections (declared: readonly DeclaredConnection[], context: RuntimeConnectionsContext): RuntimeConnectionsResult {
  const refused: RefusedConnection[] = []
  const candidates: Candidate[] = []
  const seen = new Set<string>()
  const configuredNames = new Set([...context.configured.keys()].map((name) => name.toLowerCase()))
  for (const entry of declared) {
    const name = nameOf(entry.declaration)
    const at = runtimeConnectionKey(name, context.rootKey)
    if (configuredNames.has(name.toLowerCase())) refused.push({ connection: name, scheme: entry.scheme, kept: false, problems: [{ key: at, message: `${at} names a configured connection; a connection from the provider source has a name of its own.` }] })
    else if (seen.has(name.toLowerCase())) refused.push({ connection: name, scheme: entry.scheme, kept: false, problems: [{ key: at, message: `${at} is defined twice by the provider source.` }] })
    else candidates.push({ declared: entry, name, fingerprint: fingerprintOf(entry) })
    seen.add(name.toLowerCase())
  }
  const claims = new Claims(context.configured.values())
  const connections: RuntimeConnectionsResult['connections'] = new Map()
  for (const candidate of claimOrder(candidates, context.current)) {
    const at = runtimeConnectionKey(candidate.name, context.rootKey)
    const validation = validateRuntimeConnection(candidate.declared, context)
    const problems = validation.ok ? claims.problems(validation.connection, at) : validation.problems
    if (validation.ok && problems.length === 0) {
      claims.add(validation.connection)
      connections.set(candidate.name, { connection: validation.connection, fingerprint: candidate.fingerprint })
      continue
    }
    // Refused: a connection in use keeps its previous settings, unless they now clash with one accepted before it.
    const previous = context.current.get(candidate.name)
    const kept = previous !== undefined && claims.problems(previous.connection, at).length === 0
    if (kept) {
      claims.add(previous.connection)
      connections.set(candidate.name, previous)
    }
    refused.push({ connection: candidate.name, scheme: candidate.declared.scheme, kept, problems })
  }
  const added = [...connections.keys()].filter((name) => !context.current.has(name))
  const changed = [...connections].filter(([name, next]) => context.current.has(name) && context.current.get(name)!.fingerprint !== next.fingerprint).map(([name]) => name)
  const removed = [...context.current.keys()].filter((name) => !connections.has(name))
  return { connections, added, changed, removed, refused }
}
