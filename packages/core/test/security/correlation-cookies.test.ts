/**
 * Correlation cookies cannot pile up (issue 13; issue 21; issue 26, item 2; docs/security.md,
 * "Correlation cookies"): a flow's state is sealed in one of four fixed slots
 * (`…Correlation.0` … `.3`), so overlapping challenges (many sent at once with the same Cookie
 * header, the union of their Set-Cookies applied, as a browser does) overwrite rather than add; a
 * cookie is at most MAX_CORRELATION_COOKIE_BYTES (a return URL that would not fit is shortened to
 * its path, else `/`), so all of a browser's correlation cookies stay far below nginx's 8 KB
 * header line. Sign-ins started one after another in up to four tabs all complete; a fifth
 * overwrites the oldest. A callback over plain http without its cookie says why in the log.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { MAX_FLOWS_PER_BROWSER } from '../../src/sign-in/pending-flows.js'
import { MAX_CORRELATION_BYTES, MAX_CORRELATION_COOKIE_BYTES } from '../../src/sign-in/correlation-slots.js'
import { buildForSuite } from '../helpers/app.js'
import { registerTestProvider, TEST_PROVIDER, TEST_PROVIDER_CALLBACK } from '../helpers/test-provider.js'

const PREFIX = '__Host-ProjectTemplate.Correlation.'
const SLOT_NAMES = [0, 1, 2, 3].map((slot) => `${PREFIX}${slot}`)
/** The longest local return URL (2,048 characters), with a long path and a long query. */
const LONGEST = `/orders/${'p'.repeat(200)}?q=${'x'.repeat(2048 - 211)}`
/** A return URL that just fits the state's byte cap (the test provider seals no protocol data): the largest cookie. */
const NEAR_CAP = `/${'p'.repeat(520)}`
/** nginx's default `large_client_header_buffers 4 8k`: one header line must fit in 8 KB. */
const NGINX_HEADER_LINE = 8192

type Jar = Map<string, string>
const headerOf = (jar: Jar): string => [...jar].map(([name, value]) => `${name}=${value}`).join('; ')
const stateOf = (location: unknown): string => new URL(String(location)).searchParams.get('state') ?? ''

