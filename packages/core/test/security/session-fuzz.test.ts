/**
 * Session-cookie fuzzing: thousands of mutations of valid sealed session references (bit flips,
 * truncation, extension, base64 alphabet swaps), references sealed with unknown keys or naming
 * sessions that were never stored, ended or expired: all make the request anonymous: never a
 * session, never a 5xx, never a crash. fast-check with a fixed seed and a bounded run count.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes, randomUUID } from 'node:crypto'
import fc from 'fast-check'
import { createKeyRing } from '../../src/data-protection/key-ring.js'
import { sealSessionReference } from '../../src/session/ticket.js'
import { buildTestApp, claim, sessionValueOf, signIn, standardUser, type TestApp } from '../helpers/app.js'

const COOKIE = '__Host-ProjectTemplate.Web.Authentication'
const SEED = 20261121
const RUNS = Number(process.env.FUZZ_RUNS ?? 2500)
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

const bigClaims = () => [...standardUser(), ...Array.from({ length: 260 }, (_, index) => claim('application:group', `group-${index}-${randomBytes(6).toString('hex')}`))]

describe('sealed session reference under mutation', () => {
  let t: TestApp
  let small: string
  let big: string

  before(async () => {
    t = await buildTestApp()
    small = sessionValueOf(await signIn(t.app, standardUser()))
    big = sessionValueOf(await signIn(t.app, bigClaims()))
  })
  after(async () => { await t.app.close() })

  async function status (value: string): Promise<number> {
    const response = await t.app.inject({ url: '/api/application-information', headers: { cookie: `${COOKIE}=${value}` } })
    return response.statusCode
  }

  test('the unmutated references authenticate (the property below can fail)', async () => {
    assert.equal(await status(small), 200)
    assert.equal(await status(big), 200)
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

  test('every mutation is anonymous and never a 5xx', async () => {
    await fc.assert(fc.asyncProperty(
      fc.boolean(), fc.nat(4), fc.nat(), fc.string({ unit: fc.constantFrom(...BASE64URL), minLength: 1, maxLength: 8 }),
      async (useBig, kind, position, extra) => {
        const value = useBig ? big : small
        const mutated = mutateValue(value, kind, position, extra)
        fc.pre(mutated !== value)
        assert.equal(await status(mutated), 401, `mutation ${kind}`)
      }
    ), { seed: SEED, numRuns: RUNS })
  })

  test('references sealed with an unknown key, naming no stored session, or to an ended session are anonymous and cleared', async () => {
    const unknown = createKeyRing([randomBytes(32)])
    const ended = sessionValueOf(await signIn(t.app, [claim('application:subject', 'ended-user')]))
    await t.app.session.revokeUser({ scheme: 'TestFlow', issuer: 'TestFlow', subject: 'ended-user' })
    const cases: Array<[string, string]> = [
      ['unknown key', sealSessionReference(randomUUID(), unknown)],
      ['never stored', sealSessionReference(randomUUID(), t.keyRing)],
      ['ended', ended],
      ['a legacy chunk header', 'chunks-2'],
      ['empty value', '']
    ]
    for (const [label, value] of cases) {
      const response = await t.app.inject({ url: '/api/application-information', headers: { cookie: `${COOKIE}=${value}` } })
      assert.equal(response.statusCode, 401, label)
      if (value !== '') {
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
