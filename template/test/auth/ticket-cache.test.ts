/**
 * The per-process cache of opened session tickets: a hit is the same ticket as a fresh open, an
 * expired ticket is refused on a hit as on an open, failures are never remembered, entries are
 * frozen, and both bounds (entries, characters) hold with the least recently used going first.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { createKeyRing } from '../../src/auth/key-ring.js'
import type { AuthenticationTicket } from '../../src/auth/principal.js'
import { TicketCache } from '../../src/auth/ticket-cache.js'
import { openTicket, sealTicket } from '../../src/auth/ticket.js'

const NOW = 1_800_000_000
const ring = createKeyRing([randomBytes(32)])

function ticketFor (subject: string, expiresAt = NOW + 3600): AuthenticationTicket {
  return {
    sessionId: `session-${subject}`,
    scheme: 'TestFlow',
    claims: [{ type: 'application:subject', value: subject, issuer: 'TestFlow' }, { type: 'application:role', value: 'Reader', issuer: 'TestFlow' }],
    issuedAt: NOW - 10,
    expiresAt,
    tokens: { access_token: `token-${subject}` }
  }
}

describe('ticket cache', () => {
  test('a second open of the same sealed value is a hit that equals a fresh open', () => {
    const cache = new TicketCache(ring)
    const sealed = sealTicket(ticketFor('alice'), ring)
    const first = cache.open(sealed, NOW)
    assert.deepEqual(first, openTicket(sealed, ring, NOW))
    assert.equal(cache.size, 1)
    assert.equal(cache.open(sealed, NOW), first, 'the second open was not served from the cache')
  })

  test('a cached ticket that has expired opens as nothing and leaves the cache', () => {
    const cache = new TicketCache(ring)
    const sealed = sealTicket(ticketFor('bob', NOW + 60), ring)
    assert.notEqual(cache.open(sealed, NOW), undefined)
    assert.equal(cache.open(sealed, NOW + 60), undefined)
    assert.equal(cache.size, 0)
    assert.equal(cache.characters, 0)
  })

  test('values that do not open are not remembered', () => {
    const cache = new TicketCache(ring)
    const sealed = sealTicket(ticketFor('carol'), ring)
    const other = createKeyRing([randomBytes(32)])
    for (const value of ['', 'garbage', `${sealed}A`, sealTicket(ticketFor('mallory'), other), sealTicket(ticketFor('late', NOW - 1), ring)]) {
      assert.equal(cache.open(value, NOW), undefined, value.slice(0, 20))
    }
    assert.equal(cache.size, 0)
  })

  test('a value that shares a cached value\'s ends but differs in the middle is not served from the cache', () => {
    const cache = new TicketCache(ring)
    const sealed = sealTicket(ticketFor('erin'), ring)
    assert.ok(sealed.length > 200)
    const opened = cache.open(sealed, NOW)
    const middle = Math.floor(sealed.length / 2)
    const swapped = sealed[middle] === 'A' ? 'B' : 'A'
    const tampered = `${sealed.slice(0, middle)}${swapped}${sealed.slice(middle + 1)}`
    assert.equal(cache.open(tampered, NOW), undefined)
    assert.equal(cache.open(sealed, NOW), opened, 'the authentic entry was disturbed')
    assert.equal(cache.size, 1)
  })

  test('cached tickets are frozen: a request cannot change what the next one sees', () => {
    const cache = new TicketCache(ring)
    const opened = cache.open(sealTicket(ticketFor('dave'), ring), NOW) as AuthenticationTicket
    assert.throws(() => { (opened.claims as unknown as Array<{ value: string }>)[0]!.value = 'admin' }, TypeError)
    assert.throws(() => { (opened.claims as unknown[]).push({}) }, TypeError)
    assert.throws(() => { (opened.tokens as Record<string, string>).access_token = 'x' }, TypeError)
    assert.throws(() => { (opened as { expiresAt: number }).expiresAt = NOW + 99_999 }, TypeError)
  })

  test('bounded by entries: the least recently used goes first', () => {
    const cache = new TicketCache(ring, { maxEntries: 2 })
    const [a, b, c] = ['a', 'b', 'c'].map((subject) => sealTicket(ticketFor(subject), ring)) as [string, string, string]
    const openedA = cache.open(a, NOW)
    cache.open(b, NOW)
    assert.equal(cache.open(a, NOW), openedA) // a is now the most recently used
    cache.open(c, NOW) // b goes
    assert.equal(cache.size, 2)
    assert.equal(cache.open(a, NOW), openedA, 'the recently used entry was evicted')
    const openedB = cache.open(b, NOW)
    assert.notEqual(openedB, undefined)
    assert.equal(cache.size, 2)
  })

  test('bounded by characters of sealed value; a value larger than the bound is opened but not kept', () => {
    const a = sealTicket(ticketFor('a'), ring)
    const cache = new TicketCache(ring, { maxCharacters: a.length * 2 + 10 })
    cache.open(a, NOW)
    cache.open(sealTicket(ticketFor('b'), ring), NOW)
    cache.open(sealTicket(ticketFor('c'), ring), NOW)
    assert.equal(cache.size, 2)
    assert.ok(cache.characters <= a.length * 2 + 10)
    const small = new TicketCache(ring, { maxCharacters: 10 })
    assert.notEqual(small.open(a, NOW), undefined)
    assert.equal(small.size, 0)
    const none = new TicketCache(ring, { maxEntries: 0 })
    assert.notEqual(none.open(a, NOW), undefined)
    assert.equal(none.size, 0)
  })
})
