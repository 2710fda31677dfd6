/**
 * Sessions evicted by the embedded store's MaxSessions bound (issue 21, item 3): the least recently
 * written session ends, takes its index entries with it and stops working at once, even where its
 * record was cached; the index bound never refuses a sign-in while a session can still be evicted.
 * Here MaxSessions is 5 and every sign-in writes three index entries (its subject, and the
 * provider sid and sub that back-channel logout adds), as twelve users sign in one after another.
 * And (item 2) a session whose record disappears without an invalidation is dropped from the cache
 * at its next renewal instead of living on until its idle expiry.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { buildForSuite, claim, signIn, storedSession, TEST_SIGN_IN_PATH } from '../helpers/app.js'
import { waitFor } from '../helpers/wait.js'
import { userIndexKey } from '../../src/session/session-store.js'

const API = '/api/application-information'
const MAX_SESSIONS = 5
const USERS = 12

describe('sessions evicted by MaxSessions', () => {
  const t = buildForSuite({ settings: { State: { Embedded: { MaxSessions: MAX_SESSIONS } } } })

  const status = async (cookie: string): Promise<number> =>
    (await t.app.inject({ url: API, headers: { cookie, accept: 'application/json' } })).statusCode

  test(`${USERS} users with three index entries each all sign in; the oldest ${USERS - MAX_SESSIONS} sessions end at once and leave no index entry behind`, async () => {
    const cookies: string[] = []
    for (let index = 1; index <= USERS; index++) {
      const subject = `evicted-user-${index}`
      const response = await t.app.inject({
        method: 'POST',
        url: TEST_SIGN_IN_PATH,
        payload: {
          claims: [claim('application:subject', subject)],
          indexKeys: [`index:oidc-sid:sid-${index}`, `index:oidc-sub:sub-${index}`]
        }
      })
      assert.equal(response.statusCode, 204, `user ${index} signs in`)
      const cookie = response.cookies.map((item) => `${item.name}=${item.value}`).join('; ')
      cookies.push(cookie)
      assert.equal(await status(cookie), 200, `user ${index} is signed in (and cached)`)
    }
    for (let index = 1; index <= USERS; index++) {
      const expected = index <= USERS - MAX_SESSIONS ? 401 : 200
      assert.equal(await status(cookies[index - 1]!), expected, `user ${index}`)
      const indexed = await t.app.state.members(userIndexKey({ scheme: 'TestFlow', issuer: 'TestFlow', subject: `evicted-user-${index}` }))
      assert.equal(indexed.length, expected === 200 ? 1 : 0, `user ${index}'s user index`)
      assert.equal((await t.app.state.members(`index:oidc-sid:sid-${index}`)).length, expected === 200 ? 1 : 0, `user ${index}'s sid index`)
    }
    const events = t.logs.events('session.signed_in')
    assert.equal(events.length >= USERS, true, 'every sign-in was logged')
  })

  test('signing in again after eviction works', async () => {
    assert.equal(await status(await signIn(t.app, [claim('application:subject', 'evicted-user-1')])), 200)
  })
})

describe('a session whose record vanished without an invalidation (as Redis eviction does)', () => {
  let clock = Date.parse('2026-11-25T12:00:00Z')
  const t = buildForSuite({ now: () => clock, settings: { Authentication: { Cookie: { ExpireMinutes: 10 } } } })

  test('stops working at its next sliding renewal, not at its idle expiry', async () => {
    const cookie = await signIn(t.app, [claim('application:subject', 'vanishing-user')])
    const api = async (): Promise<number> => (await t.app.inject({ url: API, headers: { cookie, accept: 'application/json' } })).statusCode
    assert.equal(await api(), 200)
    const ticket = await storedSession(t.app, t.keyRing, cookie, Math.floor(clock / 1000))
    assert.ok(ticket !== undefined)
    // Gone from the store with nobody told (no publish): only a renewal can notice.
    await t.app.state.delete([`session:${ticket.sessionId}`])
    clock += 6 * 60_000
    assert.equal(await api(), 200, 'the cached copy answers once; its renewal finds the record gone')
    await waitFor(() => t.logs.events('session.renewal.skipped').length > 0, 'the renewal to find the record gone', 5000)
    assert.equal(await api(), 401, 'the cached copy was dropped: the store says the session is gone')
  })
})
