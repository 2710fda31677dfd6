/**
 * The cookie session as the browser sees it: contract cookie attributes (and the Development-only
 * override), damaged or expired cookies mean anonymous with the cookie cleared (never a 500),
 * chunking of large tickets with 300 group claims, sliding renewal and expiry from the ticket.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { createKeyRing } from '../../src/auth/key-ring.js'
import type { AuthenticationTicket, Claim } from '../../src/auth/principal.js'
import { openTicket, sealTicket } from '../../src/auth/ticket.js'
import { buildTestApp, claim, cookieHeaderFrom, loadTestConfiguration, signIn, standardUser, TEST_SIGN_IN_PATH, type TestApp } from '../helpers/app.js'

const SECURE_NAME = '__Host-ProjectTemplate.Web.Authentication'
const INSECURE_NAME = '.ProjectTemplate.Web.Authentication'
const CLAIMS_PATH = '/test-only/claims'

function setCookies (headers: Record<string, unknown>): string[] {
  const value = headers['set-cookie']
  return value === undefined ? [] : Array.isArray(value) ? value.map(String) : [String(value)]
}

/** Attribute list after the name=value pair, in order, lower-cased names. */
function attributes (setCookie: string): string[] {
  return setCookie.split(';').slice(1).map((part) => part.trim())
}

const withClaimsRoute = (t: { app: TestApp['app'] }): void => {
  t.app.get(CLAIMS_PATH, { config: { authorize: true } }, async (request) => ({ claims: request.user?.claims ?? [] }))
}

async function claimsOf (app: TestApp['app'], cookie: string): Promise<Claim[]> {
  const response = await app.inject({ url: CLAIMS_PATH, headers: { cookie } })
  assert.equal(response.statusCode, 200, 'the session opens')
  return (response.json() as { claims: Claim[] }).claims
}

const now = (): number => Math.floor(Date.now() / 1000)

describe('session cookie attributes', () => {
  test('sign-in sets __Host-ProjectTemplate.Web.Authentication with HttpOnly, Secure, SameSite=Lax, Path=/ and no Domain', async () => {
    const t = await buildTestApp()
    try {
      const response = await t.app.inject({ method: 'POST', url: TEST_SIGN_IN_PATH, payload: { claims: standardUser() } })
      const cookies = setCookies(response.headers)
      assert.equal(cookies.length, 1)
      const [pair = ''] = (cookies[0] ?? '').split(';')
      assert.ok(pair.startsWith(`${SECURE_NAME}=`) && pair.length > SECURE_NAME.length + 20)
      assert.deepEqual(attributes(cookies[0] ?? '').sort(), ['HttpOnly', 'Path=/', 'SameSite=Lax', 'Secure'])
    } finally {
      await t.app.close()
    }
  })

  test('Development without the override keeps the __Host- cookie and Secure', async () => {
    const t = await buildTestApp({ nodeEnv: 'development' })
    try {
      const response = await t.app.inject({ method: 'POST', url: TEST_SIGN_IN_PATH, payload: { claims: standardUser() } })
      const cookie = setCookies(response.headers)[0] ?? ''
      assert.ok(cookie.startsWith(`${SECURE_NAME}=`))
      assert.ok(attributes(cookie).includes('Secure'))
    } finally {
      await t.app.close()
    }
  })

  test('the Development AllowInsecureHttp override uses .ProjectTemplate.Web.Authentication without Secure', async () => {
    const t = await buildTestApp({ nodeEnv: 'development', settings: { Authentication: { Cookie: { AllowInsecureHttp: true } } } })
    try {
      const response = await t.app.inject({ method: 'POST', url: TEST_SIGN_IN_PATH, payload: { claims: standardUser() } })
      const cookie = setCookies(response.headers)[0] ?? ''
      assert.ok(cookie.startsWith(`${INSECURE_NAME}=`), cookie)
      assert.deepEqual(attributes(cookie).sort(), ['HttpOnly', 'Path=/', 'SameSite=Lax'])
      const session = cookieHeaderFrom(response)
      assert.equal((await t.app.inject({ url: '/api/application-information', headers: { cookie: session } })).statusCode, 200)
      // The secure name is not read under the override.
      const renamed = session.replace(INSECURE_NAME, SECURE_NAME)
      assert.equal((await t.app.inject({ url: '/api/application-information', headers: { cookie: renamed } })).statusCode, 401)
    } finally {
      await t.app.close()
    }
  })

  test('the override is rejected at startup outside Development', () => {
    for (const nodeEnv of ['production', 'staging']) {
      const loaded = loadTestConfiguration({ nodeEnv, settings: { Authentication: { Cookie: { AllowInsecureHttp: true } } } })
      assert.equal(loaded.errors.length, 1)
      assert.match(loaded.errors[0]?.message ?? '', /^ProjectTemplate:Authentication:Cookie:AllowInsecureHttp may be true only in Development/)
    }
  })
})

