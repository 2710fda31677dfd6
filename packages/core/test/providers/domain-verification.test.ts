/**
 * Issue 28, item 3: the DNS TXT proof of a customer's e-mail domain, against a DNS server the test
 * controls (dns2 on a loopback UDP port, answering from a table): the right token verifies, a
 * missing name, other TXT records, another token, a server that never answers and a server that
 * fails are each told apart, and the lookup is bounded in time.
 */
import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import dns2 from 'dns2'
import {
  DOMAIN_VERIFICATION_LABEL, domainVerificationRecord, newDomainVerificationToken, normalizeDomain, verifyDomain
} from '../../src/providers/domain-verification.js'

const { Packet } = dns2

/** name (lower case) -> TXT values (each an array of chunks); a name mapped to 'servfail' fails. */
const zone = new Map<string, Array<string | string[]> | 'servfail' | 'silent'>()

describe('DNS TXT domain verification', () => {
  let server: ReturnType<typeof dns2.createServer>
  let address = ''
  const token = newDomainVerificationToken()

  before(async () => {
    server = dns2.createServer({
      udp: true,
      handle: (request, send) => {
        const response = Packet.createResponseFromRequest(request)
        const [question] = request.questions
        const entry = question === undefined ? undefined : zone.get(question.name.toLowerCase())
        if (entry === 'silent') return
        if (entry === 'servfail') {
          response.header.rcode = 2
        } else if (entry === undefined) {
          response.header.rcode = 3 // NXDOMAIN
        } else {
          for (const data of entry) response.answers.push({ name: question?.name ?? '', type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 60, data } as never)
        }
        send(response)
      }
    })
    await server.listen({ udp: { port: 0, address: '127.0.0.1' } } as never)
    const udp = (server.addresses() as { udp?: AddressInfo }).udp
    assert.ok(udp !== undefined)
    address = `127.0.0.1:${udp.port}`
  })

  after(async () => { await server.close() })

  test('the record to publish: a fixed label under the normalized domain and the prefixed token', () => {
    assert.deepEqual(domainVerificationRecord('Example.COM.', token), { name: `${DOMAIN_VERIFICATION_LABEL}.example.com`, value: `sso-verification=${token}` })
    assert.equal(token.length, 43)
    assert.notEqual(newDomainVerificationToken(), token)
  })

  test('domains are compared in one form; names that are not multi-label DNS names are refused', () => {
    assert.equal(normalizeDomain('EXAMPLE.com'), 'example.com')
    assert.equal(normalizeDomain('bücher.example'), 'xn--bcher-kva.example')
    for (const value of ['', 'localhost', '127.0.0.1', '[::1]', 'a..b', '-a.example', 'a-.example', 'user@example.com', `${'a'.repeat(64)}.example`]) {
      assert.equal(normalizeDomain(value), undefined, value)
    }
    assert.throws(() => domainVerificationRecord('localhost', token), /domain is not a DNS name/)
    assert.throws(() => domainVerificationRecord('example.com', 'short'), /token is not a verification token/)
  })

  test('the published token verifies, also among other TXT records and split into chunks', async () => {
    zone.set(`${DOMAIN_VERIFICATION_LABEL}.acme.example`, ['v=spf1 -all', `sso-verification=${token}`])
    assert.deepEqual(await verifyDomain({ domain: 'ACME.example', token, servers: [address] }), { verified: true, domain: 'acme.example' })
    zone.set(`${DOMAIN_VERIFICATION_LABEL}.chunked.example`, [['sso-verification=', token]])
    assert.deepEqual(await verifyDomain({ domain: 'chunked.example', token, servers: [address] }), { verified: true, domain: 'chunked.example' })
  })

  test('another token, no record and a failing server are told apart and never verify', async () => {
    zone.set(`${DOMAIN_VERIFICATION_LABEL}.other.example`, [`sso-verification=${newDomainVerificationToken()}`])
    assert.deepEqual(await verifyDomain({ domain: 'other.example', token, servers: [address] }), { verified: false, domain: 'other.example', reason: 'mismatch' })
    assert.deepEqual(await verifyDomain({ domain: 'absent.example', token, servers: [address] }), { verified: false, domain: 'absent.example', reason: 'not_found' })
    zone.set(`${DOMAIN_VERIFICATION_LABEL}.broken.example`, 'servfail')
    const broken = await verifyDomain({ domain: 'broken.example', token, servers: [address] })
    assert.equal(broken.verified, false)
    assert.equal(broken.verified === false && broken.reason, 'dns_error')
  })

  test('a server that never answers: timeout within the limit', async () => {
    zone.set(`${DOMAIN_VERIFICATION_LABEL}.slow.example`, 'silent')
    const started = Date.now()
    const result = await verifyDomain({ domain: 'slow.example', token, servers: [address], timeoutMs: 400 })
    assert.deepEqual(result, { verified: false, domain: 'slow.example', reason: 'timeout' })
    assert.ok(Date.now() - started < 3_000, 'bounded by the time limit')
  })
})
