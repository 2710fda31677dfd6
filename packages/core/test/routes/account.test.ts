/**
 * /Account: the login page (no provider: a plain statement and no sign-in action; a non-local
 * ReturnUrl is 400), logout (authenticated + anti-forgery from the form field or header, never the
 * query string; failure leaves the session intact; success deletes the cookie and every chunk and
 * redirects to a local returnUrl or /).
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { LightMyRequestResponse } from 'fastify'
import { buildForSuite, antiforgeryFor, claim, signIn, standardUser, storedSession, type TestApp } from '../helpers/app.js'
import { setCookieLines } from '../helpers/cookies.js'

const SESSION = '__Host-ProjectTemplate.Web.Authentication'
const NO_PROVIDER = 'No sign-in provider is configured for this application.'

/** Signs in and opens the starter page: the session cookies plus the anti-forgery cookie and token. */
async function startSession (app: TestApp['app'], claims = standardUser()): Promise<{ cookie: string, token: string, session: string }> {
  const session = await signIn(app, claims)
  const { cookie, token } = await antiforgeryFor(app, session)
  assert.ok(token.length > 20, 'the starter page carries a token')
  return { cookie, token, session }
}

const form = (fields: Record<string, string>): { payload: string, headers: Record<string, string> } => ({
  payload: new URLSearchParams(fields).toString(),
  headers: { 'content-type': 'application/x-www-form-urlencoded' }
})

describe('login page without providers', () => {
  const t = buildForSuite()

  test('states that no sign-in provider is configured and offers no form, password field or sign-in link', async () => {
    const response = await t.app.inject({ url: '/Account/Login?ReturnUrl=%2Forders' })
    assert.equal(response.statusCode, 200)
    assert.equal(response.headers['content-type'], 'text/html; charset=utf-8')
    assert.ok(response.body.includes(`<p id="no-provider">${NO_PROVIDER}</p>`))
    assert.ok(!response.body.includes('docs/'), 'the end-user page points visitors at operator documentation')
    assert.doesNotMatch(response.body, /<form/i)
    assert.doesNotMatch(response.body, /<input/i)
    assert.doesNotMatch(response.body, /password/i)
    assert.doesNotMatch(response.body, /External\/Challenge/)
  })

  test('is anonymous: no session needed and none created', async () => {
    const response = await t.app.inject({ url: '/Account/Login' })
    assert.equal(response.statusCode, 200)
    assert.deepEqual(setCookieLines(response.headers), [])
  })

  const hostile = ['https://evil.example/', '//evil.example', '/\\evil.example', 'javascript:alert(1)', '/a b']
  for (const value of hostile) {
    test(`ReturnUrl ${JSON.stringify(value)} is 400 with no redirect`, async () => {
      const response = await t.app.inject({ url: `/Account/Login?ReturnUrl=${encodeURIComponent(value)}`, headers: { accept: 'text/html' } })
      assert.equal(response.statusCode, 400)
      assert.equal(response.headers.location, undefined)
      assert.match(response.body, /<h1>400 Return URL is not local<\/h1>/)
      assert.ok(!response.body.includes('evil.example'), 'the value is not echoed')
    })
  }

  test('a repeated ReturnUrl is 400', async () => {
    const response = await t.app.inject({ url: '/Account/Login?ReturnUrl=%2Fa&returnurl=%2Fb' })
    assert.equal(response.statusCode, 400)
  })

  test('a failure class shows its fixed message and unknown classes the generic one, never echoing the value', async () => {
    const cancelled = await t.app.inject({ url: '/Account/Login?failure=cancelled' })
    assert.match(cancelled.body, /<p class="alert" role="alert">Sign-in was cancelled\.<\/p>/)
    const injected = await t.app.inject({ url: `/Account/Login?failure=${encodeURIComponent('<script>x</script>')}` })
    assert.match(injected.body, /Sign-in failed\. Please try again or contact your administrator\./)
    assert.ok(!injected.body.includes('<script>'))
  })
})

