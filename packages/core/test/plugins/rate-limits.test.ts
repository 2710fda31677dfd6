/**
 * Per-client rate limits (issue 29, item 2). The client is the address Fastify resolves through
 * ForwardedHeaders:KnownProxies: behind the trusted proxy each X-Forwarded-For client has its own
 * count, while a client that is not a trusted proxy counts as itself whatever X-Forwarded-For it
 * sends; IPv6 clients count by /64. Over the limit: 429 APP_ERR_RATE_LIMITED with Retry-After, a
 * page saying when to retry or problem+json, one `rate_limit.exceeded` line. Routes outside the
 * groups are not limited. Two instances on one real Redis share the counts; the counter key
 * expires with its window and names no address.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { buildTestApp, twoInstancesForSuite, type TestApp } from '../helpers/app.js'
import { RedisServer } from '../helpers/redis-server.js'
import { EmbeddedStateStore, MAX_RATE_COUNTERS } from '../../src/state/embedded-store.js'

const PROXY = { ForwardedHeaders: { Enabled: true, KnownProxies: ['127.0.0.1'] } }
const CHALLENGE = '/External/Challenge?provider=Nope'

async function challenge (app: FastifyInstance, options: { forwardedFor?: string, remoteAddress?: string, accept?: string } = {}) {
  return await app.inject({
    url: CHALLENGE,
    remoteAddress: options.remoteAddress ?? '127.0.0.1',
    headers: { ...(options.forwardedFor === undefined ? {} : { 'x-forwarded-for': options.forwardedFor }), ...(options.accept === undefined ? {} : { accept: options.accept }) }
  })
}

describe('rate limits on the embedded store', () => {
  let subject: TestApp
  before(async () => {
    subject = await buildTestApp({ settings: { ...PROXY, RateLimits: { ChallengePerWindow: 3, WindowSeconds: 60 } } })
  })
  after(async () => { await subject?.app.close() })

  test('behind the trusted proxy: one client flooding is limited, another is not; 429 with Retry-After and a page saying when', async () => {
    for (let index = 0; index < 3; index++) assert.equal((await challenge(subject.app, { forwardedFor: '203.0.113.5' })).statusCode, 400)
    const limited = await challenge(subject.app, { forwardedFor: '203.0.113.5' })
    assert.equal(limited.statusCode, 429)
    const retryAfter = Number(limited.headers['retry-after'])
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${String(limited.headers['retry-after'])}`)
    assert.match(String(limited.headers['content-type']), /^text\/html/)
    assert.ok(limited.body.includes(`Too many requests from this address. Please try again in ${retryAfter} seconds.`))
    assert.equal((await challenge(subject.app, { forwardedFor: '203.0.113.6' })).statusCode, 400, 'another client behind the proxy is not limited')
    assert.equal((await challenge(subject.app, { forwardedFor: '203.0.113.6, 203.0.113.5' })).statusCode, 429, 'the address the trusted proxy saw decides')
  })

  test('JSON callers get problem+json with the code', async () => {
    const response = await challenge(subject.app, { forwardedFor: '203.0.113.5', accept: 'application/json' })
    assert.equal(response.statusCode, 429)
    assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
    const problem = response.json() as Record<string, unknown>
    assert.equal(problem.code, 'APP_ERR_RATE_LIMITED')
    assert.equal(problem.status, 429)
    assert.equal(problem.detail, `Too many requests from this address. Please try again in ${String(response.headers['retry-after'])} seconds.`)
  })

  test('a client that is not a trusted proxy counts as itself, whatever X-Forwarded-For it sends', async () => {
    for (let index = 0; index < 3; index++) assert.equal((await challenge(subject.app, { remoteAddress: '198.51.100.7', forwardedFor: `192.0.2.${index}` })).statusCode, 400)
    assert.equal((await challenge(subject.app, { remoteAddress: '198.51.100.7', forwardedFor: '192.0.2.99' })).statusCode, 429)
  })

  test('IPv6 clients count by their /64', async () => {
    for (let index = 1; index <= 3; index++) assert.equal((await challenge(subject.app, { forwardedFor: `2001:db8:1:2::${index}` })).statusCode, 400)
    assert.equal((await challenge(subject.app, { forwardedFor: '2001:db8:1:2:ffff::9' })).statusCode, 429)
    assert.equal((await challenge(subject.app, { forwardedFor: '2001:db8:1:3::1' })).statusCode, 400, 'another /64')
  })

  test('one rate_limit.exceeded line per client and window, without the address', () => {
    const lines = subject.logs.events('rate_limit.exceeded')
    assert.equal(lines.length, 3, 'three clients went over the limit')
    assert.deepEqual({ bucket: lines[0]?.bucket, level: lines[0]?.level }, { bucket: 'challenge', level: 40 })
    assert.equal(subject.logs.text().includes('203.0.113.5'), false)
  })

  test('routes outside the groups are not limited', async () => {
    for (let index = 0; index < 10; index++) {
      const response = await subject.app.inject({ url: '/Account/Login', headers: { 'x-forwarded-for': '203.0.113.5' } })
      assert.equal(response.statusCode, 200)
    }
  })
})

describe('RateLimits:Enabled false', () => {
  test('no limit at all', async (t) => {
    const subject = await buildTestApp({ settings: { ...PROXY, RateLimits: { Enabled: false, ChallengePerWindow: 1 } } })
    t.after(async () => { await subject.app.close() })
    for (let index = 0; index < 5; index++) assert.equal((await challenge(subject.app, { forwardedFor: '203.0.113.5' })).statusCode, 400)
  })
})

describe('embedded counters', () => {
  test('a window ends after its length and a new one starts', async () => {
    let now = 1_000_000
    const store = new EmbeddedStateStore({ maxEntries: { session: 1, index: 1, flow: 1, replay: 1, lock: 1 }, maxCharacters: 1000 }, () => now)
    assert.deepEqual(await store.increment('rate:challenge:a', 60_000), { count: 1, ttlMs: 60_000 })
    now += 59_000
    assert.deepEqual(await store.increment('rate:challenge:a', 60_000), { count: 2, ttlMs: 1000 })
    now += 1000
    assert.deepEqual(await store.increment('rate:challenge:a', 60_000), { count: 1, ttlMs: 60_000 })
  })

  test(`at most ${MAX_RATE_COUNTERS} counters: a flood of clients evicts the oldest window`, async () => {
    const store = new EmbeddedStateStore({ maxEntries: { session: 1, index: 1, flow: 1, replay: 1, lock: 1 }, maxCharacters: 1000 })
    await store.increment('rate:challenge:first', 60_000)
    await store.increment('rate:challenge:first', 60_000)
    for (let index = 0; index < MAX_RATE_COUNTERS; index++) await store.increment(`rate:challenge:${index}`, 60_000)
    assert.equal(store.rateCounters, MAX_RATE_COUNTERS)
    assert.equal((await store.increment('rate:challenge:first', 60_000)).count, 1, 'the oldest counter was evicted')
    assert.equal(store.characters, 0, 'counters are not stored records')
  })
})

describe('two instances sharing one Redis', () => {
  const server = new RedisServer()
  const { a, b } = twoInstancesForSuite({
    start: async () => {
      await server.start()
      return { ...PROXY, State: { Provider: 'Redis', Redis: { ConnectionString: server.connectionString, TimeoutMilliseconds: 500 } }, RateLimits: { ChallengePerWindow: 5, WindowSeconds: 30 } }
    },
    stop: async () => { await server.dispose() }
  })

  test('a flood from one client spread over both instances is limited at the shared count; another client is not', async () => {
    const statuses: number[] = []
    for (let index = 0; index < 8; index++) statuses.push((await challenge(index % 2 === 0 ? a.app : b.app, { forwardedFor: '203.0.113.5' })).statusCode)
    assert.deepEqual(statuses, [400, 400, 400, 400, 400, 429, 429, 429])
    assert.equal((await challenge(b.app, { forwardedFor: '203.0.113.6' })).statusCode, 400)
    assert.equal((await challenge(a.app, { forwardedFor: '203.0.113.6' })).statusCode, 400)
  })

  test('the counters expire with their window and name no address', () => {
    const keys = server.cli('--scan', '--pattern', 'ProjectTemplate:rate:*').split('\n').filter((key) => key !== '')
    assert.equal(keys.length, 2, keys.join(' '))
    for (const key of keys) {
      assert.match(key, /^ProjectTemplate:rate:challenge:[A-Za-z0-9_-]{22}$/)
      const ttl = Number(server.cli('pttl', key).trim())
      assert.ok(ttl > 0 && ttl <= 30_000, `PTTL ${ttl}`)
    }
    assert.deepEqual(keys.map((key) => server.cli('get', key).trim()).sort(), ['2', '8'], 'one count per client, over both instances')
  })
})
