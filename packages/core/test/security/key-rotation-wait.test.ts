/**
 * Why docs/configuration.md (rotation step 4) waits AbsoluteExpireMinutes, not ExpireMinutes,
 * before the old key is removed: sliding renewal keeps a session alive past ExpireMinutes without
 * sealing its cookie again, so an active user still carries a cookie sealed with the old key. The
 * same session is refused by an instance without the old key, and ends at AbsoluteExpireMinutes
 * everywhere, after which the old key is no longer needed.
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { createKeyRing } from '../../src/data-protection/key-ring.js'
import { buildTestApp, signIn, standardUser, testStateStore, type TestApp } from '../helpers/app.js'

const API = '/api/application-information'
const MINUTE = 60_000

describe('rotation: the old key is needed until the absolute session lifetime', () => {
  const [oldKey, newKey] = [randomBytes(32), randomBytes(32)]
  const store = testStateStore()
  let clock = Date.UTC(2030, 0, 1)
  const now = (): number => clock
  // Defaults: ExpireMinutes 60, AbsoluteExpireMinutes 720, sliding renewal on.
  const apps: TestApp[] = []
  after(async () => {
    await Promise.all(apps.map(async (t) => await t.app.close()))
    await store.close()
  })

  test('renewed past ExpireMinutes, the cookie still needs the old key; at AbsoluteExpireMinutes the session ends', async () => {
    const rotated = await buildTestApp({ keyRing: createKeyRing([newKey, oldKey]), stateStore: store, now })
    const withoutOldKey = await buildTestApp({ keyRing: createKeyRing([newKey]), stateStore: store, now })
    const signing = await buildTestApp({ keyRing: createKeyRing([oldKey]), stateStore: store, now })
    apps.push(rotated, withoutOldKey, signing)
    const cookie = await signIn(signing.app, standardUser())
    const status = async (t: TestApp): Promise<number> => (await t.app.inject({ url: API, headers: { cookie } })).statusCode
    // An active user: a request every 40 minutes, each past half of the idle lifetime, so renewed.
    for (let elapsed = 40; elapsed <= 200; elapsed += 40) {
      clock += 40 * MINUTE
      assert.equal(await status(rotated), 200, `${elapsed} min: alive on the rotated instance`)
      // The renewal is stored in the background (the embedded store answers at once): let it land.
      await sleep(20)
    }
    assert.equal(await status(withoutOldKey), 401, '200 min (> ExpireMinutes 60): without the old key the active session is refused')
    clock += 520 * MINUTE
    assert.equal(await status(rotated), 401, 'past AbsoluteExpireMinutes (720) the session has ended everywhere')
  })
})
