/**
 * The cookie session as the browser sees it: contract cookie attributes (and the Development-only
 * override); the cookie is a small sealed reference and the session lives in the state store, so
 * a 300-group principal signs in; damaged, forged, missing, expired or revoked sessions mean
 * anonymous with the cookie cleared (never a 500); idle and absolute lifetimes with an injected
 * clock; logout, "sign out everywhere" and the revocation API end sessions for every copy of the
 * cookie.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes, randomUUID } from 'node:crypto'
import { createKeyRing } from '../../src/data-protection/key-ring.js'
import type { Claim } from '../../src/session/principal.js'
import { sealSessionReference } from '../../src/session/ticket.js'
import { buildForSuite, build, antiforgeryFor, buildTestApp, claim, cookieHeaderFrom, loadTestConfiguration, signIn, standardUser, storedSession, TEST_SIGN_IN_PATH, type TestApp } from '../helpers/app.js'
import { cookieAttributes, setCookieLines } from '../helpers/cookies.js'

const SECURE_NAME = '__Host-ProjectTemplate.Web.Authentication'
const INSECURE_NAME = '.ProjectTemplate.Web.Authentication'
const CLAIMS_PATH = '/test-only/claims'
const API = '/api/application-information'

const withClaimsRoute = (app: TestApp['app']): void => {
  app.get(CLAIMS_PATH, { config: { authorize: true } }, async (request) => ({ claims: request.user?.claims ?? [] }))
}

async function claimsOf (app: TestApp['app'], cookie: string): Promise<Claim[]> {
  const response = await app.inject({ url: CLAIMS_PATH, headers: { cookie } })
  assert.equal(response.statusCode, 200, 'the session opens')
  return (response.json() as { claims: Claim[] }).claims
}

/** A clock the test moves. */
function testClock (start = Date.now()): { now: () => number, advance: (minutes: number) => void } {
  let current = start
  return { now: () => current, advance: (minutes) => { current += minutes * 60_000 } }
}

const status = async (app: TestApp['app'], cookie: string): Promise<number> => (await app.inject({ url: API, headers: { cookie } })).statusCode

describe('session cookie attributes', () => {
  test('sign-in sets __Host-ProjectTemplate.Web.Authentication with HttpOnly, Secure, SameSite=Lax, Path=/ and no Domain, as one small cookie', async (context) => {
    const t = await build(context)
    const response = await t.app.inject({ method: 'POST', url: TEST_SIGN_IN_PATH, payload: { claims: standardUser() } })
    const cookies = setCookieLines(response.headers)
    assert.equal(cookies.length, 1)
    const [pair = ''] = (cookies[0] ?? '').split(';')
    assert.ok(pair.startsWith(`${SECURE_NAME}=`) && pair.length > SECURE_NAME.length + 20)
    assert.ok(pair.length < 200, `the cookie is a reference, not the ticket (${pair.length} characters)`)
    assert.deepEqual(cookieAttributes(cookies[0] ?? '').sort(), ['HttpOnly', 'Path=/', 'SameSite=Lax', 'Secure'])
  })

  test('Development without the override keeps the __Host- cookie and Secure', async (context) => {
    const t = await build(context, { nodeEnv: 'development' })
    const response = await t.app.inject({ method: 'POST', url: TEST_SIGN_IN_PATH, payload: { claims: standardUser() } })
    const cookie = setCookieLines(response.headers)[0] ?? ''
    assert.ok(cookie.startsWith(`${SECURE_NAME}=`))
    assert.ok(cookieAttributes(cookie).includes('Secure'))
  })

  test('the Development AllowInsecureHttp override uses .ProjectTemplate.Web.Authentication without Secure', async (context) => {
    const t = await build(context, { nodeEnv: 'development', settings: { Authentication: { Cookie: { AllowInsecureHttp: true } } } })
    const response = await t.app.inject({ method: 'POST', url: TEST_SIGN_IN_PATH, payload: { claims: standardUser() } })
    const cookie = setCookieLines(response.headers)[0] ?? ''
    assert.ok(cookie.startsWith(`${INSECURE_NAME}=`), cookie)
    assert.deepEqual(cookieAttributes(cookie).sort(), ['HttpOnly', 'Path=/', 'SameSite=Lax'])
    const session = cookieHeaderFrom(response)
    assert.equal(await status(t.app, session), 200)
    // The secure name is not read under the override.
    assert.equal(await status(t.app, session.replace(INSECURE_NAME, SECURE_NAME)), 401)
  })

  test('the override is rejected at startup outside Development', () => {
    for (const nodeEnv of ['production', 'staging']) {
      const loaded = loadTestConfiguration({ nodeEnv, settings: { Authentication: { Cookie: { AllowInsecureHttp: true } } } })
      assert.equal(loaded.errors.length, 1)
      assert.match(loaded.errors[0]?.message ?? '', /^ProjectTemplate:Authentication:Cookie:AllowInsecureHttp may be true only in Development/)
    }
  })
})

