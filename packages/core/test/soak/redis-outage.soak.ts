/**
 * Redis killed during a bounded load run (npm run test:security). The real app as its own process
 * with the Redis state store, mixed traffic at a fixed concurrency; redis-server is SIGKILLed, kept
 * down, then started again (empty, as after a crash without persistence). Passes when:
 * - no status >= 500 other than the documented 503 (problem+json APP_ERR_STATE_UNAVAILABLE with
 *   Retry-After, the same as a page for browsers, or /health/ready naming the state store);
 * - pages that need no state (login page, static files, liveness, anonymous API calls) never fail;
 * - the outage was seen (some 503s), and afterwards the app recovers by itself: readiness 200, a new
 *   sign-in and its API calls succeed, without restarting the app.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { startSoakServer } from '../helpers/process.js'
import { RedisServer } from '../helpers/redis-server.js'
import { waitFor } from '../helpers/wait.js'

const CONCURRENCY = 16
const PHASE_MS = 3_000
const REQUEST_TIMEOUT_MS = 10_000
const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

interface Tally { requests: number, unavailable: number, byStatus: Record<string, number>, unexpected: string[] }

function cookiesOf (response: Response): string {
  return response.headers.getSetCookie().map((line) => line.split(';')[0] ?? '').filter((pair) => !pair.endsWith('=')).join('; ')
}

/** Requests a path and checks the answer: one of `statuses`; a 503 must be the documented one. */
async function request (origin: string, name: string, path: string, statuses: number[], tally: Tally, init: { cookie?: string, accept?: string, method?: string, body?: string } = {}): Promise<Response & { text: string }> {
  const headers: Record<string, string> = { accept: init.accept ?? 'text/html' }
  if (init.cookie !== undefined && init.cookie !== '') headers.cookie = init.cookie
  if (init.body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded'
  const response = await fetch(`${origin}${path}`, { method: init.method ?? 'GET', redirect: 'manual', headers, body: init.body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
  const text = await response.text()
  tally.requests++
  tally.byStatus[`${name} ${response.status}`] = (tally.byStatus[`${name} ${response.status}`] ?? 0) + 1
  const note = (why: string): void => { if (tally.unexpected.length < 20) tally.unexpected.push(`${name}: ${response.status} ${why}`) }
  if (!statuses.includes(response.status)) note('not allowed here')
  if (response.status === 503) {
    tally.unavailable++
    if (path === '/health/ready') {
      if (!text.includes('"state":{"status":"Unhealthy"')) note('readiness does not name the state store')
    } else if (response.headers.get('retry-after') !== '10') {
      note('without Retry-After')
    } else if (init.accept === 'application/json' && !text.includes('"code":"APP_ERR_STATE_UNAVAILABLE"')) {
      note('problem without the state code')
    }
  }
  return Object.assign(response, { text })
}

async function signIn (origin: string, tally: Tally): Promise<string | undefined> {
  const challenge = await request(origin, 'challenge', '/External/Challenge?provider=TestIdP&returnUrl=%2F', [302, 503], tally)
  if (challenge.status !== 302) return undefined
  const state = new URL(challenge.headers.get('location') ?? 'https://x.invalid/').searchParams.get('state') ?? ''
  // 302 to / (signed in) or to the login page (the flow was lost with the store), or 503.
  const callback = await request(origin, 'callback', `/signin-testidp?state=${state}&sub=outage-user`, [302, 503], tally, { cookie: cookiesOf(challenge) })
  return callback.status === 302 && callback.headers.get('location') === '/' ? cookiesOf(callback) : undefined
}

async function scenario (origin: string, kind: number, tally: Tally): Promise<void> {
  switch (kind % 4) {
    case 0: {
      const session = await signIn(origin, tally)
      if (session === undefined) return
      for (let index = 0; index < 4; index++) await request(origin, 'api', '/api/application-information', [200, 401, 503], tally, { cookie: session, accept: 'application/json' })
      const home = await request(origin, 'home', '/', [200, 302, 503], tally, { cookie: session })
      const token = /name="__RequestVerificationToken" value="([^"]+)"/.exec(home.text)?.[1]
      if (token === undefined) return
      await request(origin, 'logout', '/Account/Logout', [302, 400, 503], tally, { method: 'POST', cookie: `${session}; ${cookiesOf(home)}`, body: `__RequestVerificationToken=${encodeURIComponent(token)}` })
      return
    }
    case 1:
      await request(origin, 'anonymous-json', '/api/application-information', [401], tally, { accept: 'application/json' })
      await request(origin, 'login-page', '/Account/Login?ReturnUrl=%2Forders', [200], tally)
      return
    case 2:
      await request(origin, 'static', '/css/site.css', [200], tally)
      await request(origin, 'live', '/health/live', [200], tally)
      return
    default:
      await request(origin, 'ready', '/health/ready', [200, 503], tally)
  }
}

test('Redis killed and restarted under load: only the documented 503s, then recovery without an app restart', { timeout: 120_000 }, async () => {
  const redis = new RedisServer()
  await redis.start()
  const server = startSoakServer({ SOAK_REDIS: redis.connectionString })
  try {
    const origin = await server.ready(15_000)

    const tally: Tally = { requests: 0, unavailable: 0, byStatus: {}, unexpected: [] }
    const running = { stop: false }
    let next = 0
    const load = Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      // Bounded: the phases below end the loop; each request has its own timeout.
      for (let round = 0; !running.stop && round < 100_000; round++) await scenario(origin, next++, tally)
    }))
    await sleep(PHASE_MS)
    const beforeOutage = tally.requests
    await redis.kill()
    await sleep(PHASE_MS)
    await redis.start()
    await waitFor(async () => (await fetch(`${origin}/health/ready`, { signal: AbortSignal.timeout(5_000) })).status === 200, 'readiness to recover', 30_000)
    await sleep(PHASE_MS)
    running.stop = true
    await load

    process.stdout.write(`# redis outage summary ${JSON.stringify({ requests: tally.requests, beforeOutage, unavailable: tally.unavailable, byStatus: tally.byStatus })}\n`)
    assert.deepEqual(tally.unexpected, [])
    assert.ok(beforeOutage > 100, 'the load ran before the outage')
    assert.ok(tally.unavailable > 0, 'the outage was seen as 503s')
    const serverErrors = Object.entries(tally.byStatus).filter(([key]) => Number(key.split(' ').at(-1)) >= 500 && !key.endsWith(' 503'))
    assert.deepEqual(serverErrors, [])

    // Recovered by itself: a new sign-in works and its session is readable.
    const after: Tally = { requests: 0, unavailable: 0, byStatus: {}, unexpected: [] }
    const session = await signIn(origin, after)
    assert.ok(session !== undefined, `sign-in after recovery (${JSON.stringify(after.byStatus)})`)
    await request(origin, 'api', '/api/application-information', [200], after, { cookie: session, accept: 'application/json' })
    assert.deepEqual(after.unexpected, [])
    assert.ok(!server.stdout().includes(redis.socket) && !server.stderr().includes(redis.socket), 'the connection string is never logged')
  } finally {
    await server.stop()
    await redis.dispose()
    assert.doesNotMatch(server.stderr(), /unhandledRejection|uncaughtException/)
  }
})