describe('damaged session cookies', () => {
  let t: TestApp
  let valid: string
  before(async () => {
    t = await buildTestApp()
    valid = (await signIn(t.app, standardUser())).split('=').slice(1).join('=')
  })
  after(async () => { await t.app.close() })

  const seal = (ticket: Partial<AuthenticationTicket>, ring = t.keyRing): string => sealTicket({
    sessionId: 's-1', scheme: 'TestFlow', claims: standardUser(), issuedAt: now() - 60, expiresAt: now() + 3600, ...ticket
  }, ring)

  const cases: Array<[string, () => string]> = [
    ['tampered', () => `${valid.slice(0, 20)}${valid[20] === 'A' ? 'B' : 'A'}${valid.slice(21)}`],
    ['truncated', () => valid.slice(0, -5)],
    ['sealed under a foreign key', () => seal({}, createKeyRing([randomBytes(32)]))],
    ['expired by the ticket', () => seal({ issuedAt: now() - 7200, expiresAt: now() - 1 })],
    ['non-canonical base64 (padding appended)', () => `${valid}==`],
    ['not base64 at all', () => '%%%not-a-ticket%%%'],
    ['a chunk header without chunks', () => 'chunks-2']
  ]
  for (const [name, value] of cases) {
    test(`a ${name} cookie is anonymous (302 to login, 401 for the API) and is cleared`, async () => {
      const cookie = `${SECURE_NAME}=${value()}`
      const page = await t.app.inject({ url: '/', headers: { cookie } })
      assert.equal(page.statusCode, 302)
      assert.equal(page.headers.location, '/Account/Login?ReturnUrl=%2F')
      const cleared = setCookies(page.headers).find((header) => header.startsWith(`${SECURE_NAME}=;`))
      assert.ok(cleared !== undefined, `the cookie is cleared: ${JSON.stringify(page.headers['set-cookie'])}`)
      assert.match(cleared, /Max-Age=0/)
      assert.ok(attributes(cleared).includes('Secure') && attributes(cleared).includes('Path=/'), 'deleted with the same attributes, or the browser keeps it')
      const api = await t.app.inject({ url: '/api/application-information', headers: { cookie } })
      assert.equal(api.statusCode, 401)
    })
  }

  test('a valid cookie is not cleared and no cookie is written when nothing changes', async () => {
    const response = await t.app.inject({ url: '/api/application-information', headers: { cookie: `${SECURE_NAME}=${valid}` } })
    assert.equal(response.statusCode, 200)
    assert.deepEqual(setCookies(response.headers), [])
  })

  test('stray chunk cookies without a header are cleared', async () => {
    const response = await t.app.inject({ url: '/api/application-information', headers: { cookie: `${SECURE_NAME}C1=abc; ${SECURE_NAME}C2=def` } })
    assert.equal(response.statusCode, 401)
    const names = setCookies(response.headers).map((header) => header.split('=')[0])
    assert.ok(names.includes(`${SECURE_NAME}C1`) && names.includes(`${SECURE_NAME}C2`))
  })
})

describe('chunked session', () => {
  let t: TestApp
  const groups = Array.from({ length: 300 }, (_, index) => claim('application:group', `group-${String(index).padStart(3, '0')}-${'g'.repeat(12)}`))
  before(async () => { t = await buildTestApp({ configure: (app) => { withClaimsRoute({ app }) } }) })
  after(async () => { await t.app.close() })

  test('a principal with 300 group claims is split into chunk cookies with the same attributes', async () => {
    const response = await t.app.inject({ method: 'POST', url: TEST_SIGN_IN_PATH, payload: { claims: [...standardUser(), ...groups] } })
    const cookies = setCookies(response.headers)
    assert.ok(cookies.length >= 3, `expected a header and at least two chunks, got ${cookies.length}`)
    const main = cookies.find((header) => header.startsWith(`${SECURE_NAME}=`)) ?? ''
    assert.match(main, new RegExp(`^${SECURE_NAME.replace(/[.-]/g, '\\$&')}=chunks-${cookies.length - 1};`))
    for (const header of cookies) {
      assert.ok(header.length < 4096, 'each cookie fits a browser cookie')
      assert.deepEqual(attributes(header).sort(), ['HttpOnly', 'Path=/', 'SameSite=Lax', 'Secure'])
    }
  })

  test('the chunked principal reads back with all 300 groups', async () => {
    const cookie = await signIn(t.app, [...standardUser(), ...groups])
    const claims = await claimsOf(t.app, cookie)
    const readGroups = claims.filter((c) => c.type === 'application:group' && c.value.startsWith('group-')).map((c) => c.value)
    assert.deepEqual(readGroups, groups.map((g) => g.value))
    assert.equal(claims.length, standardUser().length + 300)
  })

  test('a chunked session with one chunk missing is anonymous and every chunk is cleared', async () => {
    const cookie = await signIn(t.app, [...standardUser(), ...groups])
    const damaged = cookie.split('; ').filter((pair) => !pair.startsWith(`${SECURE_NAME}C2=`)).join('; ')
    const response = await t.app.inject({ url: CLAIMS_PATH, headers: { cookie: damaged } })
    assert.equal(response.statusCode, 302)
    const cleared = setCookies(response.headers).filter((header) => /=;/.test(header)).map((header) => header.split('=')[0])
    const present = damaged.split('; ').map((pair) => pair.split('=')[0])
    assert.deepEqual(cleared.sort(), present.sort())
  })

  test('signing in again with a small principal removes the chunks of the earlier large one', async () => {
    const large = await signIn(t.app, [...standardUser(), ...groups])
    const response = await t.app.inject({ method: 'POST', url: TEST_SIGN_IN_PATH, payload: { claims: standardUser() }, headers: { cookie: large } })
    const written = setCookies(response.headers)
    const chunkNames = large.split('; ').map((pair) => pair.split('=')[0]).filter((name) => name !== SECURE_NAME)
    for (const name of chunkNames) assert.ok(written.some((header) => header.startsWith(`${name}=;`)), `${name ?? ''} is deleted`)
    assert.ok(written.some((header) => header.startsWith(`${SECURE_NAME}=`) && !header.startsWith(`${SECURE_NAME}=;`)))
  })
})

