/**
 * Key rotation (old key opens while listed, not after removal) and the __Host- attributes on every
 * Set-Cookie of the session and its chunks in every environment but the Development override.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { createKeyRing } from '../../src/data-protection/key-ring.js'
import { antiforgeryFor, buildTestApp, claim, cookieHeaderFrom, signIn, standardUser, TEST_SIGN_IN_PATH, testStateStore } from '../helpers/app.js'
import { cookieAttributes, cookiePair, setCookieLines } from '../helpers/cookies.js'

const COOKIE = '__Host-ProjectTemplate.Web.Authentication'

describe('key rotation', () => {
  test('a ticket sealed with the old key opens after a new key is put first, and not after the old key is removed', async () => {
    const oldKey = randomBytes(32)
    const newKey = randomBytes(32)
    // One store, as instances sharing Redis (or one instance across a restart with a kept store) see it.
    const store = testStateStore()
    const before = await buildTestApp({ keyRing: createKeyRing([oldKey]), stateStore: store })
    const cookie = await signIn(before.app, standardUser())
    await before.app.close()

    const rotated = await buildTestApp({ keyRing: createKeyRing([newKey, oldKey]), stateStore: store })
    assert.equal((await rotated.app.inject({ url: '/api/application-information', headers: { cookie } })).statusCode, 200)
    const fresh = await signIn(rotated.app, standardUser())
    await rotated.app.close()

    const retired = await buildTestApp({ keyRing: createKeyRing([newKey]), stateStore: store })
    assert.equal((await retired.app.inject({ url: '/api/application-information', headers: { cookie } })).statusCode, 401)
    assert.equal((await retired.app.inject({ url: '/api/application-information', headers: { cookie: fresh } })).statusCode, 200, 'tickets sealed with the new key still open')
    await retired.app.close()
  })

  test('keys configured as DataProtection:Keys rotate the same way', async () => {
    const oldKey = randomBytes(32).toString('base64')
    const newKey = randomBytes(32).toString('base64')
    const store = testStateStore()
    const before = await buildTestApp({ settings: { DataProtection: { Keys: [oldKey] } }, stateStore: store })
    const cookie = await signIn(before.app, standardUser())
    await before.app.close()
    const rotated = await buildTestApp({ settings: { DataProtection: { Keys: [newKey, oldKey] } }, stateStore: store })
    assert.equal((await rotated.app.inject({ url: '/api/application-information', headers: { cookie } })).statusCode, 200)
    await rotated.app.close()
    const retired = await buildTestApp({ settings: { DataProtection: { Keys: [newKey] } }, stateStore: store })
    assert.equal((await retired.app.inject({ url: '/api/application-information', headers: { cookie } })).statusCode, 401)
    await retired.app.close()
  })
})

describe('__Host- attributes on every session Set-Cookie', () => {
  const manyGroups = Array.from({ length: 300 }, (_, index) => claim('application:group', `group-${index}-${'g'.repeat(16)}`))
  for (const nodeEnv of [undefined, 'production', 'staging', 'development']) {
    test(`environment ${nodeEnv ?? '(unset)'}: sign-in (a 300-group principal) and sign-out cookies keep the prefix and attributes`, async () => {
      const t = await buildTestApp(nodeEnv === undefined ? {} : { nodeEnv })
      const signInResponse = await t.app.inject({ method: 'POST', url: TEST_SIGN_IN_PATH, payload: { claims: [...standardUser(), ...manyGroups] } })
      const list = setCookieLines(signInResponse.headers).filter((line) => line.includes('Web.Authentication'))
      assert.equal(list.length, 1, 'one session cookie, however large the principal')
      const { cookie, token } = await antiforgeryFor(t.app, cookieHeaderFrom(signInResponse))
      const logout = await t.app.inject({ method: 'POST', url: '/Account/Logout', headers: { cookie }, payload: { __RequestVerificationToken: token } })
      assert.equal(logout.statusCode, 302)
      const deleted = setCookieLines(logout.headers)
      assert.equal(deleted.length, 1, 'sign-out deletes the session cookie')
      for (const line of [...list, ...deleted]) {
        assert.ok(cookiePair(line).startsWith(COOKIE), line)
        const lower = cookieAttributes(line).map((attribute) => attribute.toLowerCase())
        assert.ok(lower.includes('secure'), `Secure: ${line}`)
        assert.ok(lower.includes('httponly'), `HttpOnly: ${line}`)
        assert.ok(lower.includes('samesite=lax'), `SameSite=Lax: ${line}`)
        assert.ok(lower.includes('path=/'), `Path=/: ${line}`)
        assert.ok(!lower.some((attribute) => attribute.startsWith('domain')), `no Domain: ${line}`)
      }
      await t.app.close()
    })
  }

  test('only the Development AllowInsecureHttp override drops the prefix and Secure', async () => {
    const t = await buildTestApp({ nodeEnv: 'development', settings: { Authentication: { Cookie: { AllowInsecureHttp: true } } } })
    const response = await t.app.inject({ method: 'POST', url: TEST_SIGN_IN_PATH, payload: { claims: standardUser() } })
    const line = String(response.headers['set-cookie'])
    assert.match(line, /^\.ProjectTemplate\.Web\.Authentication=/)
    assert.doesNotMatch(line, /;\s*Secure/i)
    assert.match(line, /HttpOnly/)
    assert.match(line, /SameSite=Lax/)
    await t.app.close()
  })
})
