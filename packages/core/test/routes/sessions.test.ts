/**
 * /Account/Sessions (issue 29, item 3): the signed-in user's live sessions as a page and as JSON
 * (device from the User-Agent, provider, start, last activity, which one is this), ending one
 * other session or all others with anti-forgery, through the same revocation as sign-out
 * everywhere; another user's session cannot be named; app.session.list and revokeByAuditId for
 * an administrator's page, bounded to the newest with a total; on two instances sharing a real
 * Redis the ended session stops working on the other instance at once.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { antiforgeryFor, buildTestApp, claim, cookieHeaderFrom, standardUser, TEST_SIGN_IN_PATH, twoInstancesForSuite, type TestApp } from '../helpers/app.js'
import { RedisServer } from '../helpers/redis-server.js'
import { waitFor } from '../helpers/wait.js'
import { userKeyOf } from '../../src/session/user-identity.js'

const API = '/api/application-information'
const FIREFOX_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0'
const SAFARI_IOS = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1'
const CHROME_LINUX = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'
const USER = userKeyOf({ scheme: 'TestFlow', issuer: 'TestFlow', subject: 'user-1' })

async function signInFrom (app: FastifyInstance, userAgent: string, claims = standardUser()): Promise<string> {
  const response = await app.inject({ method: 'POST', url: TEST_SIGN_IN_PATH, headers: { 'user-agent': userAgent }, payload: { claims } })
  assert.equal(response.statusCode, 204)
  return cookieHeaderFrom(response)
}

const status = async (app: FastifyInstance, cookie: string): Promise<number> => (await app.inject({ url: API, headers: { cookie, accept: 'application/json' } })).statusCode

interface ListedSession { sessionAuditId: string, provider: string, device: string, startedAt: string, lastSeenAt: string, current: boolean }

async function listed (app: FastifyInstance, cookie: string): Promise<{ total: number, complete: boolean, sessions: ListedSession[] }> {
  const response = await app.inject({ url: '/Account/Sessions', headers: { cookie, accept: 'application/json' } })
  assert.equal(response.statusCode, 200)
  assert.equal(response.headers['cache-control'], 'no-store')
  return response.json()
}

describe('/Account/Sessions on the embedded store', () => {
  let now = Date.UTC(2026, 10, 25, 9, 0, 0)
  let t: TestApp
  before(async () => { t = await buildTestApp({ now: () => now }) })
  after(async () => { await t?.app.close() })

  test('lists the user\'s sessions newest first, marks this one, and describes each device coarsely', async () => {
    const firefox = await signInFrom(t.app, FIREFOX_WINDOWS)
    now += 60_000
    const safari = await signInFrom(t.app, SAFARI_IOS)
    now += 60_000
    await signInFrom(t.app, CHROME_LINUX, [claim('application:subject', 'someone-else')])
    const list = await listed(t.app, firefox)
    assert.equal(list.total, 2)
    assert.deepEqual(list.sessions.map((session) => [session.device, session.provider, session.startedAt, session.current]), [
      ['Safari on iOS', 'TestFlow', '2026-11-25T09:01:00.000Z', false],
      ['Firefox on Windows', 'TestFlow', '2026-11-25T09:00:00.000Z', true]
    ])
    const page = await t.app.inject({ url: '/Account/Sessions', headers: { cookie: safari } })
    assert.equal(page.statusCode, 200)
    assert.match(String(page.headers['content-type']), /^text\/html/)
    assert.ok(page.body.includes('<span id="session-count">You are signed in on 2 devices.</span>'))
    assert.equal(page.body.split('class="this-device"').length - 1, 1)
    assert.ok(page.body.includes('<td>Firefox on Windows</td><td>TestFlow</td><td><time datetime="2026-11-25T09:00:00.000Z">2026-11-25 09:00 UTC</time></td>'))
    assert.equal(page.body.split('class="end-session"').length - 1, 1, 'one other session to end')
    assert.ok(page.body.includes('id="end-other-sessions"'))
  })

  test('ending another session signs that device out at once; this one stays; an audit line records it', async () => {
    const first = await signInFrom(t.app, FIREFOX_WINDOWS, [claim('application:subject', 'user-2')])
    const second = await signInFrom(t.app, SAFARI_IOS, [claim('application:subject', 'user-2')])
    const other = (await listed(t.app, first)).sessions.find((session) => !session.current)
    assert.equal(other?.device, 'Safari on iOS')
    const { token, cookie } = await antiforgeryFor(t.app, first)
    const response = await t.app.inject({ method: 'POST', url: '/Account/Sessions/End', headers: { cookie }, payload: { __RequestVerificationToken: token, sessionAuditId: other?.sessionAuditId } })
    assert.equal(response.statusCode, 303)
    assert.equal(response.headers.location, '/Account/Sessions')
    assert.equal(await status(t.app, second), 401)
    assert.equal(await status(t.app, first), 200)
    assert.equal((await listed(t.app, first)).total, 1)
    const event = t.logs.events('session.ended_by_user').at(-1)
    assert.deepEqual({ ended: event?.ended, current: event?.current, subject: event?.subject, endedSessionAuditId: event?.endedSessionAuditId }, { ended: true, current: false, subject: 'user-2', endedSessionAuditId: other?.sessionAuditId })
  })

  test('another user\'s session cannot be ended by naming its audit id', async () => {
    const mine = await signInFrom(t.app, FIREFOX_WINDOWS, [claim('application:subject', 'user-3')])
    const theirs = await signInFrom(t.app, SAFARI_IOS, [claim('application:subject', 'user-4')])
    const theirId = (await listed(t.app, theirs)).sessions[0]?.sessionAuditId
    const { token, cookie } = await antiforgeryFor(t.app, mine)
    const response = await t.app.inject({ method: 'POST', url: '/Account/Sessions/End', headers: { cookie, accept: 'application/json' }, payload: { __RequestVerificationToken: token, sessionAuditId: theirId } })
    assert.equal(response.statusCode, 200)
    assert.deepEqual(response.json(), { ended: false })
    assert.equal(await status(t.app, theirs), 200)
  })

  test('ending all others keeps only this session; without the anti-forgery token nothing ends', async () => {
    const here = await signInFrom(t.app, FIREFOX_WINDOWS, [claim('application:subject', 'user-5')])
    const others = [await signInFrom(t.app, SAFARI_IOS, [claim('application:subject', 'user-5')]), await signInFrom(t.app, CHROME_LINUX, [claim('application:subject', 'user-5')])]
    const { token, cookie } = await antiforgeryFor(t.app, here)
    const forged = await t.app.inject({ method: 'POST', url: '/Account/Sessions/EndOthers', headers: { cookie }, payload: {} })
    assert.equal(forged.statusCode, 400)
    for (const other of others) assert.equal(await status(t.app, other), 200)
    const response = await t.app.inject({ method: 'POST', url: '/Account/Sessions/EndOthers', headers: { cookie, accept: 'application/json' }, payload: { __RequestVerificationToken: token } })
    assert.deepEqual(response.json(), { ended: 2 })
    for (const other of others) assert.equal(await status(t.app, other), 401)
    assert.equal(await status(t.app, here), 200)
    assert.equal(t.logs.events('session.others_ended').at(-1)?.sessions, 2)
  })

  test('ending the current session signs this browser out', async () => {
    const here = await signInFrom(t.app, FIREFOX_WINDOWS, [claim('application:subject', 'user-6')])
    const id = (await listed(t.app, here)).sessions[0]?.sessionAuditId
    const { token, cookie } = await antiforgeryFor(t.app, here)
    const response = await t.app.inject({ method: 'POST', url: '/Account/Sessions/End', headers: { cookie }, payload: { __RequestVerificationToken: token, sessionAuditId: id } })
    assert.equal(response.statusCode, 303)
    assert.equal(response.headers.location, '/')
    assert.equal(await status(t.app, here), 401)
  })

  test('anonymous: the page challenges (HTML redirect, JSON 401)', async () => {
    const page = await t.app.inject({ url: '/Account/Sessions' })
    assert.equal(page.statusCode, 302)
    assert.equal(page.headers.location, '/Account/Login?ReturnUrl=%2FAccount%2FSessions')
    assert.equal((await t.app.inject({ url: '/Account/Sessions', headers: { accept: 'application/json' } })).statusCode, 401)
  })

  test('app.session.list is bounded to the newest with the total; revokeByAuditId ends one', async () => {
    const user = [claim('application:subject', 'many-sessions')]
    const cookies: string[] = []
    for (let index = 0; index < 30; index++) {
      now += 1000
      cookies.push(await signInFrom(t.app, FIREFOX_WINDOWS, user))
    }
    const key = userKeyOf({ scheme: 'TestFlow', issuer: 'TestFlow', subject: 'many-sessions' })
    const list = await t.app.session.list(key, { limit: 5 })
    assert.equal(list.total, 30)
    assert.equal(list.complete, true)
    assert.equal(list.sessions.length, 5)
    assert.deepEqual(list.sessions.map((session) => session.startedAt), Array.from({ length: 5 }, (_, index) => Math.floor(now / 1000) - index))
    const newest = list.sessions[0]?.sessionAuditId ?? ''
    assert.equal(await t.app.session.revokeByAuditId(key, newest), true)
    assert.equal(await status(t.app, cookies.at(-1) ?? ''), 401)
    assert.equal(await t.app.session.revokeByAuditId(key, newest), false, 'already ended')
    assert.equal(await t.app.session.revokeByAuditId(USER, newest), false, 'not that user\'s session')
    assert.equal((await t.app.session.list(key)).total, 29)
    await assert.rejects(t.app.session.list('not-a-key'), { name: 'TypeError', message: 'app.session.list: userKey must be a user key (43 characters, request.user.userKey or userKeyOf).' })
    await assert.rejects(t.app.session.list(key, { limit: 0 }), { name: 'TypeError', message: 'app.session.list: limit must be an integer from 1 to 1000.' })
  })
})

describe('/Account/Sessions on two instances sharing one Redis', () => {
  const server = new RedisServer()
  const { a, b } = twoInstancesForSuite({
    start: async () => {
      await server.start()
      return { State: { Provider: 'Redis', Redis: { ConnectionString: server.connectionString, TimeoutMilliseconds: 500 } } }
    },
    stop: async () => { await server.dispose() }
  })

  test('a session ended from B stops working on A at once, though A had it cached', async () => {
    const here = await signInFrom(a.app, FIREFOX_WINDOWS)
    const there = await signInFrom(a.app, SAFARI_IOS)
    assert.equal(await status(a.app, there), 200, 'cached on A')
    const list = await listed(b.app, here)
    assert.equal(list.total, 2)
    const other = list.sessions.find((session) => !session.current)
    assert.equal(other?.device, 'Safari on iOS')
    const { token, cookie } = await antiforgeryFor(b.app, here)
    const response = await b.app.inject({ method: 'POST', url: '/Account/Sessions/End', headers: { cookie }, payload: { __RequestVerificationToken: token, sessionAuditId: other?.sessionAuditId } })
    assert.equal(response.statusCode, 303)
    await waitFor(async () => await status(a.app, there) === 401, 'A to refuse the ended session', 2000, 20)
    assert.equal(await status(a.app, here), 200)
  })
})
