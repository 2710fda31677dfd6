/**
 * Cross-site request forgery: logout without a token, with another session's token, with the token
 * only in the query string, or after the cookies changed is refused with 400 and the session
 * stays; provider callbacks refuse a flow whose correlation cookie is missing or belongs to
 * another flow or provider (login CSRF).
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { antiforgeryFor, buildTestApp, cookieHeaderFrom, signIn, standardUser, claim, type TestApp } from '../helpers/app.js'
import { registerTestProvider, TEST_PROVIDER, TEST_PROVIDER_CALLBACK } from '../helpers/test-provider.js'

const OTHER = 'OtherIdP'
const OTHER_CALLBACK = '/signin-otheridp'

interface Session { cookie: string, token: string }

describe('anti-forgery on logout', () => {
  let t: TestApp
  before(async () => {
    t = await buildTestApp({ configure: (app) => { registerTestProvider(app); registerTestProvider(app, OTHER, OTHER_CALLBACK) } })
  })
  after(async () => { await t.app.close() })

  async function session (subject = 'user-1'): Promise<Session> {
    return await antiforgeryFor(t.app, await signIn(t.app, [claim('application:subject', subject), ...standardUser().slice(1)]))
  }

  async function assertIntact (cookie: string): Promise<void> {
    assert.equal((await t.app.inject({ url: '/api/application-information', headers: { cookie } })).statusCode, 200, 'session intact')
  }

  async function logout (cookie: string, payload: Record<string, string>, url = '/Account/Logout', headers: Record<string, string> = {}) {
    return await t.app.inject({ method: 'POST', url, headers: { cookie, ...headers }, payload })
  }

  const refused = async (label: string, response: Awaited<ReturnType<typeof logout>>, cookie: string): Promise<void> => {
    assert.equal(response.statusCode, 400, label)
    assert.equal(response.headers.location, undefined, label)
    assert.ok(!response.cookies.some((c) => c.name.includes('Web.Authentication')), `${label}: no session cookie change`)
    await assertIntact(cookie)
  }

  test('no token is refused with 400', async () => {
    const a = await session()
    await refused('no token', await logout(a.cookie, {}), a.cookie)
  })

  test('a token from another session is refused with 400', async () => {
    const a = await session('user-a')
    const b = await session('user-b')
    await refused('foreign token', await logout(a.cookie, { __RequestVerificationToken: b.token }), a.cookie)
    // Also with the other session's anti-forgery cookie paired with its token, but our session cookie.
    const mixed = `${a.cookie.split('; ')[0] ?? ''}; ${b.cookie.split('; ').slice(1).join('; ')}`
    await refused('foreign token and secret', await logout(mixed, { __RequestVerificationToken: b.token }), a.cookie)
  })

  test('a token only in the query string is refused with 400', async () => {
    const a = await session()
    await refused('query token', await logout(a.cookie, {}, `/Account/Logout?__RequestVerificationToken=${encodeURIComponent(a.token)}`), a.cookie)
  })

  test('a token issued before the session changed is refused with 400', async () => {
    const a = await session()
    const renewedSession = await signIn(t.app, standardUser())
    const antiforgery = a.cookie.split('; ').filter((part) => part.includes('Antiforgery')).join('; ')
    const cookie = `${renewedSession}; ${antiforgery}`
    await refused('stale token', await logout(cookie, { __RequestVerificationToken: a.token }), cookie)
  })

  test('a token issued before the anti-forgery cookie changed is refused with 400', async () => {
    const a = await session()
    const b = await session()
    const otherSecret = b.cookie.split('; ').filter((part) => part.includes('Antiforgery')).join('; ')
    const cookie = `${a.cookie.split('; ').filter((part) => !part.includes('Antiforgery')).join('; ')}; ${otherSecret}`
    await refused('changed secret', await logout(cookie, { __RequestVerificationToken: a.token }), cookie)
  })

  test('the header form of a valid token signs out (the checks above can pass)', async () => {
    const a = await session()
    const response = await logout(a.cookie, {}, '/Account/Logout', { requestverificationtoken: a.token })
    assert.equal(response.statusCode, 302)
    assert.equal(response.headers.location, '/')
  })

  describe('login CSRF at provider callbacks', () => {
    async function startFlow (scheme = TEST_PROVIDER) {
      const response = await t.app.inject({ url: '/External/Challenge', query: { provider: scheme, returnUrl: '/orders' } })
      assert.equal(response.statusCode, 302)
      return { state: new URL(String(response.headers.location)).searchParams.get('state') ?? '', cookie: cookieHeaderFrom(response) }
    }
    const noSession = (response: { cookies: Array<{ name: string, value: string }> }): boolean =>
      !response.cookies.some((c) => c.name.includes('Web.Authentication') && c.value !== '')

    test('a callback without the correlation cookie is refused', async () => {
      const flow = await startFlow()
      const response = await t.app.inject({ url: TEST_PROVIDER_CALLBACK, query: { state: flow.state } })
      assert.equal(response.statusCode, 302)
      assert.equal(response.headers.location, '/Account/Login?failure=correlation')
      assert.ok(noSession(response))
    })

    test('a callback carrying another flow\'s correlation cookie is refused', async () => {
      const attacker = await startFlow()
      const victim = await startFlow()
      const response = await t.app.inject({ url: TEST_PROVIDER_CALLBACK, query: { state: attacker.state }, headers: { cookie: victim.cookie } })
      assert.equal(response.headers.location, '/Account/Login?failure=correlation')
      assert.ok(noSession(response))
    })

    test('a flow started for one provider is refused at another provider\'s callback', async () => {
      const flow = await startFlow(TEST_PROVIDER)
      const response = await t.app.inject({ url: OTHER_CALLBACK, query: { state: flow.state }, headers: { cookie: flow.cookie } })
      assert.equal(response.headers.location, '/Account/Login?failure=correlation')
      assert.ok(noSession(response))
    })

    test('a correlation cookie moved into another flow\'s slot is refused', async () => {
      const a = await startFlow()
      const b = await startFlow()
      const value = a.cookie.split('=').slice(1).join('=')
      const renamed = `${b.cookie.split('=')[0]}=${value}`
      const response = await t.app.inject({ url: TEST_PROVIDER_CALLBACK, query: { state: b.state }, headers: { cookie: renamed } })
      assert.equal(response.headers.location, '/Account/Login?failure=correlation')
      assert.ok(noSession(response))
    })

    test('the matching flow signs in once, and its correlation cookie is deleted', async () => {
      const flow = await startFlow()
      const response = await t.app.inject({ url: TEST_PROVIDER_CALLBACK, query: { state: flow.state }, headers: { cookie: flow.cookie } })
      assert.equal(response.headers.location, '/orders')
      assert.ok(!noSession(response))
      const deleted = response.cookies.find((c) => c.name.startsWith('__Host-ProjectTemplate.Correlation.'))
      assert.equal(deleted?.value, '')
    })
  })
})
