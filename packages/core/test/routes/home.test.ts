/**
 * The starter page (name, claims, logout form with an anti-forgery token) and the terminal error
 * page /Home/Error/{statusCode?}: status handling, the request id that matches the log line, and
 * no exception detail outside Development.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildForSuite, build, buildTestApp, claim, cookieHeaderFrom, signIn, standardUser, type TestApp } from '../helpers/app.js'
import { registerTestProvider, TEST_PROVIDER, TEST_PROVIDER_CALLBACK } from '../helpers/test-provider.js'

const PLANTED_EXCEPTION = 'PLANTED-EXCEPTION-5b7e connection string Password=hunter2'

function addThrowingRoutes (app: TestApp['app']): void {
  app.get('/boom', { config: { allowAnonymous: true } }, async () => { throw new Error(PLANTED_EXCEPTION) })
  app.get('/conflict', { config: { allowAnonymous: true } }, async () => { throw Object.assign(new Error('PLANTED-CONFLICT-DETAIL'), { statusCode: 409 }) })
}

describe('starter page', () => {
  const t = buildForSuite()

  test('shows the signed-in name, the normalized claims and a logout form carrying the anti-forgery token', async () => {
    const cookie = await signIn(t.app, standardUser())
    const response = await t.app.inject({ url: '/', headers: { cookie } })
    assert.equal(response.statusCode, 200)
    assert.match(response.body, /<h1>Welcome, <span id="user-name">Ada Lovelace<\/span><\/h1>/)
    for (const c of standardUser()) assert.ok(response.body.includes(`<tr><td>${c.type}</td><td>${c.value}</td><td>${c.issuer}</td></tr>`), c.type)
    assert.match(response.body, /<form method="post" action="\/Account\/Logout">\n<input type="hidden" name="__RequestVerificationToken" value="[A-Za-z0-9_-]{8}\.[A-Za-z0-9_-]{12}\.[A-Za-z0-9_-]{43}">/)
    assert.match(response.body, /<button type="submit" id="logout">Sign out<\/button>/)
  })

  test('claim values are HTML-escaped', async () => {
    const cookie = await signIn(t.app, [claim('application:name', '<img src=x onerror=alert(1)>')])
    const response = await t.app.inject({ url: '/', headers: { cookie } })
    assert.ok(!response.body.includes('<img src=x'))
    assert.ok(response.body.includes('&lt;img src=x onerror=alert(1)&gt;'))
  })

  test('is authenticated by the fallback policy', async () => {
    const response = await t.app.inject({ url: '/' })
    assert.equal(response.statusCode, 302)
  })
})

describe('starter page: provider name and the public posture', () => {
  test('names the provider by its display name, not its scheme', async (context) => {
    const t = await build(context, { configure: (app) => { registerTestProvider(app) } })
    const challenge = await t.app.inject({ url: `/External/Challenge?provider=${TEST_PROVIDER}` })
    const state = new URL(String(challenge.headers.location)).searchParams.get('state') ?? ''
    const callback = await t.app.inject({ url: `${TEST_PROVIDER_CALLBACK}?state=${state}`, headers: { cookie: cookieHeaderFrom(challenge) } })
    const home = await t.app.inject({ url: '/', headers: { cookie: cookieHeaderFrom(callback) } })
    assert.equal(home.statusCode, 200)
    assert.match(home.body, /<p id="signed-in-with">Signed in with Test IdP TestIdP\.<\/p>/)
  })

  test('with authentication off (--authProvider none) the page is public and coherent: no user, no claims table, no sign-out', async (context) => {
    const t = await build(context, {
      settings: { Authentication: { Enabled: false, Cookie: { Enabled: false } }, Authorization: { RequireAuthenticatedUserByDefault: false } }
    })
    const response = await t.app.inject({ url: '/' })
    assert.equal(response.statusCode, 200)
    assert.match(response.body, /<p id="public-notice">This page is public: application authentication is off/)
    for (const absent of ['Signed in', 'guest', '<table', 'Your claims', 'Sign out', '/Account/Logout', 'class="user"']) {
      assert.ok(!response.body.includes(absent), absent)
    }
  })
})

describe('/Home/Error/{statusCode?}', () => {
  const t = buildForSuite({ configure: addThrowingRoutes })

  const statuses: Array<[string, number]> = [
    ['/Home/Error', 500],
    ['/Home/Error/', 500],
    ['/Home/Error/404', 404],
    ['/Home/Error/403', 403],
    ['/Home/Error/599', 599],
    ['/Home/Error/abc', 400],
    ['/Home/Error/200', 400],
    ['/Home/Error/302', 400],
    ['/Home/Error/600', 400],
    ['/Home/Error/0404', 400],
    ['/Home/Error/-404', 400],
    ['/Home/Error/99999999999999999999', 400]
  ]
  for (const [url, status] of statuses) {
    test(`${url} answers ${status} anonymously without a redirect`, async () => {
      const response = await t.app.inject({ url, headers: { accept: 'text/html' } })
      assert.equal(response.statusCode, status)
      assert.equal(response.headers.location, undefined)
      assert.equal(response.headers['content-type'], 'text/html; charset=utf-8')
      assert.ok(response.body.includes(`<h1>${status} `))
    })
  }

  test('the request id on the page equals the reqId of the request log line', async () => {
    const response = await t.app.inject({ url: '/Home/Error/410' })
    const shown = /<code id="request-id">([^<]+)<\/code>/.exec(response.body)?.[1]
    assert.ok(shown !== undefined)
    assert.match(shown, /^[0-9a-f-]{36}$/)
    const lines = t.logs.events('request.completed').filter((record) => record.path === '/Home/Error/410')
    assert.equal(lines.length, 1)
    assert.equal(lines[0]?.reqId, shown)
  })

  test('an unhandled error renders the error page with a generic text: no message, no stack', async () => {
    const response = await t.app.inject({ url: '/boom', headers: { accept: 'text/html' } })
    assert.equal(response.statusCode, 500)
    assert.match(response.body, /<h1>500 Internal server error<\/h1>/)
    assert.ok(!response.body.includes('PLANTED-EXCEPTION'))
    assert.ok(!response.body.includes('hunter2'))
    assert.doesNotMatch(response.body, /\bat .*\.ts:\d+/)
    const failed = t.logs.events('request.failed')
    assert.equal(failed.length, 1, 'the log keeps the detail for operators')
  })

  test('an unhandled error for a JSON caller is a generic 500 problem', async () => {
    const response = await t.app.inject({ url: '/boom', headers: { accept: 'application/json' } })
    assert.equal(response.statusCode, 500)
    assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8')
    const body = response.json() as Record<string, unknown>
    assert.equal(body.code, 'APP_ERR_INTERNAL')
    assert.equal(body.detail, undefined)
    assert.ok(!response.body.includes('PLANTED-EXCEPTION'))
  })

  test('an error carrying a 4xx status renders through the error page with that status and no detail', async () => {
    const response = await t.app.inject({ url: '/conflict', headers: { accept: 'text/html' } })
    assert.equal(response.statusCode, 409)
    assert.match(response.body, /<h1>409 Conflict<\/h1>/)
    assert.ok(!response.body.includes('PLANTED-CONFLICT-DETAIL'))
  })
})

describe('/Home/Error in Development', () => {
  test('shows the exception detail to the developer', async (context) => {
    const t = await build(context, { nodeEnv: 'development', configure: addThrowingRoutes })
    const response = await t.app.inject({ url: '/boom', headers: { accept: 'text/html' } })
    assert.equal(response.statusCode, 500)
    assert.ok(response.body.includes('PLANTED-EXCEPTION-5b7e'))
  })
})

describe('bare error responses', () => {
  let t: TestApp
  before(async () => {
    t = await buildTestApp({
      configure: (app) => {
        app.get('/bare/:status', { config: { allowAnonymous: true } }, async (request, reply) => reply.code(Number((request.params as { status: string }).status)).send())
      }
    })
  })
  after(async () => { await t.app.close() })

  for (const status of [400, 404, 418, 503]) {
    test(`a bare ${status} renders through the error page for a browser and as problem+json for JSON`, async () => {
      const page = await t.app.inject({ url: `/bare/${status}`, headers: { accept: 'text/html' } })
      assert.equal(page.statusCode, status)
      assert.equal(page.headers['content-type'], 'text/html; charset=utf-8')
      assert.match(page.body, new RegExp(`<h1>${status} `))
      assert.match(page.body, /<code id="request-id">[0-9a-f-]{36}<\/code>/)
      const problem = await t.app.inject({ url: `/bare/${status}`, headers: { accept: 'application/json' } })
      assert.equal(problem.statusCode, status)
      assert.equal(problem.headers['content-type'], 'application/problem+json; charset=utf-8')
      assert.equal((problem.json() as Record<string, unknown>).status, status)
    })
  }

  test('a bare success stays empty', async () => {
    const response = await t.app.inject({ url: '/bare/204' })
    assert.equal(response.statusCode, 204)
    assert.equal(response.body, '')
  })
})
