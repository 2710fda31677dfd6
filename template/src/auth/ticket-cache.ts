/**
 * Session tickets already opened on this instance, by their exact sealed value, so a browser that
 * sends the same cookie again is not decrypted and parsed again (AES-256-GCM set-up, the canonical
 * base64url check and JSON parsing cost 20-40 µs per request, more for a chunked ticket:
 * docs/performance.md at the repository root).
 *
 * Safe because the key is the whole authenticated value: only a value that opened successfully is
 * remembered, a hit is exactly that value again, and expiry is checked on every hit as on every
 * open. Failures are never remembered, so garbage cannot fill the cache. Entries are frozen, so a
 * request cannot change the ticket the next request sees. Bounded by entries and by characters of
 * sealed value (least recently used goes first); per process, emptied on restart.
 */
import type { KeyRing } from './key-ring.js'
import type { AuthenticationTicket } from './principal.js'
import { openTicket } from './ticket.js'

export const DEFAULT_TICKET_CACHE_ENTRIES = 1024
/** About 2 MB of cookie text, and a similar amount of opened tickets. */
export const DEFAULT_TICKET_CACHE_CHARACTERS = 2_000_000

export interface TicketCacheLimits {
  readonly maxEntries?: number
  readonly maxCharacters?: number
}

function frozen (ticket: AuthenticationTicket): AuthenticationTicket {
  for (const claim of ticket.claims) Object.freeze(claim)
  Object.freeze(ticket.claims)
  if (ticket.tokens !== undefined) Object.freeze(ticket.tokens)
  return Object.freeze(ticket)
}

export class TicketCache {
  readonly #ring: KeyRing
  readonly #entries = new Map<string, AuthenticationTicket>()
  readonly #maxEntries: number
  readonly #maxCharacters: number
  #characters = 0

  constructor (ring: KeyRing, limits: TicketCacheLimits = {}) {
    const { maxEntries = DEFAULT_TICKET_CACHE_ENTRIES, maxCharacters = DEFAULT_TICKET_CACHE_CHARACTERS } = limits
    if (!Number.isInteger(maxEntries) || maxEntries < 0) throw new RangeError('maxEntries must be a non-negative integer')
    if (!Number.isInteger(maxCharacters) || maxCharacters < 0) throw new RangeError('maxCharacters must be a non-negative integer')
    this.#ring = ring
    this.#maxEntries = maxEntries
    this.#maxCharacters = maxCharacters
  }

  get size (): number {
    return this.#entries.size
  }

  get characters (): number {
    return this.#characters
  }

  /** Same answer as {@link openTicket}: the ticket, or undefined when not authentic, malformed or expired. */
  open (sealed: string, nowSeconds: number): AuthenticationTicket | undefined {
    const cached = this.#entries.get(sealed)
    if (cached !== undefined) {
      this.#entries.delete(sealed)
      if (!(cached.expiresAt > nowSeconds)) {
        this.#characters -= sealed.length
        return undefined
      }
      this.#entries.set(sealed, cached)
      return cached
    }
    const ticket = openTicket(sealed, this.#ring, nowSeconds)
    if (ticket === undefined) return undefined
    this.#remember(sealed, frozen(ticket))
    return ticket
  }

  #remember (sealed: string, ticket: AuthenticationTicket): void {
    if (this.#maxEntries === 0 || sealed.length > this.#maxCharacters) return
    while (this.#entries.size >= this.#maxEntries || this.#characters + sealed.length > this.#maxCharacters) {
      const oldest = this.#entries.keys().next().value
      if (oldest === undefined) break
      this.#entries.delete(oldest)
      this.#characters -= oldest.length
    }
    this.#entries.set(sealed, ticket)
    this.#characters += sealed.length
  }
}
