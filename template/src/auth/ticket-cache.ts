/**
 * Session tickets already opened on this instance, by their exact sealed value, so a browser that
 * sends the same cookie again is not decrypted and parsed again (AES-256-GCM set-up, the canonical
 * base64url check and JSON parsing cost 20-40 µs per request, more for a chunked ticket:
 * docs/performance.md at the repository root).
 *
 * Safe because a hit is the whole authenticated value again: only a value that opened successfully
 * is remembered, a hit compares the complete sealed value, and expiry is checked on every hit as
 * on every open. The map is keyed by the value's two ends (key id, IV, tag) because hashing a whole
 * chunked value (7-30 KB) costs more than opening it; the full comparison is what decides. Failures are never remembered, so garbage cannot fill the cache. Entries are frozen, so a
 * request cannot change the ticket the next request sees. Bounded by entries and by characters of
 * sealed value (least recently used goes first); per process, emptied on restart.
 */
import type { KeyRing } from './key-ring.js'
import type { AuthenticationTicket } from './principal.js'
import { openTicket } from './ticket.js'

export const DEFAULT_TICKET_CACHE_ENTRIES = 1024
/** About 2 MB of cookie text, and a similar amount of opened tickets. */
export const DEFAULT_TICKET_CACHE_CHARACTERS = 2_000_000

/** Characters taken from each end of a sealed value for the map key. */
const KEY_END_LENGTH = 48

function keyOf (sealed: string): string {
  return sealed.length <= 2 * KEY_END_LENGTH ? sealed : sealed.slice(0, KEY_END_LENGTH) + sealed.slice(-KEY_END_LENGTH)
}

interface Entry {
  readonly sealed: string
  readonly ticket: AuthenticationTicket
}

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
  readonly #entries = new Map<string, Entry>()
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
    const key = keyOf(sealed)
    const cached = this.#entries.get(key)
    if (cached !== undefined && cached.sealed === sealed) {
      this.#delete(key, cached)
      if (!(cached.ticket.expiresAt > nowSeconds)) return undefined
      this.#entries.set(key, cached)
      this.#characters += sealed.length
      return cached.ticket
    }
    const ticket = openTicket(sealed, this.#ring, nowSeconds)
    if (ticket === undefined) return undefined
    this.#remember(key, { sealed, ticket: frozen(ticket) })
    return ticket
  }

  #delete (key: string, entry: Entry): void {
    this.#entries.delete(key)
    this.#characters -= entry.sealed.length
  }

  #remember (key: string, entry: Entry): void {
    const length = entry.sealed.length
    if (this.#maxEntries === 0 || length > this.#maxCharacters) return
    const existing = this.#entries.get(key)
    if (existing !== undefined) this.#delete(key, existing)
    while (this.#entries.size >= this.#maxEntries || this.#characters + length > this.#maxCharacters) {
      const oldest = this.#entries.entries().next().value
      if (oldest === undefined) break
      this.#delete(oldest[0], oldest[1])
    }
    this.#entries.set(key, entry)
    this.#characters += length
  }
}
