/**
 * Challenge and forbid by content negotiation: anonymous HTML callers are redirected to the login
 * page with the encoded return URL, JSON callers get 401 problem+json; forbidden HTML callers go to
 * AccessDenied (which answers 403 and never redirects), JSON callers get 403 problem+json; routes
 * that do not exist look like protected ones to anonymous callers while the fallback is on.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { ApplicationAuthorizationPolicyNames } from '../../src/authorization/policies.js'
import { build, buildTestApp, signIn, standardUser, type TestApp } from '../helpers/app.js'

const PROBLEM = 'application/problem+json; charset=utf-8'

describe('challenge and forbid', () => {
  let t: TestApp
  let reader: string
  before(async () => {
    t = await buildTestApp({
      configure: (app) => {
        app.get('/reports', async () => 'reports')
        app.get('/reports/admin', { config: { authorize: ApplicationAuthorizationPolicyNames.AdministratorRole } }, async () => 'admin')
        app.post('/reports', async () => 'posted')
      }
    })
    reader = await signIn(t.app, standardUser())
  })
  after(async () => { await t.app.close() })

  const redirects: Array<[string, string]> = [
    ['/reports', '/Account/Login?ReturnUrl=%2Freports'],
    ['/reports?year=2026&q=a%20b', '/Account/Login?ReturnUrl=%2Freports%3Fyear%3D2026%26q%3Da%2520b'],
    ['/', '/Account/Login?ReturnUrl=%2F']
  ]
  for (const [url, location] of redirects) {
    test(`an anonymous HTML request to ${url} is redirected to ${location}`, async () => {
      const response = await t.app.inject({ url, headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } })
      assert.equal(response.statusCode, 302)
      assert.equal(response.headers.location, location)
    })
  }

  const unsafeReturn: Array<[string, string]> = [
    ['//evil.example/x', 'a protocol-relative request target'],
    ['/%2F%2Fevil.example', 'an encoded double slash']
  ]
  for (const [url, name] of unsafeReturn) {
    test(`an anonymous request with ${name} is challenged without carrying it as the return URL`, async () => {
      const response = await t.app.inject({ url, headers: { accept: 'text/html' } })
      assert.equal(response.statusCode, 302)
      assert.equal(response.headers.location, '/Account/Login')
    })
  }

  test('an anonymous HEAD request is challenged like GET', async () => {
    const response = await t.app.inject({ method: 'HEAD', url: '/reports' })
    assert.equal(response.statusCode, 302)
    assert.equal(response.headers.location, '/Account/Login?ReturnUrl=%2Freports')
  })

  test('an anonymous POST is redirected to the login page without a return URL', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/reports' })
    assert.equal(response.statusCode, 302)
    assert.equal(response.headers.location, '/Account/Login')
  })

  const jsonCallers: Array<[string, string, Record<string, string>]> = [
    ['Accept prefers application/json', '/reports', { accept: 'application/json, text/html;q=0.5' }],
    ['Accept application/problem+json', '/reports', { accept: 'application/problem+json' }],
    ['X-Requested-With: XMLHttpRequest', '/reports', { 'x-requested-with': 'XMLHttpRequest', accept: 'text/html' }],
    ['a path under /api/', '/api/application-information', { accept: 'text/html' }],
    ['a versioned path under /api/', '/api/v1/application-information', {}]
  ]
  for (const [name, url, headers] of jsonCallers) {
    test(`an anonymous caller with ${name} gets 401 problem+json`, async () => {
      const response = await t.app.inject({ url, headers })
      assert.equal(response.statusCode, 401)
      assert.equal(response.headers['content-type'], PROBLEM)
      assert.equal(response.headers.location, undefined)
      const body = response.json() as Record<string, unknown>
      assert.deepEqual({ ...body, requestId: typeof body.requestId }, { type: 'about:blank', title: 'Authentication required', status: 401, code: 'APP_ERR_AUTH_REQUIRED', requestId: 'string' })
    })
  }

  test('Accept preferring HTML over JSON is redirected', async () => {
    const response = await t.app.inject({ url: '/reports', headers: { accept: 'text/html, application/json;q=0.9' } })
    assert.equal(response.statusCode, 302)
  })

  test('negotiation answers stay right when remembered and after many distinct Accept values', async () => {
    const json = 'application/json, text/html;q=0.5'
    const html = 'text/html, application/json;q=0.9'
    const status = async (accept: string): Promise<number> => (await t.app.inject({ url: '/reports', headers: { accept } })).statusCode
    for (let round = 0; round < 2; round++) {
      assert.equal(await status(json), 401)
      assert.equal(await status(html), 302)
    }
    // More distinct values than are remembered, alternating preferences, each answered by its own content.
    for (let index = 0; index < 300; index++) {
      const prefersJson = index % 2 === 0
      const accept = prefersJson ? `application/json, text/x-${index};q=0.1` : `text/html, application/x-${index};q=0.1`
      assert.equal(await status(accept), prefersJson ? 401 : 302, accept)
    }
    assert.equal(await status(json), 401)
    assert.equal(await status(html), 302)
    assert.equal(await status(`application/json, ${'x'.repeat(600)}`), 401, 'a long value too large to remember')
  })

  test('a path that merely starts with /api (/apix) is not an API path', async () => {
    const response = await t.app.inject({ url: '/apix', headers: { accept: 'text/html' } })
    assert.equal(response.statusCode, 302)
  })

  test('a signed-in HTML caller lacking the policy is redirected to AccessDenied with the return URL', async () => {
    const response = await t.app.inject({ url: '/reports/admin?tab=1', headers: { cookie: reader, accept: 'text/html' } })
    assert.equal(response.statusCode, 302)
    assert.equal(response.headers.location, '/Account/AccessDenied?ReturnUrl=%2Freports%2Fadmin%3Ftab%3D1')
  })

  test('a signed-in JSON caller lacking the policy gets 403 problem+json', async () => {
    const response = await t.app.inject({ url: '/api/application-information/administration', headers: { cookie: reader } })
    assert.equal(response.statusCode, 403)
    assert.equal(response.headers['content-type'], PROBLEM)
    const body = response.json() as Record<string, unknown>
    assert.equal(body.code, 'APP_ERR_AUTH_FORBIDDEN')
    assert.equal(body.title, 'Access denied')
  })

  for (const cookie of [undefined, 'signed-in']) {
    test(`AccessDenied answers 403 with a safe page and never redirects (${cookie === undefined ? 'anonymous' : 'signed in'})`, async () => {
      const response = await t.app.inject({
        url: '/Account/AccessDenied?ReturnUrl=%2Freports%2Fadmin',
        headers: { accept: 'text/html', ...(cookie === undefined ? {} : { cookie: reader }) }
      })
      assert.equal(response.statusCode, 403)
      assert.equal(response.headers.location, undefined)
      assert.equal(response.headers['content-type'], 'text/html; charset=utf-8')
      assert.match(response.body, /<h1>Access denied<\/h1>/)
      assert.doesNotMatch(response.body, /reports/, 'the return URL is not echoed')
    })
  }

  test('following the forbid redirect ends at a 403 page (no loop)', async () => {
    let url = '/reports/admin'
    const seen: number[] = []
    for (let hop = 0; hop < 5; hop++) {
      const response = await t.app.inject({ url, headers: { cookie: reader, accept: 'text/html' } })
      seen.push(response.statusCode)
      if (response.statusCode !== 302) break
      url = String(response.headers.location)
    }
    assert.deepEqual(seen, [302, 403])
  })
})

describe('requests that match no route', () => {
  test('with the fallback on: anonymous callers are challenged, signed-in callers get the 404 page', async (context) => {
    const t = await build(context)
    const anonymous = await t.app.inject({ url: '/does-not-exist?x=1', headers: { accept: 'text/html' } })
    assert.equal(anonymous.statusCode, 302)
    assert.equal(anonymous.headers.location, '/Account/Login?ReturnUrl=%2Fdoes-not-exist%3Fx%3D1')
    const anonymousJson = await t.app.inject({ url: '/api/does-not-exist' })
    assert.equal(anonymousJson.statusCode, 401)
    const cookie = await signIn(t.app, standardUser())
    const signedIn = await t.app.inject({ url: '/does-not-exist', headers: { cookie, accept: 'text/html' } })
    assert.equal(signedIn.statusCode, 404)
    assert.equal(signedIn.headers['content-type'], 'text/html; charset=utf-8')
    assert.match(signedIn.body, /<h1>404 Not found<\/h1>/)
    const signedInJson = await t.app.inject({ url: '/api/does-not-exist', headers: { cookie } })
    assert.equal(signedInJson.statusCode, 404)
    assert.equal((signedInJson.json() as Record<string, unknown>).code, 'APP_ERR_NOT_FOUND')
  })

  test('with the fallback off: everyone gets 404', async (context) => {
    const t = await build(context, { settings: { Authorization: { RequireAuthenticatedUserByDefault: false } } })
    const response = await t.app.inject({ url: '/does-not-exist', headers: { accept: 'text/html' } })
    assert.equal(response.statusCode, 404)
    assert.equal(response.headers.location, undefined)
  })
})