describe('damaged, forged and orphaned session cookies', () => {
  let t: TestApp
  let valid: string
  before(async () => {
    t = await buildTestApp()
    valid = (await signIn(t.app, standardUser())).split('=').slice(1).join('=')
  })
  after(async () => { await t.app.close() })

  const cases: Array<[string, () => string]> = [
    ['tampered', () => `${valid.slice(0, 20)}${valid[20] === 'A' ? 'B' : 'A'}${valid.slice(21)}`],
    ['truncated', () => valid.slice(0, -5)],
    ['forged (a reference sealed under a foreign key)', () => sealSessionReference(randomUUID(), createKeyRing([randomBytes(32)]))],
    ['authentic but naming no stored session', () => sealSessionReference(randomUUID(), t.keyRing)],
    ['non-canonical base64 (padding appended)', () => `${valid}==`],
    ['not base64 at all', () => '%%%not-a-ticket%%%'],
    ['a legacy chunk header', () => 'chunks-2'],
    ['oversized', () => 'A'.repeat(4000)]
  ]
  for (const [name, value] of cases) {
    test(`a ${name} cookie is anonymous (302 to login, 401 for the API) and is cleared`, async () => {
      const cookie = `${SECURE_NAME}=${value()}`
      const page = await t.app.inject({ url: '/', headers: { cookie } })
      assert.equal(page.statusCode, 302)
      assert.equal(page.headers.location, '/Account/Login?ReturnUrl=%2F')
      const cleared = setCookieLines(page.headers).find((header) => header.startsWith(`${SECURE_NAME}=;`))
      assert.ok(cleared !== undefined, `the cookie is cleared: ${JSON.stringify(page.headers['set-cookie'])}`)
      assert.match(cleared, /Max-Age=0/)
      assert.ok(cookieAttributes(cleared).includes('Secure') && cookieAttributes(cleared).includes('Path=/'), 'deleted with the same attributes, or the browser keeps it')
      assert.equal(await status(t.app, cookie), 401)
    })
  }

  test('a valid cookie is not cleared and no cookie is written when nothing changes', async () => {
    const response = await t.app.inject({ url: API, headers: { cookie: `${SECURE_NAME}=${valid}` } })
    assert.equal(response.statusCode, 200)
    assert.deepEqual(setCookieLines(response.headers), [])
  })
})

describe('large principals live in the state store', () => {
  let t: TestApp
  // 37 characters each, the length of the GUIDs Entra ID sends as group ids.
  const groups = Array.from({ length: 300 }, (_, index) => claim('application:group', `group-number-${String(index).padStart(3, '0')}-of-a-large-directory`))
  before(async () => { t = await buildTestApp({ configure: withClaimsRoute }) })
  after(async () => { await t.app.close() })

  test('a principal with 300 group claims of 37 characters signs in with one small cookie', async () => {
    assert.equal(groups[299]?.value, 'group-number-299-of-a-large-directory')
    const response = await t.app.inject({ method: 'POST', url: TEST_SIGN_IN_PATH, payload: { claims: [...standardUser(), ...groups] } })
    assert.equal(response.statusCode, 204)
    const cookies = setCookieLines(response.headers)
    assert.equal(cookies.length, 1)
    assert.ok((cookies[0] ?? '').length < 300)
  })

  test('the principal reads back with all 300 groups, in order, from the store', async () => {
    const cookie = await signIn(t.app, [...standardUser(), ...groups])
    const claims = await claimsOf(t.app, cookie)
    const readGroups = claims.filter((c) => c.type === 'application:group' && c.value.startsWith('group-number-')).map((c) => c.value)
    assert.deepEqual(readGroups, groups.map((g) => g.value))
    assert.equal(claims.length, standardUser().length + 300)
    const stored = await storedSession(t.app, t.keyRing, cookie)
    assert.equal(stored?.claims.length, standardUser().length + 300)
  })
})

