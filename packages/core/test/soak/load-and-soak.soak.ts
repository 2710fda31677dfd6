/**
 * Load and soak (npm run test:security): mixed traffic against the real server over loopback for
 * a bounded time at a concurrency that saturates the machine — authenticated API calls, anonymous
 * challenges, logins through the test IdP, logouts, tampered cookies, static files. Passes with
 * zero 5xx, zero unexpected statuses, no unhandled rejection, and resident memory back within 10%
 * of its post-warm-up level plus what the embedded state store legitimately keeps (sessions live
 * for their idle lifetime, completed-flow replay records for 10 minutes: the faster the machine,
 * the more logins and the more records; each accounted character is allowed 3 bytes for the maps
 * and string headers around it). Figures are printed for docs/security/verification.md.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { once } from 'node:events'
import { APP_ROOT, CORE_ROOT } from '../helpers/app.js'
import { antiforgeryTokenIn } from '../helpers/cookies.js'

const DURATION_MS = Number(process.env.SOAK_SECONDS ?? 60) * 1000
const WARMUP_MS = 10_000
const CONCURRENCY = 32

const rssOf = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((entry) => entry.startsWith('VmRSS:')) ?? ''
  return Number(/(\d+)/.exec(line)?.[1] ?? 0) * 1024
}
const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

interface Tally { requests: number, byScenario: Record<string, number>, unexpected: string[], serverErrors: number }

function cookiesOf (response: Response): string {
  return response.headers.getSetCookie().map((line) => line.split(';')[0] ?? '').filter((pair) => !pair.endsWith('=')).join('; ')
}

/** Every request is bounded on its own (a shared signal would collect one listener per request). */
const REQUEST_TIMEOUT_MS = 10_000

