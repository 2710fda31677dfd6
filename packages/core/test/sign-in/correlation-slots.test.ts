/**
 * The correlation cookies' slot and byte policy (src/sign-in/correlation-slots.ts) and the session
 * a sign-in ends (src/sign-in/previous-session.ts), as plain functions.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { chooseSlot, CORRELATION_SLOTS, fitFlowState, MAX_CORRELATION_BYTES, MAX_FLOW_STATE_BYTES, slotOfCookieName } from '../../src/sign-in/correlation-slots.js'
import { previousSessionToEnd } from '../../src/sign-in/previous-session.js'

const PREFIX = '__Host-App.Correlation.'
const LIFETIME = 600_000
const NOW = 10_000_000

describe('correlation slots', () => {
  test('slot names: only <prefix>0 … <prefix>3', () => {
    assert.deepEqual(['0', '1', '2', '3', '4', '00', 'a', ''].map((tail) => slotOfCookieName(`${PREFIX}${tail}`, PREFIX)), [0, 1, 2, 3, undefined, undefined, undefined, undefined])
    assert.equal(slotOfCookieName(`${PREFIX}${'A'.repeat(22)}`, PREFIX), undefined, 'the former per-flow names are not slots')
    assert.equal(slotOfCookieName('__Host-Other.Correlation.0', PREFIX), undefined)
  })

  test('a free slot is chosen (at random among the free ones), an expired one counts as free, else the oldest', () => {
    assert.equal(chooseSlot(new Map(), NOW, LIFETIME, () => 2), 2)
    assert.equal(chooseSlot(new Map([[0, NOW - 5], [2, NOW - 1]]), NOW, LIFETIME, () => 1), 3, 'free: 1 and 3')
    assert.equal(chooseSlot(new Map([[0, NOW - 1], [1, NOW - LIFETIME], [2, NOW - 2], [3, NOW - 3]]), NOW, LIFETIME, () => 0), 1, 'slot 1 expired')
    assert.equal(chooseSlot(new Map([[0, NOW - 1], [1, NOW - 4], [2, NOW - 2], [3, NOW - 3]]), NOW, LIFETIME, () => 0), 1, 'the oldest')
    assert.equal(chooseSlot(new Map([[0, NOW - 1], [1, NOW - 4], [2, 0], [3, NOW - 3]]), NOW, LIFETIME, () => 0), 2, 'unreadable (0) is expired, so free')
  })

  test('the state fits its byte cap: the full return URL, else its path, else /', () => {
    const serialize = (returnUrl: string): string => JSON.stringify({ s: 'OpenIdConnect', f: 'A'.repeat(22), r: returnUrl, e: 1, d: { nonce: 'n'.repeat(43), codeVerifier: 'v'.repeat(43) } })
    assert.deepEqual(fitFlowState(serialize, '/orders?page=2'), { json: serialize('/orders?page=2'), returnUrl: '/orders?page=2', shortened: false })
    assert.equal(fitFlowState(serialize, `/orders?q=${'x'.repeat(2000)}`).returnUrl, '/orders')
    assert.equal(fitFlowState(serialize, `/orders#${'x'.repeat(2000)}`).returnUrl, '/orders')
    assert.equal(fitFlowState(serialize, `/${'p'.repeat(2000)}?q=1`).returnUrl, '/')
    // JSON escaping counts: 400 quotes are 800 bytes once escaped.
    assert.equal(fitFlowState(serialize, `/a?q=${'"'.repeat(400)}`).returnUrl, '/a')
    assert.throws(() => fitFlowState(() => 'x'.repeat(MAX_FLOW_STATE_BYTES + 1), '/'), RangeError)
  })

  test('the budget: four slots of under 1,000 bytes each, all together under half of nginx\'s 8 KB header line', () => {
    assert.equal(CORRELATION_SLOTS, 4)
    assert.ok(MAX_CORRELATION_BYTES < 4096, String(MAX_CORRELATION_BYTES))
  })
})

describe('the previous session a sign-in ends', () => {
  test('the id sealed at the challenge, unless the callback carried that same session (signIn ends it)', () => {
    assert.equal(previousSessionToEnd('s-1', undefined), 's-1')
    assert.equal(previousSessionToEnd('s-1', 's-2'), 's-1')
    assert.equal(previousSessionToEnd('s-1', 's-1'), undefined)
    assert.equal(previousSessionToEnd(undefined, 's-2'), undefined)
    assert.equal(previousSessionToEnd('', undefined), undefined)
  })
})