describe('lifetime (injected clock)', () => {
  test('a session ends ExpireMinutes after its last renewal when idle', async (context) => {
    const clock = testClock()
    const t = await build(context, { now: clock.now, settings: { Authentication: { Cookie: { ExpireMinutes: 10 } } } })
    const cookie = await signIn(t.app, standardUser())
    clock.advance(9)
    // Past half its lifetime: renewed to 10 minutes from now.
    assert.equal(await status(t.app, cookie), 200)
    clock.advance(9)
    assert.equal(await status(t.app, cookie), 200, 'renewal moved the idle expiry')
    clock.advance(11)
    const response = await t.app.inject({ url: API, headers: { cookie } })
    assert.equal(response.statusCode, 401, 'idle past ExpireMinutes')
    assert.ok(setCookieLines(response.headers).some((header) => header.startsWith(`${SECURE_NAME}=;`)), 'the cookie is cleared')
  })

  test('sliding renewal never extends a session beyond AbsoluteExpireMinutes', async (context) => {
    const clock = testClock()
    const t = await build(context, { now: clock.now, settings: { Authentication: { Cookie: { ExpireMinutes: 10, AbsoluteExpireMinutes: 30 } } } })
    const cookie = await signIn(t.app, standardUser())
    for (let minute = 6; minute < 30; minute += 6) {
      clock.advance(6)
      assert.equal(await status(t.app, cookie), 200, `active at minute ${minute}`)
    }
    clock.advance(6)
    assert.equal(await status(t.app, cookie), 401, 'ended at the absolute lifetime although it was renewed every 6 minutes')
  })

  test('with SlidingExpiration false the session ends ExpireMinutes after sign-in however active', async (context) => {
    const clock = testClock()
    const t = await build(context, { now: clock.now, settings: { Authentication: { Cookie: { ExpireMinutes: 10, SlidingExpiration: false } } } })
    const cookie = await signIn(t.app, standardUser())
    clock.advance(6)
    assert.equal(await status(t.app, cookie), 200)
    clock.advance(5)
    assert.equal(await status(t.app, cookie), 401)
  })

  test('renewal keeps the session id (anti-forgery tokens stay valid) and the cookie unchanged', async (context) => {
    const clock = testClock()
    const t = await build(context, { now: clock.now, settings: { Authentication: { Cookie: { ExpireMinutes: 10 } } } })
    const cookie = await signIn(t.app, standardUser())
    const before = await storedSession(t.app, t.keyRing, cookie, Math.floor(clock.now() / 1000))
    clock.advance(6)
    const response = await t.app.inject({ url: API, headers: { cookie } })
    assert.equal(response.statusCode, 200)
    assert.deepEqual(setCookieLines(response.headers), [], 'nothing to rewrite in the browser')
    await new Promise((resolve) => setImmediate(resolve))
    const after = await storedSession(t.app, t.keyRing, cookie, Math.floor(clock.now() / 1000))
    assert.equal(after?.sessionId, before?.sessionId)
    assert.equal((after?.expiresAt ?? 0) - Math.floor(clock.now() / 1000), 600)
    assert.equal(after?.absoluteExpiresAt, before?.absoluteExpiresAt)
  })

  test('AbsoluteExpireMinutes below ExpireMinutes is rejected at startup, naming the key', () => {
    const loaded = loadTestConfiguration({ settings: { Authentication: { Cookie: { ExpireMinutes: 60, AbsoluteExpireMinutes: 30 } } } })
    assert.deepEqual(loaded.errors.map((problem) => problem.message), ['ProjectTemplate:Authentication:Cookie:AbsoluteExpireMinutes must be at least ProjectTemplate:Authentication:Cookie:ExpireMinutes.'])
  })
})