describe('logout', () => {
  const t = buildForSuite()

  async function assertSessionIntact (session: string): Promise<void> {
    assert.equal((await t.app.inject({ url: '/api/application-information', headers: { cookie: session } })).statusCode, 200)
  }

  function assertNoSessionChange (response: LightMyRequestResponse): void {
    assert.ok(!setCookieLines(response.headers).some((header) => header.startsWith(SESSION)), 'the session cookie is untouched')
  }

  test('the anti-forgery cookie is __Host-, HttpOnly, Secure, SameSite=Strict and Path=/', async () => {
    const session = await signIn(t.app, standardUser())
    const page = await t.app.inject({ url: '/', headers: { cookie: session } })
    const antiforgery = setCookieLines(page.headers).filter((header) => header.startsWith('__Host-ProjectTemplate.Antiforgery='))
    assert.equal(antiforgery.length, 1)
    assert.deepEqual((antiforgery[0] ?? '').split(';').slice(1).map((part) => part.trim()).sort(), ['HttpOnly', 'Path=/', 'SameSite=Strict', 'Secure'])
  })

  test('anonymous logout is challenged, not performed', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/Account/Logout', ...form({}) })
    assert.equal(response.statusCode, 302)
    assert.equal(response.headers.location, '/Account/Login')
  })

  const failures: Array<[string, (s: { cookie: string, token: string }, other: { cookie: string, token: string }) => { url?: string, payload: string, headers: Record<string, string> }]> = [
    ['a missing token', (s) => ({ ...form({}), headers: { ...form({}).headers, cookie: s.cookie } })],
    ['a wrong token', (s) => ({ ...form({ __RequestVerificationToken: `${s.token.slice(0, -4)}AAAA` }), headers: { ...form({}).headers, cookie: s.cookie } })],
    ['an empty token', (s) => ({ ...form({ __RequestVerificationToken: '' }), headers: { ...form({}).headers, cookie: s.cookie } })],
    ["another session's token", (s, other) => ({ ...form({ __RequestVerificationToken: other.token }), headers: { ...form({}).headers, cookie: s.cookie } })],
    ["another session's token and anti-forgery cookie", (s, other) => {
      const antiforgery = other.cookie.split('; ').filter((pair) => !pair.startsWith(SESSION)).join('; ')
      const session = s.cookie.split('; ').filter((pair) => pair.startsWith(SESSION)).join('; ')
      return { ...form({ __RequestVerificationToken: other.token }), headers: { ...form({}).headers, cookie: `${session}; ${antiforgery}` } }
    }],
    ['the token only in the query string', (s) => ({ url: `/Account/Logout?__RequestVerificationToken=${encodeURIComponent(s.token)}`, ...form({}), headers: { ...form({}).headers, cookie: s.cookie } })],
    ['the token without the anti-forgery cookie', (s) => ({ ...form({ __RequestVerificationToken: s.token }), headers: { ...form({}).headers, cookie: s.cookie.split('; ').filter((pair) => pair.startsWith(SESSION)).join('; ') } })]
  ]
  for (const [name, build] of failures) {
    test(`${name} is rejected with 400 and the session stays intact`, async () => {
      const mine = await startSession(t.app)
      const other = await startSession(t.app, [claim('application:subject', 'user-2')])
      const request = build(mine, other)
      const response = await t.app.inject({ method: 'POST', url: request.url ?? '/Account/Logout', payload: request.payload, headers: { ...request.headers, accept: 'text/html' } })
      assert.equal(response.statusCode, 400)
      assert.equal(response.headers.location, undefined)
      assert.match(response.body, /<h1>400 Anti-forgery validation failed<\/h1>/)
      assertNoSessionChange(response)
      await assertSessionIntact(mine.session)
      assert.ok(t.logs.events('antiforgery.rejected').length > 0)
    })
  }

  test('a valid form token signs out: the cookie is deleted and the browser goes to /', async () => {
    const s = await startSession(t.app)
    const response = await t.app.inject({ method: 'POST', url: '/Account/Logout', payload: form({ __RequestVerificationToken: s.token }).payload, headers: { ...form({}).headers, cookie: s.cookie } })
    assert.equal(response.statusCode, 302)
    assert.equal(response.headers.location, '/')
    const deleted = setCookieLines(response.headers).find((header) => header.startsWith(`${SESSION}=;`))
    assert.ok(deleted !== undefined)
    assert.match(deleted, /Max-Age=0/)
    assert.match(deleted, /Path=\//)
    assert.match(deleted, /Secure/)
  })

  test('the RequestVerificationToken header is accepted and a local returnUrl is followed', async () => {
    const s = await startSession(t.app)
    const response = await t.app.inject({
      method: 'POST',
      url: '/Account/Logout',
      ...form({ returnUrl: '/Account/Login?signedOut=1' }),
      headers: { ...form({}).headers, cookie: s.cookie, requestverificationtoken: s.token }
    })
    assert.equal(response.statusCode, 302)
    assert.equal(response.headers.location, '/Account/Login?signedOut=1')
  })

  test('a non-local returnUrl is 400 and the session stays intact', async () => {
    const s = await startSession(t.app)
    const response = await t.app.inject({
      method: 'POST',
      url: '/Account/Logout',
      ...form({ __RequestVerificationToken: s.token, returnUrl: 'https://evil.example/' }),
      headers: { ...form({}).headers, cookie: s.cookie }
    })
    assert.equal(response.statusCode, 400)
    assert.equal(response.headers.location, undefined)
    assertNoSessionChange(response)
    await assertSessionIntact(s.session)
  })

  test('logout of a 300-group session deletes the one session cookie and the stored session', async () => {
    const groups = Array.from({ length: 300 }, (_, index) => claim('application:group', `group-${index}-${'g'.repeat(12)}`))
    const s = await startSession(t.app, [...standardUser(), ...groups])
    assert.ok(await storedSession(t.app, t.keyRing, s.session) !== undefined)
    const response = await t.app.inject({ method: 'POST', url: '/Account/Logout', ...form({ __RequestVerificationToken: s.token }), headers: { ...form({}).headers, cookie: s.cookie } })
    assert.equal(response.statusCode, 302)
    const deleted = setCookieLines(response.headers).filter((header) => /^[^=]+=;/.test(header) && /Max-Age=0/.test(header)).map((header) => header.split('=')[0])
    assert.deepEqual(deleted.filter((name) => name?.startsWith(SESSION)), [SESSION])
    assert.equal(await storedSession(t.app, t.keyRing, s.session), undefined)
  })
})
