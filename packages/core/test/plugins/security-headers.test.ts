/**
 * Security headers on every response: strict CSP with frame-ancestors 'none', nosniff, no-referrer,
 * frame denial; HSTS outside Development only.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import helmet from 'helmet'
import { build } from '../helpers/app.js'
import { helmetOptions } from '../../src/plugins/security-headers.js'
import { isDevelopment } from '../../src/config/environment.js'

/** The headers helmet's own middleware sets on a real Node response with the app's options. */
async function headersFromHelmet (environmentName: string): Promise<Record<string, string>> {
  const middleware = helmet(helmetOptions(isDevelopment(environmentName)))
  const server = createServer((request, response) => {
    middleware(request, response, () => { response.end() })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)
    const headers: Record<string, string> = {}
    for (const [name, value] of response.headers) {
      if (!['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'].includes(name)) headers[name] = value
    }
    return headers
  } finally {
    server.close()
  }
}

const CSP = "default-src 'self';base-uri 'none';object-src 'none';script-src 'self';style-src 'self';img-src 'self' data:;font-src 'self';connect-src 'self';form-action 'self';frame-ancestors 'none'"

describe('security headers', () => {
  for (const nodeEnv of ['production', 'staging']) {
    test(`${nodeEnv}: strict CSP, nosniff, no-referrer, DENY framing and HSTS on pages, redirects, errors and probes`, async (context) => {
      const t = await build(context, { nodeEnv })
      for (const url of ['/Account/Login', '/', '/Home/Error/404', '/health/live', '/api/application-information']) {
        const response = await t.app.inject({ url })
        assert.equal(response.headers['content-security-policy'], `${CSP};upgrade-insecure-requests`, url)
        assert.equal(response.headers['x-content-type-options'], 'nosniff', url)
        assert.equal(response.headers['referrer-policy'], 'no-referrer', url)
        assert.equal(response.headers['x-frame-options'], 'DENY', url)
        assert.equal(response.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains', url)
      }
    })
  }

  test('Development: the same CSP without upgrade-insecure-requests, and no HSTS', async (context) => {
    const t = await build(context, { nodeEnv: 'development' })
    const response = await t.app.inject({ url: '/Account/Login' })
    assert.equal(response.headers['content-security-policy'], CSP)
    assert.equal(response.headers['x-content-type-options'], 'nosniff')
    assert.equal(response.headers['strict-transport-security'], undefined)
  })

  for (const [nodeEnv, environmentName] of [['production', 'Production'], ['development', 'Development']] as const) {
    test(`${environmentName}: every response carries exactly the headers helmet's middleware sets (computed once at startup)`, async (context) => {
      const expected = await headersFromHelmet(environmentName)
      assert.ok(Object.keys(expected).length >= 10, JSON.stringify(expected))
      const t = await build(context, { nodeEnv })
      for (const url of ['/Account/Login', '/', '/css/site.css', '/no/such/page', '/health/live', '/api/application-information']) {
        const response = await t.app.inject({ url })
        for (const [name, value] of Object.entries(expected)) assert.equal(response.headers[name], value, `${url} ${name}`)
      }
    })
  }

  test('pages carry no inline script or style that the CSP would have to allow', async (context) => {
    const t = await build(context)
    const response = await t.app.inject({ url: '/Account/Login' })
    assert.doesNotMatch(response.body, /<script|<style| style=| on[a-z]+=/i)
  })
})