describe('revocation (embedded store)', () => {
  const t = buildForSuite()

  test('after logout a copy of the old cookie is refused and cleared', async () => {
    const cookie = await signIn(t.app, standardUser())
    const { token, cookie: withSecret } = await antiforgeryFor(t.app, cookie)
    const logout = await t.app.inject({ method: 'POST', url: '/Account/Logout', headers: { cookie: withSecret }, payload: { __RequestVerificationToken: token } })
    assert.equal(logout.statusCode, 302)
    const copy = await t.app.inject({ url: API, headers: { cookie } })
    assert.equal(copy.statusCode, 401, 'the stolen copy no longer works')
    assert.ok(setCookieLines(copy.headers).some((header) => header.startsWith(`${SECURE_NAME}=;`)))
    assert.equal(await storedSession(t.app, t.keyRing, cookie), undefined, 'the record is gone from the store')
  })

  test('sign out everywhere ends every session of the subject, and only that subject', async () => {
    const laptop = await signIn(t.app, standardUser())
    const phone = await signIn(t.app, standardUser())
    const other = await signIn(t.app, [claim('application:subject', 'user-2'), claim('application:name', 'Grace')])
    const { token, cookie: withSecret } = await antiforgeryFor(t.app, laptop)
    const response = await t.app.inject({ method: 'POST', url: '/Account/LogoutEverywhere', headers: { cookie: withSecret }, payload: { __RequestVerificationToken: token } })
    assert.equal(response.statusCode, 302)
    assert.equal(await status(t.app, laptop), 401)
    assert.equal(await status(t.app, phone), 401, 'the other device is signed out too')
    assert.equal(await status(t.app, other), 200, 'another subject keeps its session')
    assert.equal(t.logs.events('session.signed_out_everywhere')[0]?.sessions, 2)
  })

  test('sign out everywhere without a valid anti-forgery token is rejected and ends nothing', async () => {
    const cookie = await signIn(t.app, standardUser())
    const response = await t.app.inject({ method: 'POST', url: '/Account/LogoutEverywhere', headers: { cookie }, payload: { __RequestVerificationToken: 'forged' } })
    assert.equal(response.statusCode, 400)
    assert.equal(await status(t.app, cookie), 200)
  })

  test('app.session.revokeUser ends the sessions of a user (an account disabled at the IdP)', async () => {
    const subject = claim('application:subject', 'disabled-user')
    const first = await signIn(t.app, [subject])
    const second = await signIn(t.app, [subject])
    const identity = { scheme: 'TestFlow', issuer: 'TestFlow', subject: 'disabled-user' }
    assert.equal(await t.app.session.revokeUser(identity), 2)
    assert.equal(await status(t.app, first), 401)
    assert.equal(await status(t.app, second), 401)
    assert.equal(await t.app.session.revokeUser(identity), 0, 'nothing left to revoke')
  })

  test('the deprecated app.session.revokeSubject takes the identity too, and refuses a bare subject', async () => {
    const cookie = await signIn(t.app, [claim('application:subject', 'deprecated-user')])
    await assert.rejects(t.app.session.revokeSubject('deprecated-user' as never), {
      name: 'TypeError',
      message: 'app.session.revokeSubject and revokeUser take the identity { scheme, issuer, subject } (request.user.identity), not a bare subject: the same subject value may belong to users of different providers.'
    })
    assert.equal(await status(t.app, cookie), 200, 'nothing was ended')
    await assert.rejects(t.app.session.revokeUser({ scheme: 'TestFlow', issuer: '', subject: 'deprecated-user' }), { name: 'TypeError', message: 'app.session.revokeUser: identity.issuer must be a non-empty string.' })
    assert.equal(await t.app.session.revokeSubject({ scheme: 'TestFlow', issuer: 'TestFlow', subject: 'deprecated-user' }), 1)
    assert.equal(await status(t.app, cookie), 401)
  })

  test('signing in again ends the session the browser had (a new session id, the old one refused)', async () => {
    const old = await signIn(t.app, standardUser())
    const response = await t.app.inject({ method: 'POST', url: TEST_SIGN_IN_PATH, payload: { claims: standardUser() }, headers: { cookie: old } })
    const fresh = cookieHeaderFrom(response)
    assert.notEqual(fresh, old)
    assert.equal(await status(t.app, fresh), 200)
    assert.equal(await status(t.app, old), 401)
  })
})