async function scenario (origin: string, kind: number, tally: Tally): Promise<void> {
  const expect = (name: string, response: Response, statuses: number[]): void => {
    tally.requests++
    tally.byScenario[name] = (tally.byScenario[name] ?? 0) + 1
    if (response.status >= 500) tally.serverErrors++
    if (!statuses.includes(response.status) && tally.unexpected.length < 20) tally.unexpected.push(`${name}: ${response.status}`)
  }
  const get = async (path: string, headers: Record<string, string> = {}): Promise<Response> => {
    const response = await fetch(`${origin}${path}`, { redirect: 'manual', headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
    await response.arrayBuffer()
    return response
  }
  const login = async (): Promise<string> => {
    const challenge = await get('/External/Challenge?provider=TestIdP&returnUrl=%2Fapi%2Fapplication-information')
    expect('challenge', challenge, [302])
    const state = new URL(challenge.headers.get('location') ?? 'https://x.invalid/').searchParams.get('state') ?? ''
    const callback = await get(`/signin-testidp?state=${state}&sub=soak-user`, { cookie: cookiesOf(challenge) })
    expect('login', callback, [302])
    return cookiesOf(callback)
  }
  switch (kind % 6) {
    case 0: {
      const session = await login()
      for (let index = 0; index < 5; index++) expect('api', await get('/api/application-information', { cookie: session, accept: 'application/json' }), [200])
      return
    }
    case 1: expect('anonymous', await get('/'), [302]); expect('anonymous-json', await get('/api/application-information'), [401]); return
    case 2: {
      const session = await login()
      const home = await get('/', { cookie: session })
      expect('home', home, [200])
      const page = await fetch(`${origin}/`, { headers: { cookie: session }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
      const token = antiforgeryTokenIn(await page.text()) ?? ''
      const cookie = `${session}; ${cookiesOf(page)}`
      const logout = await fetch(`${origin}/Account/Logout`, {
        method: 'POST', redirect: 'manual', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS), headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: `__RequestVerificationToken=${encodeURIComponent(token)}`
      })
      await logout.arrayBuffer()
      expect('logout', logout, [302])
      return
    }
    case 3: {
      const session = await login()
      const tampered = session.replace(/=(.)/, (_match, first: string) => `=${first === 'A' ? 'B' : 'A'}`)
      expect('tampered', await get('/api/application-information', { cookie: tampered }), [401])
      return
    }
    case 4: expect('static', await get('/css/site.css'), [200]); expect('health', await get('/health/live'), [200]); return
    default: expect('login-page', await get('/Account/Login?ReturnUrl=%2Forders'), [200])
  }
}

test('mixed load for a bounded time: no 5xx, no unexpected status, memory settles', { timeout: DURATION_MS + WARMUP_MS + 90_000 }, async () => {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', join(CORE_ROOT, 'test/soak/soak-server.ts')], {
    cwd: APP_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_ENV: 'production' }
  })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  let stdout = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  /** The store's accounted characters from the server's latest SIGUSR2 report. */
  const storeCharacters = (): number => {
    const line = stdout.split('\n').filter((entry) => entry.includes('storeCharacters')).at(-1)
    return line === undefined ? 0 : (JSON.parse(line) as { storeCharacters: number }).storeCharacters
  }
  try {
    const [first] = await Promise.race([
      once(child.stdout, 'data') as Promise<[Buffer]>,
      sleep(30_000).then(() => { throw new Error('soak server did not start') })
    ])
    const origin = `http://127.0.0.1:${(JSON.parse(first.toString().split('\n')[0] ?? '{}') as { port: number }).port}`
    const pid = child.pid ?? 0

    const run = async (ms: number): Promise<Tally> => {
      const tally: Tally = { requests: 0, byScenario: {}, unexpected: [], serverErrors: 0 }
      const deadline = Date.now() + ms
      let next = 0
      await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
        while (Date.now() < deadline) {
          await scenario(origin, next++, tally)
        }
      }))
      return tally
    }

    await run(WARMUP_MS)
    child.kill('SIGUSR2'); await sleep(2_000)
    const baseline = rssOf(pid)
    const baselineStore = storeCharacters()
    const started = Date.now()
    const tally = await run(DURATION_MS)
    const seconds = (Date.now() - started) / 1000
    const peak = rssOf(pid)
    await sleep(3_000); child.kill('SIGUSR2'); await sleep(2_000)
    const settled = rssOf(pid)
    const storeGrowth = Math.max(0, storeCharacters() - baselineStore)
    const summary = {
      seconds: Math.round(seconds),
      concurrency: CONCURRENCY,
      requests: tally.requests,
      requestsPerSecond: Math.round(tally.requests / seconds),
      serverErrors: tally.serverErrors,
      unexpected: tally.unexpected,
      byScenario: tally.byScenario,
      rssMiB: { afterWarmup: +(baseline / 2 ** 20).toFixed(1), endOfLoad: +(peak / 2 ** 20).toFixed(1), settled: +(settled / 2 ** 20).toFixed(1) },
      storeGrowthMiB: +(storeGrowth / 2 ** 20).toFixed(1)
    }
    process.stdout.write(`# soak summary ${JSON.stringify(summary)}\n`)
    assert.equal(tally.serverErrors, 0)
    assert.deepEqual(tally.unexpected, [])
    assert.ok(tally.requests > 1000, 'the load actually ran')
    assert.ok(stdout.includes('storeCharacters'), 'the server reported its store')
    assert.ok(settled <= baseline * 1.10 + storeGrowth * 3, `RSS settled at ${summary.rssMiB.settled} MiB vs ${summary.rssMiB.afterWarmup} MiB after warm-up (the store grew by ${summary.storeGrowthMiB} M characters)`)
  } finally {
    child.kill('SIGTERM')
    const exited = await Promise.race([once(child, 'exit').then(([code]) => code as number | null), sleep(10_000).then(() => 'timeout')])
    if (exited === 'timeout') child.kill('SIGKILL')
    assert.doesNotMatch(stderr, /unhandledRejection|uncaughtException/)
    assert.ok(exited === 0 || exited === 'timeout' || exited === null, `soak server exit ${String(exited)}`)
  }
})
