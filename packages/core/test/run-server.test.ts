/**
 * The process entry (src/server.ts) over real HTTP: invalid configuration exits 1 before
 * listening without printing a secret; a valid start logs one listening line, answers real
 * requests, and on SIGTERM fails readiness, serves through the shutdown delay, finishes the
 * in-flight request and exits 0.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import { EXPECTED_SENTENCES, INVALID_WITH_PLANTED_SECRET, PLANTED_SECRET } from './helpers/planted-secret.js'
import { cleanEnv, jsonLines, runEntryPoint, type Running } from './helpers/process.js'

const KEY = Buffer.alloc(32, 11).toString('base64')
const LISTENING = /^Server listening at (http:\/\/127\.0\.0\.1:\d+)$/

describe('server process: invalid configuration', () => {
  // The three processes start together (each spends most of its time loading), then are checked one by one.
  let planted: Running
  let silent: Running
  let badPort: Running
  before(() => {
    planted = runEntryPoint('src/server.ts', cleanEnv({ ...INVALID_WITH_PLANTED_SECRET, PORT: '0' }))
    silent = runEntryPoint('src/server.ts', cleanEnv({ ...INVALID_WITH_PLANTED_SECRET, ProjectTemplate__Logging__Level: 'silent', PORT: '0' }))
    badPort = runEntryPoint('src/server.ts', cleanEnv({ PORT: 'eighty', ProjectTemplate__DataProtection__Keys__0: KEY }))
  })
  after(() => { for (const run of [planted, silent, badPort]) run.kill() })

  test('exits 1 with one structured error listing each sentence, never listens, never prints the planted secret', async () => {
    const run = planted
    assert.equal(await run.exited(), 1)
    const records = jsonLines(run.stdout())
    const invalid = records.filter((record) => record.event === 'configuration.invalid')
    assert.equal(invalid.length, 1)
    assert.deepEqual(invalid[0]?.errors, EXPECTED_SENTENCES)
    assert.equal(invalid[0]?.msg, 'configuration is invalid; the application will not start')
    assert.ok(!records.some((record) => typeof record.msg === 'string' && record.msg.startsWith('Server listening')))
    assert.ok(!run.stdout().includes(PLANTED_SECRET), 'planted secret in stdout')
    assert.ok(!run.stderr().includes(PLANTED_SECRET), 'planted secret in stderr')
  })

  test('Logging:Level silent does not hide the startup failure', async () => {
    const run = silent
    assert.equal(await run.exited(), 1)
    const invalid = jsonLines(run.stdout()).filter((record) => record.event === 'configuration.invalid')
    assert.equal(invalid.length, 1)
    assert.deepEqual(invalid[0]?.errors, EXPECTED_SENTENCES)
    assert.ok(!run.stdout().includes(PLANTED_SECRET))
  })

  test('an invalid PORT exits 1 naming PORT', async () => {
    const run = badPort
    assert.equal(await run.exited(), 1)
    const invalid = jsonLines(run.stdout()).filter((record) => record.event === 'configuration.invalid')
    assert.deepEqual(invalid.map((record) => record.errors), [['PORT must be an integer from 0 to 65535.']])
  })
})

describe('server process: real HTTP', () => {
  let run: Running
  let origin: string

  before(async () => {
    run = runEntryPoint('src/server.ts', cleanEnv({ HOST: '127.0.0.1', PORT: '0', ProjectTemplate__DataProtection__Keys__0: KEY, ProjectTemplate__Hosting__ShutdownDelaySeconds: '1' }))
    const line = await run.waitForLine((record) => typeof record.msg === 'string' && LISTENING.test(record.msg))
    origin = LISTENING.exec(String(line.msg))?.[1] ?? ''
  })
  after(() => { run.kill() })

  test('logs exactly one listening line and the enabled providers by name only', () => {
    const records = jsonLines(run.stdout())
    assert.equal(records.filter((record) => typeof record.msg === 'string' && LISTENING.test(record.msg)).length, 1)
    assert.deepEqual(records.filter((record) => record.event === 'authentication.providers').map((record) => record.enabled), [[]])
  })

  test('an anonymous browser request to / is redirected to the login page', async () => {
    const response = await fetch(`${origin}/`, { redirect: 'manual', signal: AbortSignal.timeout(5000) })
    assert.equal(response.status, 302)
    assert.equal(response.headers.get('location'), '/Account/Login?ReturnUrl=%2F')
  })

  test('the login page states that no provider is configured', async () => {
    const response = await fetch(`${origin}/Account/Login?ReturnUrl=%2F`, { signal: AbortSignal.timeout(5000) })
    assert.equal(response.status, 200)
    assert.match(await response.text(), /No sign-in provider is configured for this application\./)
  })

  test('the live probe answers JSON anonymously', async () => {
    const response = await fetch(`${origin}/health/live`, { signal: AbortSignal.timeout(5000) })
    assert.equal(response.status, 200)
    assert.deepEqual(await response.json(), { status: 'Healthy' })
  })

  test('an API request without a session gets 401 problem+json', async () => {
    const response = await fetch(`${origin}/api/application-information`, { signal: AbortSignal.timeout(5000) })
    assert.equal(response.status, 401)
    assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8')
  })

  test('SIGTERM fails readiness first, keeps serving for the shutdown delay, lets the in-flight request finish, then exits 0', async () => {
    const { port } = new URL(origin)
    const socket: Socket = connect(Number(port), '127.0.0.1')
    let received = ''
    socket.on('data', (chunk: Buffer) => { received += chunk.toString('utf8') })
    socket.on('error', () => {})
    await new Promise<void>((resolve) => socket.once('connect', () => { resolve() }))
    // Headers complete, body half sent: the request is in flight when the signal arrives.
    socket.write('POST /api/in-flight HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{"a":')
    // A request on another connection that completes after this write shows the server has read it.
    await new Promise((resolve) => setTimeout(resolve, 100))
    assert.equal((await fetch(`${origin}/health/live`, { signal: AbortSignal.timeout(5000) })).status, 200)
    run.child.kill('SIGTERM')
    await run.waitForLine((record) => record.event === 'server.draining', 5000)
    // The shutdown delay: readiness fails first (503, Retry-After) while everything else is served.
    const ready = await fetch(`${origin}/health/ready`, { signal: AbortSignal.timeout(5000) })
    assert.equal(ready.status, 503)
    assert.equal(ready.headers.get('retry-after'), '5')
    assert.deepEqual((await ready.json() as { checks: { hosting: unknown } }).checks.hosting, { status: 'Unhealthy', reason: 'draining' })
    assert.equal((await fetch(`${origin}/Account/Login`, { signal: AbortSignal.timeout(5000) })).status, 200, 'still serving during the delay')
    assert.ok(!jsonLines(run.stdout()).some((record) => record.event === 'server.closing'), 'not closing before the delay')
    await run.waitForLine((record) => record.event === 'server.closing', 5000)
    socket.write('"123456789012"}')
    // Bounded below the app's own 20 s drain timeout, which would exit 1.
    assert.equal(await run.exited(8000), 0)
    socket.destroy()
    assert.match(received, /^HTTP\/1\.1 401 Unauthorized\r\n/)
    const records = jsonLines(run.stdout())
    const completed = records.filter((record) => record.event === 'request.completed' && record.path === '/api/in-flight')
    assert.equal(completed.length, 1)
    assert.ok(records.some((record) => record.event === 'server.closed'))
  })
})
