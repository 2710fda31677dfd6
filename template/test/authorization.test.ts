/**
 * The app's routes under the core's authorization: the anonymous inventory (every route a caller
 * may reach without signing in) is pinned here, so a new public route is a visible change; every
 * other route of the app, and any URL that matches no route, requires a signed-in user.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { signIn } from '@project-template/core/testing'
import { build, PRINCIPALS } from './helpers/app.js'

/** The reviewed public surface: the contract's anonymous endpoints and the provider callbacks of enabled providers (none here). */
const ANONYMOUS_ROUTES = [
  'GET /Account/AccessDenied',
  'GET /Account/Login',
  'GET /External/Challenge',
  'GET /Home/Error/:statusCode?',
  'GET /health',
  'GET /health/live',
  'GET /health/ready'
]

/** The app's own routes: none is anonymous, so the fallback (or a named policy) covers each. */
const APP_ROUTES = ['/', '/api/application-information', '/api/v1/application-information', '/api/application-information/administration', '/api/application-information/management']

test('the anonymous inventory is exactly the contract\'s anonymous endpoints', async (context) => {
  const { app } = await build(context, { testSignIn: false })
  assert.deepEqual(app.authorization.anonymousRoutes(), ANONYMOUS_ROUTES)
})

test('every route of the app challenges an anonymous caller: a browser goes to the login page, JSON gets 401', async (context) => {
  const { app } = await build(context, { testSignIn: false })
  for (const url of APP_ROUTES) {
    const json = await app.inject({ url, headers: { accept: 'application/json' } })
    assert.equal(json.statusCode, 401, url)
    if (!url.startsWith('/api/')) {
      const page = await app.inject({ url, headers: { accept: 'text/html' } })
      assert.equal(page.statusCode, 302, url)
      assert.match(String(page.headers.location), /^\/Account\/Login\?ReturnUrl=/)
    }
  }
})

test('an unknown URL is challenged like a protected one for an anonymous caller, and is 404 once signed in', async (context) => {
  const { app } = await build(context)
  const anonymous = await app.inject({ url: '/no-such-page', headers: { accept: 'application/json' } })
  assert.equal(anonymous.statusCode, 401)
  const cookie = await signIn(app, PRINCIPALS.reader())
  const signedIn = await app.inject({ url: '/no-such-page', headers: { accept: 'application/json', cookie } })
  assert.equal(signedIn.statusCode, 404)
  assert.equal((signedIn.json() as { code?: string }).code, 'APP_ERR_NOT_FOUND')
})

test('with the fallback off (--authProvider none), the app\'s unannotated routes are public and its named policies still apply', async (context) => {
  const { app } = await build(context, {
    settings: { Authentication: { Enabled: false, Cookie: { Enabled: false } }, Authorization: { RequireAuthenticatedUserByDefault: false } },
    testSignIn: false
  })
  assert.equal((await app.inject({ url: '/api/application-information' })).statusCode, 200)
  assert.equal((await app.inject({ url: '/api/application-information/administration' })).statusCode, 401)
  assert.ok(app.authorization.anonymousRoutes().includes('GET /'))
})
