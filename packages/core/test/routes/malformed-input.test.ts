/**
 * Hostile request shapes never produce a 500: malformed cookie headers, malformed URLs, bad JSON
 * and oversized bodies are answered with a 4xx or treated as anonymous.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildTestApp, type TestApp } from '../helpers/app.js'

describe('malformed input', () => {
  let t: TestApp
  before(async () => {
    t = await buildTestApp({ configure: (app) => { app.post('/echo', { config: { allowAnonymous: true } }, async (request) => ({ body: request.body })) } })
  })
  after(async () => { await t.app.close() })

  const cookieHeaders = [
    '__Host-ProjectTemplate.Web.Authentication',
    '__Host-ProjectTemplate.Web.Authentication=',
    '__Host-ProjectTemplate.Web.Authentication=%E0%A4%A',
    '__Host-ProjectTemplate.Web.Authentication="unterminated',
    '=; ==; ;;;',
    '__Host-ProjectTemplate.Web.Authentication=a; __Host-ProjectTemplate.Web.Authentication=b',
    '__proto__=x; constructor=y',
    `__Host-ProjectTemplate.Web.Authentication=${'A'.repeat(20_000)}`,
    '__Host-ProjectTemplate.Web.Authentication=chunks-9; __Host-ProjectTemplate.Web.AuthenticationC1=x'
  ]
  for (const cookie of cookieHeaders) {
    test(`cookie header ${JSON.stringify(cookie.slice(0, 60))} is anonymous, not 500`, async () => {
      const page = await t.app.inject({ url: '/', headers: { cookie } })
      assert.equal(page.statusCode, 302)
      const api = await t.app.inject({ url: '/api/application-information', headers: { cookie } })
      assert.equal(api.statusCode, 401)
    })
  }

  const urls: Array<[string, number]> = [
    ['/%', 400],
    ['/%zz', 400],
    ['/Account/Login?ReturnUrl=%', 400],
    ['/Account/Login?ReturnUrl=/%zz', 200],
    ['/Home/Error/%E0%A4%A', 400]
  ]
  for (const [url, status] of urls) {
    test(`URL ${url} answers ${status}, not 500`, async () => {
      const response = await t.app.inject({ url, headers: { accept: 'text/html' } })
      assert.ok(response.statusCode < 500, `${url} answered ${response.statusCode}`)
      assert.equal(response.statusCode, status)
    })
  }

  const bodies: Array<[string, string, string, number]> = [
    ['invalid JSON', 'application/json', '{"a":', 400],
    ['JSON with a __proto__ key', 'application/json', '{"__proto__":{"polluted":true}}', 400],
    ['an unsupported media type', 'application/x-unknown', 'abc', 415],
    ['a body over the limit', 'application/json', `{"a":"${'x'.repeat(70 * 1024)}"}`, 413]
  ]
  for (const [name, type, payload, status] of bodies) {
    test(`${name} answers ${status}, not 500`, async () => {
      const response = await t.app.inject({ method: 'POST', url: '/echo', payload, headers: { 'content-type': type, accept: 'application/json' } })
      assert.equal(response.statusCode, status)
      assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8')
      assert.equal(({} as Record<string, unknown>).polluted, undefined)
    })
  }
})