describe('correlation cookies', () => {
  const t = buildForSuite({ configure: (app) => { registerTestProvider(app) } })

  async function challenge (jar: Jar, returnUrl = '/'): Promise<{ state: string, set: Array<{ name: string, value: string }> }> {
    const cookie = headerOf(jar)
    const response = await t.app.inject({ url: '/External/Challenge', query: { provider: TEST_PROVIDER, returnUrl }, headers: cookie === '' ? {} : { cookie } })
    assert.equal(response.statusCode, 302)
    return { state: stateOf(response.headers.location), set: response.cookies }
  }

  function apply (jar: Jar, set: ReadonlyArray<{ name: string, value: string }>): void {
    for (const cookie of set) {
      if (cookie.value === '') jar.delete(cookie.name)
      else jar.set(cookie.name, cookie.value)
    }
  }

  async function callback (jar: Jar, state: string): Promise<string> {
    const response = await t.app.inject({ url: TEST_PROVIDER_CALLBACK, query: { state }, headers: { cookie: headerOf(jar) } })
    apply(jar, response.cookies.filter((cookie) => cookie.name.startsWith(PREFIX)))
    return String(response.headers.location)
  }

  test('a correlation cookie is about 300 bytes with a short return URL and never over the per-cookie cap with the longest one', async () => {
    const short = await challenge(new Map(), '/orders')
    const pair = `${short.set[0]?.name}=${short.set[0]?.value}`
    assert.equal(short.set.length, 1)
    assert.ok(SLOT_NAMES.includes(short.set[0]?.name ?? ''), short.set[0]?.name)
    assert.ok(pair.length < 350, `${pair.length} characters`)
    const long = await challenge(new Map(), LONGEST)
    const longPair = `${long.set[0]?.name}=${long.set[0]?.value}`
    assert.ok(longPair.length <= MAX_CORRELATION_COOKIE_BYTES, `${longPair.length} > ${MAX_CORRELATION_COOKIE_BYTES}`)
    assert.ok(MAX_CORRELATION_COOKIE_BYTES < 1000, `the cap itself: ${MAX_CORRELATION_COOKIE_BYTES}`)
    assert.ok(!longPair.includes('xxxx') && !longPair.includes('orders'), 'the return URL is sealed, not readable')
    assert.equal(t.logs.events('external.flow.return_url_shortened').at(-1)?.kept, 208)
  })

  test('a return URL too long for the cookie is shortened to its path (then to /); the sign-in still completes there', async () => {
    const jar: Jar = new Map()
    const { state, set } = await challenge(jar, LONGEST)
    apply(jar, set)
    assert.equal(await callback(jar, state), `/orders/${'p'.repeat(200)}`)
    const pathOnly = await challenge(jar, `/${'p'.repeat(1500)}`)
    apply(jar, pathOnly.set)
    assert.equal(await callback(jar, pathOnly.state), '/')
    const fits = await challenge(jar, '/orders?page=2')
    apply(jar, fits.set)
    assert.equal(await callback(jar, fits.state), '/orders?page=2')
  })

  test('overlapping challenges (20 at once with the same Cookie header, 5 rounds, the largest cookies) never exceed four slots or the byte budget', async () => {
    const jar: Jar = new Map()
    const states: string[] = []
    let largest = 0
    for (let round = 0; round < 5; round++) {
      const before = new Map(jar)
      const answers = await Promise.all(Array.from({ length: 20 }, async () => await challenge(before, NEAR_CAP)))
      // A browser applies every response's Set-Cookie, in whatever order they arrive.
      for (const answer of answers) { apply(jar, answer.set); states.push(answer.state) }
      const names = [...jar.keys()]
      assert.ok(names.every((name) => SLOT_NAMES.includes(name)), `round ${round + 1}: ${names.join(', ')}`)
      assert.ok(jar.size <= MAX_FLOWS_PER_BROWSER, `round ${round + 1}: ${jar.size} cookies`)
      largest = Math.max(largest, Buffer.byteLength(headerOf(jar)))
    }
    assert.equal(jar.size, MAX_FLOWS_PER_BROWSER)
    // The measurement for docs/security.md: printed whatever the outcome.
    console.log(JSON.stringify({ correlationCookies: { largestHeaderBytes: largest, budget: MAX_CORRELATION_BYTES, perCookieCap: MAX_CORRELATION_COOKIE_BYTES } }))
    assert.ok(largest <= MAX_CORRELATION_BYTES, `${largest} bytes > ${MAX_CORRELATION_BYTES}`)
    assert.ok(MAX_CORRELATION_BYTES < NGINX_HEADER_LINE / 2, `the budget itself: ${MAX_CORRELATION_BYTES} bytes`)
    assert.ok(largest < 4000, `${largest} bytes of correlation cookies`)
    // Exactly the flows whose cookies survived still complete (one per slot); the others fail as correlation.
    const outcomes = await Promise.all(states.map(async (state) => await callback(new Map(jar), state)))
    assert.equal(outcomes.filter((location) => location === NEAR_CAP).length, MAX_FLOWS_PER_BROWSER)
    assert.equal(outcomes.filter((location) => location === '/Account/Login?failure=correlation').length, states.length - MAX_FLOWS_PER_BROWSER)
  })

  test('sequential sign-ins in four tabs all complete, in any order; a fifth overwrites the oldest, whose callback fails as correlation', async () => {
    const jar: Jar = new Map()
    const states: string[] = []
    for (let tab = 0; tab < 4; tab++) {
      const { state, set } = await challenge(jar, `/tab-${tab}`)
      apply(jar, set)
      states.push(state)
      // Tabs are opened one after another: at least a millisecond apart (the slots' clock).
      await sleep(3)
    }
    assert.deepEqual([...jar.keys()].sort(), SLOT_NAMES, 'each tab took its own slot')
    assert.equal(await callback(new Map(jar), states[2]!), '/tab-2')
    assert.equal(await callback(new Map(jar), states[0]!), '/tab-0')
    // A fifth tab, with every slot in use: the oldest (tab 0) goes.
    const fifth = await challenge(jar, '/tab-4')
    apply(jar, fifth.set)
    assert.equal(jar.size, 4)
    assert.equal(await callback(new Map(jar), states[0]!), '/Account/Login?failure=correlation')
    assert.equal(await callback(new Map(jar), fifth.state), '/tab-4')
    assert.equal(await callback(new Map(jar), states[3]!), '/tab-3')
  })

  test('a callback over http to a public host without its cookie logs why (Secure cookies need https)', async () => {
    const response = await t.app.inject({ url: `${TEST_PROVIDER_CALLBACK}?state=${'A'.repeat(22)}`, headers: { host: 'app.example.test' } })
    assert.equal(response.headers.location, '/Account/Login?failure=correlation')
    assert.equal(t.logs.events('external.correlation.insecure_transport').length, 1)
    await t.app.inject({ url: `${TEST_PROVIDER_CALLBACK}?state=${'B'.repeat(22)}` })
    assert.equal(t.logs.events('external.correlation.insecure_transport').length, 1, 'not for localhost')
  })
})
