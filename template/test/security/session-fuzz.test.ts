/**
 * Session-cookie fuzzing: thousands of mutations of valid sealed tickets (bit flips, truncation,
 * extension, base64 alphabet swaps, chunk reordering, missing/extra chunks, chunks from another
 * ticket, retired or unknown keys, expiry) all make the request anonymous: never a session,
 * never a 5xx, never a crash. fast-check with a fixed seed and a bounded run count.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import fc from 'fast-check'
import { chunkName, splitCookieValue } from '../../src/auth/cookie-chunks.js'
import { createKeyRing, type KeyRing } from '../../src/auth/key-ring.js'
import type { AuthenticationTicket } from '../../src/auth/principal.js'
import { sealTicket } from '../../src/auth/ticket.js'
import { buildTestApp, claim, standardUser, type TestApp } from '../helpers/app.js'

const COOKIE = '__Host-ProjectTemplate.Web.Authentication'
const SEED = 20261121
const RUNS = Number(process.env.FUZZ_RUNS ?? 2500)
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

function ticket (claims = standardUser(), lifetime = 3600): AuthenticationTicket {
  const now = Math.floor(Date.now() / 1000)
  return { sessionId: randomBytes(8).toString('hex'), scheme: 'TestFlow', claims, issuedAt: now, expiresAt: now + lifetime }
}

const bigClaims = () => [...standardUser(), ...Array.from({ length: 260 }, (_, index) => claim('application:group', `group-${index}-${randomBytes(6).toString('hex')}`))]

type Jar = Array<[string, string]>
const header = (jar: Jar): string => jar.map(([name, value]) => `${name}=${value}`).join('; ')
const sealedJar = (value: AuthenticationTicket, ring: KeyRing): Jar => splitCookieValue(COOKIE, sealTicket(value, ring))

describe('sealed session ticket under mutation', () => {
  let t: TestApp
  let small: Jar
  let big: Jar
  let otherBig: Jar

  before(async () => {
    t = await buildTestApp({ testSignIn: false })
    small = sealedJar(ticket(), t.keyRing)
    big = sealedJar(ticket(bigClaims()), t.keyRing)
    otherBig = sealedJar(ticket(bigClaims()), t.keyRing)
    assert.equal(big.length, otherBig.length)
    assert.ok(big.length >= 4, 'the large ticket spans several chunks')
  })
  after(async () => { await t.app.close() })

  async function status (jar: Jar): Promise<number> {
    const response = await t.app.inject({ url: '/api/application-information', headers: { cookie: header(jar) } })
    return response.statusCode
  }

  test('the unmutated tickets authenticate (the property below can fail)', async () => {
    assert.equal(await status(small), 200)
    assert.equal(await status(big), 200)
    assert.equal(await status(otherBig), 200)
  })

  const mutateValue = (value: string, kind: number, position: number, extra: string): string => {
    const index = position % value.length
    switch (kind) {
      case 0: { // flip one bit of one character, staying in printable ASCII
        const flipped = value.charCodeAt(index) ^ (1 << (position % 7))
        return value.slice(0, index) + String.fromCharCode(flipped < 0x21 || flipped > 0x7e ? 0x41 : flipped) + value.slice(index + 1)
      }
      case 1: return value.slice(0, index)
      case 2: return value + extra
      case 3: return value.slice(0, index) + (value[index] === '-' ? '+' : value[index] === '_' ? '/' : '=') + value.slice(index + 1)
      default: return value.slice(0, index) + extra + value.slice(index)
    }
  }

  test('every single-cookie mutation is anonymous and never a 5xx', async () => {
    await fc.assert(fc.asyncProperty(
      fc.boolean(), fc.nat(4), fc.nat(), fc.nat(), fc.string({ unit: fc.constantFrom(...BASE64URL), minLength: 1, maxLength: 8 }),
      async (useBig, kind, which, position, extra) => {
        const jar: Jar = (useBig ? big : small).map(([name, value]) => [name, value])
        const target = which % jar.length
        const [name, value] = jar[target] as [string, string]
        const mutated = mutateValue(value, kind, position, extra)
        fc.pre(mutated !== value)
        jar[target] = [name, mutated]
        const code = await status(jar)
        assert.equal(code, 401, `mutation ${kind} of cookie ${name}`)
      }
    ), { seed: SEED, numRuns: RUNS })
  })

  test('chunk reordering, missing, extra and foreign chunks are anonymous', async () => {
    await fc.assert(fc.asyncProperty(fc.nat(3), fc.nat(), fc.nat(), async (kind, a, b) => {
      const chunks = big.slice(1)
      let jar: Jar
      if (kind === 0) { // swap two different chunks' contents
        const i = a % chunks.length
        const j = (i + 1 + (b % (chunks.length - 1))) % chunks.length
        jar = [big[0] as [string, string], ...chunks.map(([name], index) => [name, (chunks[index === i ? j : index === j ? i : index] as [string, string])[1]] as [string, string])]
      } else if (kind === 1) { // drop a chunk
        const drop = a % chunks.length
        jar = big.filter((_, index) => index !== drop + 1)
      } else if (kind === 2) { // one chunk more than announced, or announced but absent
        jar = b % 2 === 0
          ? [...big, [chunkName(COOKIE, chunks.length + 1), 'AAAA']]
          : [[COOKIE, `chunks-${chunks.length + 1}`], ...chunks]
      } else { // a chunk from another ticket
        const swap = a % chunks.length
        jar = big.map((entry, index) => index === swap + 1 ? (otherBig[index] as [string, string]) : entry)
      }
      assert.equal(await status(jar), 401, `chunk mutation ${kind}`)
    }), { seed: SEED, numRuns: 400 })
  })

  test('tickets sealed with an unknown or retired key, or expired, are anonymous and cleared', async () => {
    const unknown = createKeyRing([randomBytes(32)])
    const cases: Array<[string, Jar]> = [
      ['unknown key', sealedJar(ticket(), unknown)],
      ['unknown key, chunked', sealedJar(ticket(bigClaims()), unknown)],
      ['expired', sealedJar(ticket(standardUser(), -1), t.keyRing)],
      ['main cookie names zero chunks', [[COOKIE, 'chunks-0']]],
      ['main cookie names too many chunks', [[COOKIE, 'chunks-99']]],
      ['empty value', [[COOKIE, '']]]
    ]
    for (const [label, jar] of cases) {
      const response = await t.app.inject({ url: '/api/application-information', headers: { cookie: header(jar) } })
      assert.equal(response.statusCode, 401, label)
      if (jar[0]?.[1] !== '') {
        const cleared = response.cookies.find((cookie) => cookie.name === COOKIE)
        assert.equal(cleared?.value, '', `${label}: the cookie is cleared`)
      }
    }
  })

  test('random bytes as the whole cookie header never crash the server', async () => {
    await fc.assert(fc.asyncProperty(fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength: 300 }), async (text) => {
      const response = await t.app.inject({ url: '/api/application-information', headers: { cookie: `${COOKIE}=${text}` } })
      assert.ok(response.statusCode === 401, `status ${response.statusCode}`)
    }), { seed: SEED, numRuns: 500 })
  })
})
