/**
 * The tenants the app's provider source names (issue 42, item 4: a tenant-owned API key is valid
 * while its tenant is still present). A tenant is present while a definition of the source's last
 * read names it (`tenant`; valid or refused, enabled or not: a provider row being fixed or
 * switched off does not remove its customer), or configuration maps an allowed tenant to it (an
 * enabled configured OpenID Connect provider's `AllowedTenants` entry `<tenant id>=<tenant>`).
 * Each successful read replaces the named set and tells the listeners which tenants left it
 * since the read before (none at the first read: what happened while no instance ran is not
 * known here; the owner check refuses those tenants' keys anyway). Until the first successful
 * read, presence is unknown. Plain data, no Fastify types.
 */
import type { RuntimeProviderDefinition } from './runtime-definitions.js'
import type { ProviderInstance } from './provider-instances.js'

/** Called with the tenants a read removed; awaited by the reload (a listener handles its own failures). */
export type TenantsRemovedListener = (tenants: readonly string[]) => Promise<void> | void

/** The application tenants the enabled configured OpenID Connect providers' `AllowedTenants` entries map to. */
export function configuredApplicationTenantsOf (instances: readonly ProviderInstance[]): ReadonlySet<string> {
  return new Set(instances.flatMap((instance) => instance.protocol === 'OpenIdConnect'
    ? instance.settings.AllowedTenants.flatMap((entry) => entry.includes('=') ? [entry.slice(entry.indexOf('=') + 1).trim()].filter((tenant) => tenant !== '') : [])
    : []))
}

export class SourceTenants {
  readonly #configured: ReadonlySet<string>
  readonly #listeners: TenantsRemovedListener[] = []
  #named: ReadonlySet<string> | undefined

  constructor (configured: ReadonlySet<string> = new Set()) {
    this.#configured = configured
  }

  /** Whether `tenant` is present; undefined while the source has not been read successfully. */
  present (tenant: string): boolean | undefined {
    if (this.#configured.has(tenant)) return true
    return this.#named?.has(tenant)
  }

  /** Adds a listener for removed tenants. */
  onRemoved (listener: TenantsRemovedListener): void {
    this.#listeners.push(listener)
  }

  /** Records the tenants `definitions` name (a successful read); returns, after the listeners, those removed since the last read. */
  async update (definitions: readonly RuntimeProviderDefinition[]): Promise<readonly string[]> {
    const named = new Set(definitions.flatMap((definition) => typeof definition?.tenant === 'string' && definition.tenant !== '' ? [definition.tenant] : []))
    const before = this.#named
    this.#named = named
    const removed = before === undefined ? [] : [...before].filter((tenant) => !named.has(tenant) && !this.#configured.has(tenant))
    if (removed.length === 0) return removed
    for (const listener of this.#listeners) {
      try {
        await listener(removed)
      } catch {
        // The listener logs its own failure; the reload itself succeeded.
      }
    }
    return removed
  }
}