describe('lifetime', () => {
  test('expiry is enforced from the ticket even when the browser still sends the cookie', async () => {
    const t = await buildTestApp({ settings: { Authentication: { Cookie: { ExpireMinutes: 10 } } } })
    try {
      const sealed = sealTicket({ sessionId: 's', scheme: 'TestFlow', claims: standardUser(), issuedAt: now() - 700, expiresAt: now() - 100 }, t.keyRing)
      const response = await t.app.inject({ url: '/api/application-information', headers: { cookie: `${SECURE_NAME}=${sealed}` } })
      assert.equal(response.statusCode, 401)
    } finally {
      await t.app.close()
    }
  })

  test('a new ticket expires ExpireMinutes after sign-in', async () => {
    const t = await buildTestApp({ settings: { Authentication: { Cookie: { ExpireMinutes: 10 } } } })
    try {
      const cookie = await signIn(t.app, standardUser())
      const opened = openTicket(cookie.slice(SECURE_NAME.length + 1), t.keyRing, now())
      assert.ok(opened !== undefined)
      assert.equal(opened.expiresAt - opened.issuedAt, 600)
      assert.ok(Math.abs(opened.issuedAt - now()) <= 2)
    } finally {
      await t.app.close()
    }
  })

  for (const sliding of [true, false]) {
    test(`past half its lifetime a ticket is ${sliding ? 'renewed' : 'not renewed'} when SlidingExpiration is ${String(sliding)}`, async () => {
      const t = await buildTestApp({ settings: { Authentication: { Cookie: { ExpireMinutes: 10, SlidingExpiration: sliding } } } })
      try {
        const old = { sessionId: 'sliding-session', scheme: 'TestFlow', claims: standardUser(), issuedAt: now() - 360, expiresAt: now() + 240 }
        const response = await t.app.inject({ url: '/api/application-information', headers: { cookie: `${SECURE_NAME}=${sealTicket(old, t.keyRing)}` } })
        assert.equal(response.statusCode, 200)
        const written = setCookies(response.headers)
        if (!sliding) {
          assert.deepEqual(written, [])
          return
        }
        assert.equal(written.length, 1)
        assert.deepEqual(attributes(written[0] ?? '').sort(), ['HttpOnly', 'Path=/', 'SameSite=Lax', 'Secure'])
        const renewed = openTicket((written[0] ?? '').split(';')[0]?.slice(SECURE_NAME.length + 1) ?? '', t.keyRing, now())
        assert.ok(renewed !== undefined)
        assert.ok(Math.abs(renewed.issuedAt - now()) <= 2)
        assert.equal(renewed.expiresAt - renewed.issuedAt, 600)
        assert.equal(renewed.sessionId, 'sliding-session', 'renewal keeps the session (anti-forgery tokens stay valid)')
        assert.deepEqual(renewed.claims, old.claims)
      } finally {
        await t.app.close()
      }
    })
  }

  test('before half its lifetime a ticket is not rewritten', async () => {
    const t = await buildTestApp({ settings: { Authentication: { Cookie: { ExpireMinutes: 10 } } } })
    try {
      const fresh = sealTicket({ sessionId: 's', scheme: 'TestFlow', claims: standardUser(), issuedAt: now() - 120, expiresAt: now() + 480 }, t.keyRing)
      const response = await t.app.inject({ url: '/api/application-information', headers: { cookie: `${SECURE_NAME}=${fresh}` } })
      assert.equal(response.statusCode, 200)
      assert.deepEqual(setCookies(response.headers), [])
    } finally {
      await t.app.close()
    }
  })
})
