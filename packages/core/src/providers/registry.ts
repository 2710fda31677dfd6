/**
 * The registry of provider instances: lookups by scheme name and by e-mail domain are Map
 * lookups, and instances may be added and removed while the app runs (customer IdPs added at
 * runtime, issue 28). Nothing here is consulted on an authenticated request: the session's ticket
 * carries its scheme, and only challenge, callback and sign-out look a provider up. Plain data,
 * generic over what an instance is, so it holds no Fastify types.
 */
import { CoreError } from '../errors.js'

/** What the registry needs of an instance: its scheme and the e-mail domains it serves. @public @experimental */
export interface RegisteredProvider {
  readonly scheme: string
  /** E-mail domains (lower case or not; compared case-insensitively). */
  readonly domains?: readonly string[]
}

/** Why an instance could not be added: its scheme or one of its domains is taken. @public @experimental */
export class ProviderConflictError extends CoreError {
  constructor (readonly scheme: string, readonly domain?: string) {
    super(domain === undefined ? `provider scheme ${scheme} is registered already` : `e-mail domain of provider ${scheme} is served by another provider`)
    this.name = 'ProviderConflictError'
  }
}

/** The domain part of an e-mail address, lower case; undefined when `address` is not one address. @public @experimental */
export function emailDomainOf (address: string): string | undefined {
  const text = address.trim()
  if (text.length > 254) return undefined
  const match = /^[^\s@<>()[\]\\,;:"]{1,64}@((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z][A-Za-z0-9-]{0,62})$/.exec(text)
  return match?.[1]?.toLowerCase()
}

/** @public @experimental */
export class ProviderRegistry<P extends RegisteredProvider> {
  readonly #byScheme = new Map<string, P>()
  readonly #byDomain = new Map<string, P>()

  /** The instances by scheme, in the order they were added. */
  get byScheme (): ReadonlyMap<string, P> {
    return this.#byScheme
  }

  /** Adds `provider`; refuses a scheme or a domain that is taken (nothing is added then). */
  add (provider: P): void {
    if (this.#byScheme.has(provider.scheme)) throw new ProviderConflictError(provider.scheme)
    const domains = (provider.domains ?? []).map((domain) => domain.trim().toLowerCase())
    const taken = domains.find((domain) => this.#byDomain.has(domain))
    if (taken !== undefined) throw new ProviderConflictError(provider.scheme, taken)
    this.#byScheme.set(provider.scheme, provider)
    for (const domain of domains) this.#byDomain.set(domain, provider)
  }

  /** Removes the instance of `scheme` and its domains; false when there was none. */
  remove (scheme: string): boolean {
    const provider = this.#byScheme.get(scheme)
    if (provider === undefined) return false
    this.#byScheme.delete(scheme)
    for (const [domain, owner] of this.#byDomain) if (owner === provider) this.#byDomain.delete(domain)
    return true
  }

  get (scheme: string): P | undefined {
    return this.#byScheme.get(scheme)
  }

  /** The instance serving the domain of `address` (case-insensitive), or undefined. */
  forEmail (address: string): P | undefined {
    const domain = emailDomainOf(address)
    return domain === undefined ? undefined : this.#byDomain.get(domain)
  }

  /** Whether any instance serves an e-mail domain (the login page then offers an e-mail field). */
  get hasDomains (): boolean {
    return this.#byDomain.size > 0
  }
}
