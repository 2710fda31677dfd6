import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildTestApp, signIn, standardUser, type TestApp } from '../helpers/app.js'

const ADMIN_API = '/api/application-information/administration'

describe('forbid on an API URL', () => {
  let t: TestApp
  let reader: string
  before(async () => {
    t = await buildTestApp()
    reader = await signIn(t.app, standardUser())
  })
  after(async () => { await t.app.close() })

  test('a browser page navigation is redirected to the AccessDenied page', async () => {
    const response = await t.app.inject({ url: ADMIN_API, headers: { cookie: reader, accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } })
    assert.equal(response.statusCode, 302)
    assert.equal(response.headers.location, `/Account/AccessDenied?ReturnUrl=${encodeURIComponent(ADMIN_API)}`)
  })

  for (const [label, headers] of [
    ['no Accept header', {}],
    ['Accept */*', { accept: '*/*' }],
    ['Accept application/json', { accept: 'application/json' }],
    ['JSON preferred over HTML', { accept: 'application/json, text/html;q=0.5' }],
    ['X-Requested-With with text/html', { accept: 'text/html', 'x-requested-with': 'XMLHttpRequest' }]
  ] as const) {
    test(`an API call (${label}) gets 403 problem+json`, async () => {
      const response = await t.app.inject({ url: ADMIN_API, headers: { cookie: reader, ...headers } })
      assert.equal(response.statusCode, 403)
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
      assert.equal(response.json().code, 'APP_ERR_AUTH_FORBIDDEN')
    })
  }

  test('an anonymous browser navigation to an API URL still gets 401, never a login redirect', async () => {
    const response = await t.app.inject({ url: ADMIN_API, headers: { accept: 'text/html' } })
    assert.equal(response.statusCode, 401)
  })
})
