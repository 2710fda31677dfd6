/**
 * The core's stylesheet is a file under the app's own Content-Security-Policy: served at
 * /_core/site.css to an anonymous caller ahead of routing (not an anonymous route: the reviewed
 * inventory is unchanged), cached publicly with an ETag that a revalidation answers with 304, with
 * the same security headers as every response; every page links it before the app's /css/site.css
 * and carries no inline style or script, and the policy still allows neither.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildForSuite, signIn, standardUser } from '../helpers/app.js'
import { CORE_STYLESHEET, CORE_STYLESHEET_ETAG } from '../../src/views/stylesheet.js'

describe('the core stylesheet', () => {
  const t = buildForSuite()

  test('/_core/site.css is served to an anonymous caller as CSS, cached publicly for an hour, with an ETag', async () => {
    const response = await t.app.inject({ url: '/_core/site.css' })
    assert.equal(response.statusCode, 200)
    assert.equal(response.headers['content-type'], 'text/css; charset=utf-8')
    assert.equal(response.headers['cache-control'], 'public, max-age=3600')
    assert.equal(response.headers.etag, CORE_STYLESHEET_ETAG)
    assert.equal(response.body, CORE_STYLESHEET)
    assert.equal(response.headers['x-content-type-options'], 'nosniff')
    assert.equal(response.headers['set-cookie'], undefined)
    assert.ok(!t.app.authorization.anonymousRoutes().some((route) => route.includes('/_core/')), 'not a route of the reviewed inventory')
  })

  test('a revalidation with the ETag is a 304 without a body; another ETag gets the file', async () => {
    const unchanged = await t.app.inject({ url: '/_core/site.css', headers: { 'if-none-match': CORE_STYLESHEET_ETAG } })
    assert.equal(unchanged.statusCode, 304)
    assert.equal(unchanged.body, '')
    assert.equal(unchanged.headers.etag, CORE_STYLESHEET_ETAG)
    const changed = await t.app.inject({ url: '/_core/site.css', headers: { 'if-none-match': '"older"' } })
    assert.equal(changed.statusCode, 200)
    assert.equal(changed.body, CORE_STYLESHEET)
  })

  test('the stylesheet follows the colour scheme and holds no url() that could reach another origin', () => {
    assert.match(CORE_STYLESHEET, /@media \(prefers-color-scheme: dark\)/)
    assert.match(CORE_STYLESHEET, /color-scheme: light dark;/)
    assert.doesNotMatch(CORE_STYLESHEET, /url\(|@import/)
  })

  test('every page links the core stylesheet, then the app\'s, with no inline style or script; the CSP allows neither', async () => {
    const cookie = await signIn(t.app, standardUser())
    const pages = [
      await t.app.inject({ url: '/Account/Login' }),
      await t.app.inject({ url: '/Account/Login?failure=cancelled' }),
      await t.app.inject({ url: '/Home/Error/500' }),
      await t.app.inject({ url: '/Account/AccessDenied', headers: { cookie } }),
      await t.app.inject({ url: '/Account/Sessions', headers: { cookie } })
    ]
    for (const page of pages) {
      assert.match(page.body, /<link rel="stylesheet" href="\/_core\/site\.css">\n<link rel="stylesheet" href="\/css\/site\.css">/)
      assert.doesNotMatch(page.body, /<style|\sstyle=|<script/i)
      const policy = String(page.headers['content-security-policy'])
      assert.match(policy, /(^|;)style-src 'self'(;|$)/)
      assert.match(policy, /(^|;)script-src 'self'(;|$)/)
    }
  })
})
