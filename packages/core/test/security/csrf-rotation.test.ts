/**
 * Anti-forgery tokens across a key rotation (docs/configuration.md, "Data-protection keys and
 * rotation", step 3 half rolled out): two instances whose rings list the same two keys in
 * opposite order, sharing one state store. A logout form issued by either is accepted by the
 * other and ends the session; a token made with a key that is not in the ring is refused with 400
 * and the session stays.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { createKeyRing } from '../../src/data-protection/key-ring.js'
import { antiforgeryFor, buildTestApp, signIn, standardUser, testStateStore, type TestApp } from '../helpers/app.js'

const API = '/api/application-information'

describe('anti-forgery during key rotation step 3', () => {
  const [oldKey, newKey, foreignKey] = [randomBytes(32), randomBytes(32), randomBytes(32)]
  const store = testStateStore()
  let a: TestApp
  let b: TestApp
  let foreign: TestApp

  before(async () => {
    // A still seals with the old key, B already with the new one; both open both.
    a = await buildTestApp({ keyRing: createKeyRing([oldKey, newKey]), stateStore: store })
    b = await buildTestApp({ keyRing: createKeyRing([newKey, oldKey]), stateStore: store })
    // Opens A's and B's session cookies (the old key), but issues tokens with a key neither has.
    foreign = await buildTestApp({ keyRing: createKeyRing([foreignKey, oldKey]), stateStore: store })
  })

  after(async () => {
    await Promise.all([a, b, foreign].map(async (t) => await t?.app.close()))
    await store.close()
  })

  async function logout (on: TestApp, form: { cookie: string, token: string }): Promise<{ statusCode: number, location: unknown }> {
    const response = await on.app.inject({ method: 'POST', url: '/Account/Logout', headers: { cookie: form.cookie }, payload: { __RequestVerificationToken: form.token } })
    return { statusCode: response.statusCode, location: response.headers.location }
  }

  const signedIn = async (on: TestApp, cookie: string): Promise<boolean> => (await on.app.inject({ url: API, headers: { cookie } })).statusCode === 200

  for (const [issuer, verifier] of [['A', 'B'], ['B', 'A']] as const) {
    test(`a logout form from ${issuer} signs out on ${verifier}`, async () => {
      const apps = { A: a, B: b }
      const cookie = await signIn(apps[issuer].app, standardUser())
      const form = await antiforgeryFor(apps[issuer].app, cookie)
      assert.ok(await signedIn(apps[verifier], cookie), `the session opens on ${verifier}`)
      assert.deepEqual(await logout(apps[verifier], form), { statusCode: 302, location: '/' })
      assert.equal(await signedIn(apps[issuer], cookie), false, 'the session ended')
    })
  }

  test('a token made with a key outside the ring is refused with 400 and the session stays', async () => {
    const cookie = await signIn(a.app, standardUser())
    const form = await antiforgeryFor(foreign.app, cookie)
    assert.equal((await logout(a, form)).statusCode, 400)
    assert.equal((await logout(b, form)).statusCode, 400)
    assert.ok(await signedIn(a, cookie), 'the session stays')
    // Control: the same session's own form from A is accepted, so the refusal above is the key's.
    assert.equal((await logout(a, await antiforgeryFor(a.app, cookie))).statusCode, 302)
  })
})
