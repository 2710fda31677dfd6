/**
 * The starter page `/`: protected by the fallback policy (it declares nothing), it shows the
 * signed-in user, their claims (escaped) and the two sign-out forms carrying the anti-forgery
 * token; with authentication off (`--authProvider none`) it is public and says so.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { claim, signIn } from '@project-template/core/testing'
import { build, PRINCIPALS } from '../helpers/app.js'

test('an anonymous browser is sent to the login page with the return URL', async (context) => {
  const { app } = await build(context)
  const response = await app.inject({ url: '/', headers: { accept: 'text/html' } })
  assert.equal(response.statusCode, 302)
  assert.equal(response.headers.location, '/Account/Login?ReturnUrl=%2F')
})

test('a signed-in user sees their name, claims, and both sign-out forms with the anti-forgery token', async (context) => {
  const { app } = await build(context)
  const cookie = await signIn(app, PRINCIPALS.reader())
  const response = await app.inject({ url: '/', headers: { cookie } })
  assert.equal(response.statusCode, 200)
  assert.equal(response.headers['content-type'], 'text/html; charset=utf-8')
  assert.match(response.body, /<title>Home - ProjectTemplate<\/title>/)
  assert.match(response.body, /<h1>Welcome, <span id="user-name">Ada Lovelace<\/span><\/h1>/)
  assert.match(response.body, /<p id="signed-in-with">Signed in with TestFlow\.<\/p>/)
  assert.match(response.body, /<td>application:email<\/td><td>ada@example\.test<\/td><td>TestFlow<\/td>/)
  for (const action of ['/Account/Logout', '/Account/LogoutEverywhere']) {
    assert.match(response.body, new RegExp(`<form method="post" action="${action}">\\n<input type="hidden" name="__RequestVerificationToken" value="[^"]{20,}">`))
  }
})

test('claim values are HTML-escaped', async (context) => {
  const { app } = await build(context)
  const cookie = await signIn(app, [...PRINCIPALS.reader(), claim('application:group', '<script>alert(1)</script>')])
  const response = await app.inject({ url: '/', headers: { cookie } })
  assert.equal(response.statusCode, 200)
  assert.ok(!response.body.includes('<script>alert(1)</script>'))
  assert.match(response.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/)
})

test('signing out with the page\'s token ends the session: / then redirects to the login page', async (context) => {
  const { app } = await build(context)
  const cookie = await signIn(app, PRINCIPALS.reader())
  const page = await app.inject({ url: '/', headers: { cookie } })
  const token = /name="__RequestVerificationToken" value="([^"]+)"/.exec(page.body)?.[1]
  assert.ok(token !== undefined)
  const antiforgery = page.cookies.filter((c) => c.value !== '').map((c) => `${c.name}=${c.value}`).join('; ')
  const both = antiforgery === '' ? cookie : `${cookie}; ${antiforgery}`
  const logout = await app.inject({ method: 'POST', url: '/Account/Logout', headers: { cookie: both }, payload: { __RequestVerificationToken: token } })
  assert.equal(logout.statusCode, 302)
  assert.equal(logout.headers.location, '/')
  const after = await app.inject({ url: '/', headers: { cookie, accept: 'text/html' } })
  assert.equal(after.statusCode, 302)
})

test('with authentication off (--authProvider none) the page is public: no user, no claims, no sign-out', async (context) => {
  const { app } = await build(context, {
    settings: { Authentication: { Enabled: false, Cookie: { Enabled: false } }, Authorization: { RequireAuthenticatedUserByDefault: false } },
    testSignIn: false
  })
  const response = await app.inject({ url: '/' })
  assert.equal(response.statusCode, 200)
  assert.match(response.body, /<p id="public-notice">/)
  assert.ok(!response.body.includes('/Account/Logout'))
  assert.ok(!response.body.includes('<table class="claims">'))
})
