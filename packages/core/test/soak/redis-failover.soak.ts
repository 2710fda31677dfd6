/**
 * Redis failovers under load (npm run test:security), measured: the real app as its own process on
 * Redis behind Sentinel (a primary, a replica, three sentinels) or on a Redis Cluster (three
 * primaries with a replica each), signed-in users calling the API at a fixed concurrency, while
 * - Sentinel: `SENTINEL FAILOVER` (the replica promoted on request);
 * - Sentinel: the primary SIGKILLed (the sentinels agree it is down, then promote the replica);
 * - Cluster: the primary that holds the invalidation channel SIGKILLed (its replica promoted).
 * Passes when nobody is signed out (every session signed in before the failover still answers 200
 * after it, and no request of a signed-in user answered 401), the only failures are the documented
 * 503s (APP_ERR_STATE_UNAVAILABLE with Retry-After), all of them inside one failover window, and
 * the app recovers by itself. Each run prints its figures (`# redis failover ...`), which
 * docs/scale-out.md records; no password appears in the app's output.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { startSoakServer } from '../helpers/process.js'
import { RedisClusterFixture, RedisSentinelFixture, type RedisNode } from '../helpers/redis-topologies.js'
import { waitFor } from '../helpers/wait.js'

const USERS = 16
const PHASE_MS = 2_000
/** The longest failover window accepted: Redis's own detection and promotion (1 s settings here) plus the app following it. */
const FAILOVER_WINDOW_LIMIT_MS = 15_000
const REQUEST_TIMEOUT_MS = 10_000
const PASSWORD = 'PLANTED-failover-soak-password-19'
const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

interface Outcome { readonly start: number, readonly end: number, readonly status: number, readonly ok: boolean, readonly note?: string }

function cookiesOf (response: Response): string {
  return response.headers.getSetCookie().map((line) => line.split(';')[0] ?? '').filter((pair) => !pair.endsWith('=')).join('; ')
}

