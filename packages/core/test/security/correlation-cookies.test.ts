/**
 * Correlation cookies cannot pile up (issue 13, "Correlation cookies"; issue 21): the flow's state
 * is sealed in the cookie, about 300 bytes with a short return URL and under 3.3 KB with the longest
 * local URL (2,048 characters), a browser holds at most MAX_FLOWS_PER_BROWSER (starting another flow
 * deletes the oldest), and a callback over plain http without its cookie says why in the log.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { MAX_FLOWS_PER_BROWSER } from '../../src/plugins/external-sign-in.js'
import { buildForSuite } from '../helpers/app.js'
import { registerTestProvider, TEST_PROVIDER, TEST_PROVIDER_CALLBACK } from '../helpers/test-provider.js'

const PREFIX = '__Host-ProjectTemplate.Correlation.'

describe('correlation cookies', () => {
  const t = buildForSuite({ configure: (app) => { registerTestProvider(app) } })

  const pairOf = (response: { headers: Record<string, unknown> }): string => String(response.headers['set-cookie']).split(';')[0]!

  test('a correlation cookie is about 300 bytes with a short return URL and under 3.3 KB with the longest one, and hides it', async () => {
    const short = await t.app.inject({ url: '/External/Challenge', query: { provider: TEST_PROVIDER, returnUrl: '/orders' } })
    assert.equal(short.statusCode, 302)
    assert.ok(pairOf(short).startsWith(PREFIX))
    assert.ok(pairOf(short).length < 350, `${pairOf(short).length} characters`)
    const returnUrl = `/orders?q=${'x'.repeat(2048 - 10)}`
    const long = await t.app.inject({ url: '/External/Challenge', query: { provider: TEST_PROVIDER, returnUrl } })
    assert.equal(long.statusCode, 302)
    assert.ok(pairOf(long).length < 3300, `${pairOf(long).length} characters`)
    assert.ok(!pairOf(long).includes('xxxx') && !pairOf(long).includes('orders'), 'the return URL is sealed, not readable')
  })

  test(`a browser holds at most ${MAX_FLOWS_PER_BROWSER}: starting another flow deletes the oldest, and twenty challenges stay bounded`, async () => {
    const jar = new Map<string, string>()
    for (let index = 0; index < 20; index++) {
      const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ')
      const response = await t.app.inject({ url: '/External/Challenge', query: { provider: TEST_PROVIDER }, headers: cookie === '' ? {} : { cookie } })
      assert.equal(response.statusCode, 302)
      for (const set of response.cookies) {
        if (set.value === '') jar.delete(set.name)
        else jar.set(set.name, set.value)
      }
      assert.ok(jar.size <= MAX_FLOWS_PER_BROWSER, `after challenge ${index + 1}: ${jar.size} cookies`)
    }
    assert.equal(jar.size, MAX_FLOWS_PER_BROWSER)
    // The newest flows still complete.
    const [name, value] = [...jar].at(-1)!
    const callback = await t.app.inject({ url: `${TEST_PROVIDER_CALLBACK}?state=${name.slice(PREFIX.length)}`, headers: { cookie: `${name}=${value}` } })
    assert.equal(callback.headers.location, '/')
  })

  test('a callback over http to a public host without its cookie logs why (Secure cookies need https)', async () => {
    const response = await t.app.inject({ url: `${TEST_PROVIDER_CALLBACK}?state=${'A'.repeat(22)}`, headers: { host: 'app.example.test' } })
    assert.equal(response.headers.location, '/Account/Login?failure=correlation')
    assert.equal(t.logs.events('external.correlation.insecure_transport').length, 1)
    await t.app.inject({ url: `${TEST_PROVIDER_CALLBACK}?state=${'B'.repeat(22)}` })
    assert.equal(t.logs.events('external.correlation.insecure_transport').length, 1, 'not for localhost')
  })
})
