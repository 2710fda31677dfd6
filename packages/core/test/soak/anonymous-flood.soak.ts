/**
 * One anonymous client floods the sign-in entry points at full speed (npm run test:security;
 * issue 21, "Done means"): challenges, anonymous page views under DefaultChallengeScheme Saml2 and
 * unsolicited SAML2 posts under RestartUnsolicitedSignIn, against the app listening on loopback
 * with the Redis state store and a real SAML test IdP. Bounded: three autocannon runs of at most
 * 5,000 requests and 15 s each. Passes when, in the same run:
 * - every flood request got its redirect to the IdP (no 503, no 5xx);
 * - a legitimate SAML2 sign-in made during the flood succeeds at once;
 * - Redis holds only what that one sign-in wrote (its session, index and replay records), and its
 *   memory did not grow with the flood.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { buildTestApp } from '../helpers/app.js'
import { RedisServer } from '../helpers/redis-server.js'
import { postToAcs, setsSessionCookie, SP_ENTITY_ID, startSaml2SignIn, waitForSaml2 } from '../helpers/saml2/app.js'
import { TestIdentityProvider } from '../helpers/saml2/identity-provider.js'

/** The fields of autocannon's result read here (the package ships no types). */
interface FloodResult { requests: { total: number }, non2xx: number, errors: number, timeouts: number, '3xx': number }
const autocannon = createRequire(import.meta.url)('autocannon') as (options: Record<string, unknown>) => Promise<FloodResult>

const PER_RUN = 5_000
const SECONDS = 15

function redisInfo (redis: RedisServer): { keys: number, usedMemory: number } {
  const run = (...args: string[]): string => spawnSync('redis-cli', ['-s', redis.socket, ...args], { encoding: 'utf8', timeout: 5_000 }).stdout
  const usedMemory = Number(/used_memory:(\d+)/.exec(run('info', 'memory'))?.[1])
  return { keys: Number(run('dbsize').trim()), usedMemory }
}

test('a flood of challenges, anonymous pages and unsolicited SAML2 posts writes nothing to Redis and a real sign-in succeeds meanwhile', { timeout: 120_000 }, async () => {
  const redis = new RedisServer()
  const idp = new TestIdentityProvider()
  await redis.start()
  await idp.start()
  const subject = await buildTestApp({
    nodeEnv: 'development',
    testSignIn: false,
    settings: {
      Logging: { Level: 'warn' },
      // What is measured is what the flood writes to Redis besides the limits' counters.
      RateLimits: { Enabled: false },
      Authentication: {
        DefaultChallengeScheme: 'Saml2',
        Providers: { Saml2: { Enabled: true, EntityId: SP_ENTITY_ID, MetadataUrl: idp.metadataUrl, RestartUnsolicitedSignIn: true } }
      },
      State: { Provider: 'Redis', Redis: { ConnectionString: redis.connectionString } }
    }
  })
  try {
    await waitForSaml2(subject.app)
    await subject.app.listen({ host: '127.0.0.1', port: 0 })
    const origin = `http://127.0.0.1:${(subject.app.server.address() as AddressInfo).port}`
    const before = redisInfo(redis)

    const flood = (path: string, init: { method?: 'GET' | 'POST', body?: string, headers?: Record<string, string> } = {}): Promise<FloodResult> =>
      autocannon({ url: `${origin}${path}`, connections: 8, amount: PER_RUN, duration: SECONDS, ...init })
    const unsolicited = new URLSearchParams({ SAMLResponse: idp.buildResponse({ acsUrl: `${origin}/Saml2/Acs`, audience: SP_ENTITY_ID, user: { nameId: 'mallory@example.test', attributes: {} } }) }).toString()
    const runs = Promise.all([
      flood('/External/Challenge?provider=Saml2&returnUrl=%2Forders'),
      flood('/', { headers: { accept: 'text/html' } }),
      flood('/Saml2/Acs', { method: 'POST', body: unsolicited, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    ])

    // Meanwhile, a real user signs in.
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    const started = Date.now()
    const flow = await startSaml2SignIn(subject.app)
    const answer = idp.buildResponse({ acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user: { nameId: 'ada@example.test', attributes: {} }, inResponseTo: flow.request.id })
    const signedIn = await postToAcs(subject.app, { SAMLResponse: answer, RelayState: flow.relayState }, flow.cookie)
    const signInMs = Date.now() - started
    assert.equal(signedIn.statusCode, 302)
    assert.equal(setsSessionCookie(signedIn), true, 'the legitimate sign-in succeeded during the flood')

    const results = await runs
    const after = redisInfo(redis)
    const summary = {
      requests: results.map((result) => result.requests.total),
      non2xx: results.map((result) => result.non2xx),
      errors: results.map((result) => result.errors + result.timeouts),
      signInMs,
      keys: [before.keys, after.keys],
      usedMemory: [before.usedMemory, after.usedMemory]
    }
    process.stdout.write(`# anonymous flood summary ${JSON.stringify(summary)}\n`)
    for (const result of results) {
      assert.ok(result.requests.total >= 500, 'each flood ran')
      assert.equal(result.errors + result.timeouts, 0)
      // Every answer is the 302 to the IdP (autocannon counts 3xx as non-2xx): nothing else.
      assert.equal(result.non2xx, result.requests.total)
      assert.equal(result['3xx'], result.requests.total)
    }
    assert.ok(after.keys - before.keys <= 4, `Redis keys ${before.keys} -> ${after.keys}: only the one sign-in's records`)
    assert.ok(after.usedMemory - before.usedMemory < 512 * 1024, `Redis memory ${before.usedMemory} -> ${after.usedMemory}`)
  } finally {
    await subject.app.close()
    await idp.stop()
    await redis.dispose()
  }
})