async function signIn (origin: string, user: string): Promise<string> {
  const challenge = await fetch(`${origin}/External/Challenge?provider=TestIdP&returnUrl=%2F`, { redirect: 'manual', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
  assert.equal(challenge.status, 302)
  const state = new URL(challenge.headers.get('location') ?? 'https://x.invalid/').searchParams.get('state') ?? ''
  const callback = await fetch(`${origin}/signin-testidp?state=${state}&sub=${user}`, { redirect: 'manual', headers: { cookie: cookiesOf(challenge) }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
  assert.equal(callback.status, 302)
  assert.equal(callback.headers.get('location'), '/')
  return cookiesOf(callback)
}

/** A signed-in API call: 200, or the documented 503; anything else (401: signed out) is noted. */
async function call (origin: string, cookie: string): Promise<Outcome> {
  const start = Date.now()
  try {
    const response = await fetch(`${origin}/api/application-information`, { headers: { cookie, accept: 'application/json' }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
    const text = await response.text()
    const end = Date.now()
    if (response.status === 200) return { start, end, status: 200, ok: true }
    const documented = response.status === 503 && response.headers.get('retry-after') === '10' && text.includes('"code":"APP_ERR_STATE_UNAVAILABLE"')
    return { start, end, status: response.status, ok: false, ...(documented ? {} : { note: `${response.status} ${text.slice(0, 120)}` }) }
  } catch (error) {
    return { start, end: Date.now(), status: 0, ok: false, note: `no answer: ${(error as Error).name}` }
  }
}

interface Figures { requests: number, failed: number, windowMs: number, firstFailureAfterTriggerMs: number | null, switchedAfterMs: number, readyAgainAfterMs: number, requestsPerSecond: number }

async function underFailover (name: string, redisSettings: Record<string, unknown>, trigger: () => Promise<void>, newPrimary: () => RedisNode | undefined): Promise<Figures> {
  const server = startSoakServer({ SOAK_REDIS_SETTINGS: JSON.stringify(redisSettings) })
  try {
    const origin = await server.ready(20_000)
    const sessions: string[] = []
    for (let index = 0; index < USERS; index++) sessions.push(await signIn(origin, `${name}-user-${index}`))

    const outcomes: Outcome[] = []
    const running = { stop: false }
    const load = Promise.all(sessions.map(async (cookie) => {
      // Bounded: the phases below end the loop; each request has its own timeout.
      for (let round = 0; !running.stop && round < 1_000_000; round++) outcomes.push(await call(origin, cookie))
    }))
    await sleep(PHASE_MS)
    const triggeredAt = Date.now()
    await trigger()
    await waitFor(() => newPrimary() !== undefined, 'Redis to fail over', 30_000, 50)
    const switchedAfterMs = Date.now() - triggeredAt
    // The app has followed once its subscriber is on the new primary (sub=1, or ssub=1 for the cluster's sharded channel).
    await waitFor(() => /\bs?sub=1\b/.test(newPrimary()?.cli('client', 'list') ?? ''), 'the app to follow the new primary', 30_000, 50)
    await waitFor(async () => {
      const response = await fetch(`${origin}/health/ready`, { signal: AbortSignal.timeout(5_000) }).catch(() => undefined)
      return response?.status === 200 && outcomes.at(-1)?.ok === true
    }, 'the app to be ready and answering again', 60_000, 50)
    const readyAgainAfterMs = Date.now() - triggeredAt
    await sleep(PHASE_MS)
    running.stop = true
    await load

    const failures = outcomes.filter((outcome) => !outcome.ok)
    const windowMs = failures.length === 0 ? 0 : Math.max(...failures.map((outcome) => outcome.end)) - Math.min(...failures.map((outcome) => outcome.start))
    const spanMs = Math.max(...outcomes.map((outcome) => outcome.end)) - Math.min(...outcomes.map((outcome) => outcome.start))
    const figures: Figures = {
      requests: outcomes.length,
      failed: failures.length,
      windowMs,
      firstFailureAfterTriggerMs: failures.length === 0 ? null : Math.min(...failures.map((outcome) => outcome.start)) - triggeredAt,
      switchedAfterMs,
      readyAgainAfterMs,
      requestsPerSecond: Math.round(outcomes.length / (spanMs / 1000))
    }
    process.stdout.write(`# redis failover ${name} ${JSON.stringify(figures)}\n`)

    assert.deepEqual(failures.filter((outcome) => outcome.note !== undefined).map((outcome) => outcome.note).slice(0, 10), [], 'only the documented 503s')
    assert.equal(outcomes.filter((outcome) => outcome.status === 401).length, 0, 'nobody signed out')
    // Inside one bounded window after the trigger, and answered again after it. Not "before
    // readiness came back": after SENTINEL FAILOVER the old primary keeps accepting writes until
    // the sentinels demote it, a second or two after the promotion, and the app's requests to it
    // fail then (seen in CI: failures 2.1 s after the trigger, readiness back at 1.1 s).
    assert.ok(failures.every((outcome) => outcome.end >= triggeredAt), 'no failure before the failover')
    assert.ok(windowMs <= FAILOVER_WINDOW_LIMIT_MS, `the failures fall in one window of at most ${FAILOVER_WINDOW_LIMIT_MS} ms (${windowMs} ms)`)
    const lastFailureEnd = failures.length === 0 ? triggeredAt : Math.max(...failures.map((outcome) => outcome.end))
    assert.ok(outcomes.some((outcome) => outcome.ok && outcome.start > lastFailureEnd), 'requests succeed again after the window, without a restart')
    for (const cookie of sessions) {
      const after = await call(origin, cookie)
      assert.equal(after.status, 200, 'a session from before the failover still works after it')
    }
    assert.ok(!server.stdout().includes(PASSWORD) && !server.stderr().includes(PASSWORD), 'no password in the app\'s output')
    return figures
  } finally {
    await server.stop()
    assert.doesNotMatch(server.stderr(), /unhandledRejection|uncaughtException/)
  }
}

const sentinelSettings = (fixture: RedisSentinelFixture): Record<string, unknown> => ({
  Sentinel: { MasterName: fixture.masterName, Nodes: fixture.sentinelNodes, Password: PASSWORD, SentinelPassword: PASSWORD }
})

test('Sentinel: SENTINEL FAILOVER under load', { timeout: 120_000 }, async () => {
  const fixture = new RedisSentinelFixture({ password: PASSWORD, sentinelPassword: PASSWORD })
  try {
    await fixture.start()
    const primary = fixture.primaryPort()
    await underFailover('sentinel-forced', sentinelSettings(fixture), async () => { assert.equal(fixture.forceFailover(), 'OK') }, () => fixture.primaryPort() !== primary ? fixture.primary() : undefined)
  } finally {
    await fixture.dispose()
  }
})

test('Sentinel: the primary SIGKILLed under load', { timeout: 120_000 }, async () => {
  const fixture = new RedisSentinelFixture({ password: PASSWORD, sentinelPassword: PASSWORD })
  try {
    await fixture.start()
    const primary = fixture.primary()
    await underFailover('sentinel-kill', sentinelSettings(fixture), async () => { await primary.kill() }, () => fixture.primaryPort() !== primary.port ? fixture.primary() : undefined)
  } finally {
    await fixture.dispose()
  }
})

test('Cluster: the primary holding the invalidation channel SIGKILLed under load', { timeout: 120_000 }, async () => {
  const fixture = new RedisClusterFixture({ replicas: true, password: PASSWORD })
  try {
    await fixture.start()
    const victim = fixture.primaryOf('ProjectTemplate:invalidate')
    await underFailover('cluster-kill', { Cluster: { Nodes: fixture.seedNodes, Password: PASSWORD } }, async () => { await victim.kill() }, () => {
      try {
        const primary = fixture.primaryOf('ProjectTemplate:invalidate')
        return primary !== victim ? primary : undefined
      } catch { return undefined }
    })
  } finally {
    await fixture.dispose()
  }
})
