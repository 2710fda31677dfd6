/**
 * The core's pages as this app shows them: branded with the app's name (titles and header), the
 * login page stating that no provider is configured, the access-denied page (403, no redirect),
 * and the terminal error page with no internals.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { signIn } from '@project-template/core/testing'
import { build, PRINCIPALS } from './helpers/app.js'

test('the login page carries the app\'s name and says that no sign-in provider is configured', async (context) => {
  const { app } = await build(context)
  const response = await app.inject({ url: '/Account/Login' })
  assert.equal(response.statusCode, 200)
  assert.match(response.body, /<title>Sign in - ProjectTemplate<\/title>/)
  assert.match(response.body, /<header><a class="brand" href="\/">ProjectTemplate<\/a>/)
  assert.match(response.body, /<p id="no-provider">No sign-in provider is configured for this application\.<\/p>/)
  assert.ok(!/<form/.test(response.body), 'no credential form')
})

test('the access-denied page answers 403 with the signed-in name, without redirecting', async (context) => {
  const { app } = await build(context)
  const cookie = await signIn(app, PRINCIPALS.reader())
  const response = await app.inject({ url: '/Account/AccessDenied', headers: { cookie } })
  assert.equal(response.statusCode, 403)
  assert.match(response.body, /<title>Access denied - ProjectTemplate<\/title>/)
  assert.match(response.body, /Signed in as Ada Lovelace/)
})

test('the error page renders the status and the request id, anonymously', async (context) => {
  const { app } = await build(context)
  const response = await app.inject({ url: '/Home/Error/404' })
  assert.equal(response.statusCode, 404)
  assert.match(response.body, /<h1>404 Not Found<\/h1>/)
  assert.match(response.body, /<code id="request-id">[0-9a-f-]{36}<\/code>/)
})

test('static files are served before routing, without a session', async (context) => {
  const { app } = await build(context, { testSignIn: false })
  const response = await app.inject({ url: '/css/site.css' })
  assert.equal(response.statusCode, 200)
  assert.match(String(response.headers['content-type']), /^text\/css/)
})
