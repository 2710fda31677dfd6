/**
 * Security headers on every response: strict CSP with frame-ancestors 'none', nosniff, no-referrer,
 * frame denial; HSTS outside Development only.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildTestApp } from '../helpers/app.js'

const CSP = "default-src 'self';base-uri 'none';object-src 'none';script-src 'self';style-src 'self';img-src 'self' data:;font-src 'self';connect-src 'self';form-action 'self';frame-ancestors 'none'"

describe('security headers', () => {
  for (const nodeEnv of ['production', 'staging']) {
    test(`${nodeEnv}: strict CSP, nosniff, no-referrer, DENY framing and HSTS on pages, redirects, errors and probes`, async () => {
      const t = await buildTestApp({ nodeEnv })
      try {
        for (const url of ['/Account/Login', '/', '/Home/Error/404', '/health/live', '/api/application-information']) {
          const response = await t.app.inject({ url })
          assert.equal(response.headers['content-security-policy'], `${CSP};upgrade-insecure-requests`, url)
          assert.equal(response.headers['x-content-type-options'], 'nosniff', url)
          assert.equal(response.headers['referrer-policy'], 'no-referrer', url)
          assert.equal(response.headers['x-frame-options'], 'DENY', url)
          assert.equal(response.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains', url)
        }
      } finally {
        await t.app.close()
      }
    })
  }

  test('Development: the same CSP without upgrade-insecure-requests, and no HSTS', async () => {
    const t = await buildTestApp({ nodeEnv: 'development' })
    try {
      const response = await t.app.inject({ url: '/Account/Login' })
      assert.equal(response.headers['content-security-policy'], CSP)
      assert.equal(response.headers['x-content-type-options'], 'nosniff')
      assert.equal(response.headers['strict-transport-security'], undefined)
    } finally {
      await t.app.close()
    }
  })

  test('pages carry no inline script or style that the CSP would have to allow', async () => {
    const t = await buildTestApp()
    try {
      const response = await t.app.inject({ url: '/Account/Login' })
      assert.doesNotMatch(response.body, /<script|<style| style=| on[a-z]+=/i)
    } finally {
      await t.app.close()
    }
  })
})
