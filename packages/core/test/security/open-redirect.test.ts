/**
 * Open-redirect corpus: every hostile return URL is refused at every place that takes one, never
 * emitted in a Location header or a link, never a 5xx; every local one round-trips unchanged.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { LightMyRequestResponse } from 'fastify'
import { isLocalUrl } from '../../src/http/local-url.js'
import { buildForSuite, antiforgeryFor, cookieHeaderFrom, signIn, standardUser } from '../helpers/app.js'
import { registerTestProvider, TEST_IDP_AUTHORIZE, TEST_PROVIDER, TEST_PROVIDER_CALLBACK } from '../helpers/test-provider.js'
import { MAX_FLOW_STATE_BYTES } from '../../src/sign-in/correlation-slots.js'

const corpus = (name: string): string[] =>
  (JSON.parse(readFileSync(join(import.meta.dirname, '..', 'http', 'corpora', name), 'utf8')) as { values: string[] }).values
const hostile = corpus('open-redirect-return-urls.json')
const local = corpus('local-return-urls.json')

function assertNotEmitted (response: LightMyRequestResponse, value: string): void {
  assert.ok(response.statusCode < 500, `5xx for ${JSON.stringify(value)}`)
  const location = response.headers.location
  if (value !== '') {
    assert.ok(location === undefined || !String(location).includes(value), `Location carries ${JSON.stringify(value)}`)
    assert.ok(!response.body.includes(`href="${value}"`), `link target ${JSON.stringify(value)}`)
  }
}

describe('return URL corpus', () => {
  const t = buildForSuite({ configure: (app) => { registerTestProvider(app) } })

  test('the corpora are large enough and classified as the rule says', () => {
    assert.ok(hostile.length >= 60)
    assert.ok(local.length >= 15)
    for (const value of hostile) assert.equal(isLocalUrl(value), false, JSON.stringify(value))
    for (const value of local) assert.equal(isLocalUrl(value), true, JSON.stringify(value))
  })

  test('/Account/Login refuses every hostile ReturnUrl with 400 and no link', async () => {
    for (const value of hostile) {
      const response = await t.app.inject({ url: '/Account/Login', query: { ReturnUrl: value } })
      assert.equal(response.statusCode, 400, JSON.stringify(value))
      assertNotEmitted(response, value)
      assert.ok(!response.body.includes('/External/Challenge'), 'no sign-in link on a rejected ReturnUrl')
    }
  })

  test('/Account/Login carries every local ReturnUrl into the provider link unchanged', async () => {
    for (const value of local) {
      const response = await t.app.inject({ url: '/Account/Login', query: { ReturnUrl: value } })
      assert.equal(response.statusCode, 200, JSON.stringify(value))
      const href = /href="(\/External\/Challenge\?[^"]+)"/.exec(response.body)?.[1]
      assert.ok(href !== undefined)
      const link = new URL(href.replaceAll('&amp;', '&'), 'https://app.test')
      assert.equal(link.searchParams.get('provider'), TEST_PROVIDER)
      assert.equal(link.searchParams.get('returnUrl'), value)
    }
  })

  test('/External/Challenge refuses every hostile returnUrl without starting a challenge', async () => {
    for (const value of hostile) {
      const response = await t.app.inject({ url: '/External/Challenge', query: { provider: TEST_PROVIDER, returnUrl: value } })
      assert.equal(response.statusCode, 400, JSON.stringify(value))
      assert.equal(response.headers.location, undefined)
      assert.equal(response.cookies.length, 0, 'no correlation cookie')
      assertNotEmitted(response, value)
    }
  })

  test('a local returnUrl survives challenge, correlation and callback unchanged (shortened to its path or / only when too long for the correlation cookie)', async () => {
    for (const value of local) {
      const challenge = await t.app.inject({ url: '/External/Challenge', query: { provider: TEST_PROVIDER, returnUrl: value } })
      assert.equal(challenge.statusCode, 302)
      const location = new URL(String(challenge.headers.location))
      assert.equal(`${location.origin}${location.pathname}`, TEST_IDP_AUTHORIZE)
      const callback = await t.app.inject({
        url: TEST_PROVIDER_CALLBACK,
        query: { state: location.searchParams.get('state') ?? '' },
        headers: { cookie: cookieHeaderFrom(challenge) }
      })
      assert.equal(callback.statusCode, 302)
      // The sealed flow state is at most MAX_FLOW_STATE_BYTES (docs/security.md, "Correlation cookies").
      const fits = Buffer.byteLength(JSON.stringify(value)) <= MAX_FLOW_STATE_BYTES - 100
      if (fits) assert.equal(callback.headers.location, value, JSON.stringify(value))
      else assert.ok([value.split(/[?#]/)[0], '/'].includes(String(callback.headers.location)), `${JSON.stringify(value)} → ${String(callback.headers.location)}`)
    }
  })

  test('/Account/Logout refuses every hostile returnUrl with 400 and keeps the session', async () => {
    const { token, cookie } = await antiforgeryFor(t.app, await signIn(t.app, standardUser()))
    for (const value of hostile) {
      const response = await t.app.inject({
        method: 'POST', url: '/Account/Logout', headers: { cookie }, payload: { __RequestVerificationToken: token, returnUrl: value }
      })
      assert.equal(response.statusCode, 400, JSON.stringify(value))
      assert.equal(response.cookies.length, 0, 'session untouched')
      assertNotEmitted(response, value)
    }
    for (const value of local) {
      // Logout ends the session, so each local value gets a session of its own.
      const fresh = await antiforgeryFor(t.app, await signIn(t.app, standardUser()))
      const response = await t.app.inject({
        method: 'POST', url: '/Account/Logout', headers: { cookie: fresh.cookie }, payload: { __RequestVerificationToken: fresh.token, returnUrl: value }
      })
      assert.equal(response.statusCode, 302, JSON.stringify(value))
      assert.equal(response.headers.location, value)
    }
  })
})
