/**
 * The pending sign-in flow without Fastify (sign-in/pending-flows.ts): a started flow is found by
 * its id in the cookie it set; a foreign, tampered, expired or other scheme's flow is not; a
 * completed flow is a replay on a second callback; a browser never holds more than four flows.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { createKeyRing } from '../../src/data-protection/key-ring.js'
import { EmbeddedStateStore } from '../../src/state/embedded-store.js'
import { ReplayCache } from '../../src/state/replay-cache.js'
import { FLOW_LIFETIME_SECONDS, MAX_FLOWS_PER_BROWSER, PendingFlows } from '../../src/sign-in/pending-flows.js'
import { MAX_CORRELATION_VALUE_LENGTH } from '../../src/sign-in/correlation-slots.js'

const PREFIX = '__Host-ProjectTemplate.Correlation.'

function flows (now: () => number = Date.now): PendingFlows {
  const store = new EmbeddedStateStore({ maxEntries: { session: 10, index: 10, flow: 10, replay: 10, lock: 10 }, maxCharacters: 100_000 }, now)
  return new PendingFlows({ cookiePrefix: PREFIX, keyRing: createKeyRing([randomBytes(32)]), now, completed: new ReplayCache(store, 'sign-in-flow') })
}

describe('PendingFlows', () => {
  test('a started flow is found by its id, with what was sealed, and its cookie is named for deletion', async () => {
    const pending = flows()
    const started = pending.start({}, { scheme: 'OpenIdConnect', returnUrl: '/orders?id=7', data: { verifier: 'v-1', nonce: 'n-1' }, previousSessionId: 'session-1' })
    assert.match(started.cookieName, /^__Host-ProjectTemplate\.Correlation\.[0-3]$/)
    assert.ok(started.cookieValue.length <= MAX_CORRELATION_VALUE_LENGTH)
    assert.equal(started.replacedOlder, false)
    assert.equal(started.shortened, undefined)
    const cookies = { [started.cookieName]: started.cookieValue }
    assert.equal(pending.holds(cookies), true)
    assert.equal(pending.holds({ other: 'x' }), false)
    const found = await pending.find(cookies, 'OpenIdConnect', started.flowId)
    assert.equal(found.cookieToDelete, started.cookieName)
    assert.equal(found.replayed, false)
    assert.deepEqual(found.flow && { ...found.flow, expiresAt: 0 }, {
      scheme: 'OpenIdConnect', flowId: started.flowId, returnUrl: '/orders?id=7', expiresAt: 0, data: { verifier: 'v-1', nonce: 'n-1' }, previousSessionId: 'session-1'
    })
    assert.ok(found.flow !== undefined && found.flow.expiresAt > Date.now() / 1000)
  })

  test('another scheme, another id, a tampered or foreign cookie, and no cookie at all find nothing', async () => {
    const pending = flows()
    const started = pending.start({}, { scheme: 'Saml2', returnUrl: '/', data: {} })
    const cookies = { [started.cookieName]: started.cookieValue }
    const otherScheme = await pending.find(cookies, 'OpenIdConnect', started.flowId)
    assert.equal(otherScheme.flow, undefined)
    assert.equal(otherScheme.cookieToDelete, started.cookieName)
    assert.equal((await pending.find(cookies, 'Saml2', 'A'.repeat(22))).flow, undefined)
    assert.equal((await pending.find(cookies, 'Saml2', 'not a flow id')).flow, undefined)
    const tampered = { [started.cookieName]: `${started.cookieValue.slice(0, -2)}AA` }
    assert.deepEqual(await pending.find(tampered, 'Saml2', started.flowId), { noCookies: false, replayed: false })
    const foreign = flows().start({}, { scheme: 'Saml2', returnUrl: '/', data: {} })
    assert.equal((await pending.find({ [foreign.cookieName]: foreign.cookieValue }, 'Saml2', foreign.flowId)).flow, undefined)
    assert.deepEqual(await pending.find({}, 'Saml2', started.flowId), { noCookies: true, replayed: false })
  })

  test('an expired flow is not found, and its cookie still goes', async () => {
    let now = 1_800_000_000_000
    const pending = flows(() => now)
    const started = pending.start({}, { scheme: 'OpenIdConnect', returnUrl: '/', data: {} })
    now += FLOW_LIFETIME_SECONDS * 1000
    const found = await pending.find({ [started.cookieName]: started.cookieValue }, 'OpenIdConnect', started.flowId)
    assert.equal(found.flow, undefined)
    assert.equal(found.cookieToDelete, started.cookieName)
  })

  test('a completed flow is a replay: found again, it is refused as replayed', async () => {
    const pending = flows()
    const started = pending.start({}, { scheme: 'OpenIdConnect', returnUrl: '/', data: {} })
    const cookies = { [started.cookieName]: started.cookieValue }
    const first = await pending.find(cookies, 'OpenIdConnect', started.flowId)
    assert.ok(first.flow !== undefined)
    assert.equal(await pending.markCompleted(first.flow), true)
    assert.equal(await pending.markCompleted(first.flow), false)
    const again = await pending.find(cookies, 'OpenIdConnect', started.flowId)
    assert.equal(again.flow, undefined)
    assert.equal(again.replayed, true)
  })

  test('a browser holds at most four flows: a fifth overwrites the oldest, and a long return URL is shortened', async () => {
    let now = 1_800_000_000_000
    const pending = flows(() => now)
    const cookies: Record<string, string> = {}
    const started = []
    for (let index = 0; index < MAX_FLOWS_PER_BROWSER + 1; index++) {
      now += 1
      const flow = pending.start(cookies, { scheme: 'OpenIdConnect', returnUrl: `/page/${index}`, data: {} })
      cookies[flow.cookieName] = flow.cookieValue
      started.push(flow)
    }
    assert.equal(Object.keys(cookies).length, MAX_FLOWS_PER_BROWSER)
    assert.equal(started[MAX_FLOWS_PER_BROWSER]?.replacedOlder, true)
    assert.equal(started[MAX_FLOWS_PER_BROWSER]?.cookieName, started[0]?.cookieName)
    assert.equal((await pending.find(cookies, 'OpenIdConnect', started[0]?.flowId)).flow, undefined)
    assert.equal((await pending.find(cookies, 'OpenIdConnect', started[1]?.flowId)).flow?.returnUrl, '/page/1')
    const long = pending.start({}, { scheme: 'OpenIdConnect', returnUrl: `/search?q=${'x'.repeat(2000)}`, data: {} })
    assert.deepEqual(long.shortened, { length: 2010, kept: '/search'.length })
  })
})
