/**
 * Two real app processes (src/server.ts, as `npm start` runs it) with the same keys and one real
 * redis-server, behind a real HTTP balancer that keeps the Host header: a session signed in on A
 * through a real SAML2 IdP is used on B; a logout on B refuses the old cookie on A within a second;
 * a SAML2 response and an OAuth callback that A accepted are refused when replayed to B.
 * (test/state/multi-instance.test.ts covers the same with in-process apps, and Redis outages.)
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { settingsToEnv } from '../helpers/app.js'
import { Balancer, INSTANCE_HEADER } from '../helpers/balancer.js'
import { cleanEnv, runEntryPoint, type Running } from '../helpers/process.js'
import { RedisServer } from '../helpers/redis-server.js'
import { waitFor } from '../helpers/wait.js'
import { startVendorIdp, type VendorIdp } from '../helpers/providers/oauth-vendor-idp.js'
import { readAuthnRequest } from '../helpers/saml2/identity-provider.js'
import { TestIdentityProvider } from '../helpers/saml2/identity-provider.js'
import { Cookies } from '../helpers/cookies.js'

type Instance = 'A' | 'B'
const API = '/api/application-information'
const SP_ENTITY_ID = 'https://app.example.test/saml2'
const LISTENING = /^Server listening at http:\/\/127\.0\.0\.1:(\d+)$/
const VENDOR_SECRET = 'vendor-secret-multi-process-3f9a'

const redis = new RedisServer()
const samlIdp = new TestIdentityProvider()
const balancer = new Balancer()
const processes = new Map<Instance, Running>()
let vendorIdp: VendorIdp

interface Answer { readonly status: number, readonly location: string | undefined, readonly body: string }

/** One request through the balancer to `instance`; redirects are not followed. */
async function send (instance: Instance, path: string, cookies: Cookies, init: { method?: string, form?: Record<string, string>, accept?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = { accept: init.accept ?? 'text/html', [INSTANCE_HEADER]: instance }
  if (cookies.header !== '') headers.cookie = cookies.header
  let body: string | undefined
  if (init.form !== undefined) {
    body = new URLSearchParams(init.form).toString()
    headers['content-type'] = 'application/x-www-form-urlencoded'
  }
  const response = await fetch(new URL(path, balancer.origin), { method: init.method ?? 'GET', headers, body, redirect: 'manual', signal: AbortSignal.timeout(10_000) })
  cookies.store(response)
  return { status: response.status, location: response.headers.get('location') ?? undefined, body: await response.text() }
}

const logsOf = (instance: Instance): Array<Record<string, unknown>> =>
  (processes.get(instance)?.stdout() ?? '').split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>)

const failuresOn = (instance: Instance): unknown[] =>
  logsOf(instance).filter((record) => record.event === 'external.sign_in.failed').map((record) => record.failure)

/** Waits (bounded: log lines are written in batches) for `instance` to log a replay refused for `provider`. */
async function replayLogged (instance: Instance, provider: string): Promise<void> {
  await processes.get(instance)?.waitForLine((record) => record.event === 'external.sign_in.failed' && record.failure === 'replay' && record.provider === provider, 5000)
}

async function startInstance (name: Instance, keys: string): Promise<void> {
  const settings = {
    DataProtection: { Keys: [keys] },
    Hosting: { PublicOrigin: balancer.origin },
    State: { Provider: 'Redis', Redis: { ConnectionString: redis.connectionString } },
    Authentication: {
      Providers: {
        Saml2: { Enabled: true, EntityId: SP_ENTITY_ID, MetadataUrl: samlIdp.metadataUrl },
        VendorB: vendorIdp.settings('client-b', VENDOR_SECRET)
      }
    }
  }
  const run = runEntryPoint('src/server.ts', cleanEnv({ ...settingsToEnv(settings), NODE_ENV: 'development', HOST: '127.0.0.1', PORT: '0', NO_COLOR: '1' }))
  processes.set(name, run)
  const line = await run.waitForLine((record) => typeof record.msg === 'string' && LISTENING.test(record.msg), 60_000)
  balancer.add(name, Number(LISTENING.exec(String(line.msg))?.[1]))
}

before(async () => {
  await redis.start()
  await samlIdp.start()
  vendorIdp = await startVendorIdp({ sub: 'vendor-user-7', name: 'Vera Vendor', email: 'vera@example.test' })
  await balancer.listen()
  const keys = randomBytes(32).toString('base64')
  await Promise.all([startInstance('A', keys), startInstance('B', keys)])
  for (const instance of ['A', 'B'] as const) {
    await waitFor(async () => (await send(instance, '/health/ready', new Cookies())).status === 200, `instance ${instance} to be ready`, 30_000)
  }
})

after(async () => {
  for (const run of processes.values()) run.kill()
  await Promise.all([...processes.values()].map(async (run) => await run.exited(10_000).catch(() => undefined)))
  await balancer.close()
  await vendorIdp?.close()
  await samlIdp.stop()
  await redis.dispose()
})

/** A SAML2 sign-in on `instance`: the cookies before the ACS post, the posted form, and the answer. */
async function saml2SignIn (instance: Instance, nameId: string): Promise<{ before: string, form: Record<string, string>, cookies: Cookies, answer: Answer }> {
  const cookies = new Cookies()
  const challenge = await send(instance, '/External/Challenge?provider=Saml2&returnUrl=%2F', cookies)
  assert.equal(challenge.status, 302)
  const request = readAuthnRequest(challenge.location ?? '')
  assert.equal(request.acsUrl, `${balancer.origin}/Saml2/Acs`, 'the ACS URL is the balancer\'s public origin')
  const form = {
    SAMLResponse: samlIdp.buildResponse({ acsUrl: request.acsUrl, audience: SP_ENTITY_ID, user: { nameId, attributes: {} }, inResponseTo: request.id }),
    RelayState: request.relayState ?? ''
  }
  const before = cookies.header
  const answer = await send(instance, '/Saml2/Acs', cookies, { method: 'POST', form })
  return { before, form, cookies, answer }
}

describe('two app processes behind a balancer, one Redis', () => {
  test('signed in on A through SAML2, the session works on B', async () => {
    const { cookies, answer } = await saml2SignIn('A', 'ada@example.test')
    assert.equal(answer.location, '/', `A signed in (A failures: ${JSON.stringify(failuresOn('A'))})`)
    assert.ok(cookies.hasSession())
    assert.equal((await send('B', API, cookies, { accept: 'application/json' })).status, 200)
    const home = await send('B', '/', cookies)
    assert.equal(home.status, 200)
    assert.ok(home.body.includes('<td>application:subject</td><td>ada@example.test</td>'), 'B shows the principal A signed in')
  })

  test('logout on B: the old cookie is refused on A within a second', async () => {
    const { cookies } = await saml2SignIn('A', 'grace@example.test')
    const stolen = new Cookies(cookies.header)
    assert.equal((await send('A', API, stolen, { accept: 'application/json' })).status, 200, 'A has the session cached')
    const page = await send('B', '/', cookies)
    const token = /name="__RequestVerificationToken" value="([^"]+)"/.exec(page.body)?.[1]
    assert.ok(token !== undefined, 'the starter page on B carries an anti-forgery token')
    const logout = await send('B', '/Account/Logout', cookies, { method: 'POST', form: { __RequestVerificationToken: token } })
    assert.equal(logout.status, 302)
    assert.equal(cookies.hasSession(), false, 'B cleared the cookie')
    const started = Date.now()
    await waitFor(async () => (await send('A', API, new Cookies(stolen.header), { accept: 'application/json' })).status === 401, 'A to refuse the old cookie', 1000)
    assert.ok(Date.now() - started <= 1000)
  })

  test('a SAML2 response accepted by A is refused when replayed to B, with and without the correlation cookie', async () => {
    const { before, form, answer } = await saml2SignIn('A', 'replayed@example.test')
    assert.equal(answer.location, '/')
    const replay = new Cookies(before)
    const replayed = await send('B', '/Saml2/Acs', replay, { method: 'POST', form })
    assert.notEqual(replayed.location, '/')
    assert.equal(replay.hasSession(), false)
    const unsolicited = new Cookies()
    await send('B', '/Saml2/Acs', unsolicited, { method: 'POST', form: { SAMLResponse: form.SAMLResponse } })
    assert.equal(unsolicited.hasSession(), false)
    await replayLogged('B', 'Saml2')
  })

  test('an OAuth callback accepted by A is refused when replayed to B', async () => {
    const cookies = new Cookies()
    const challenge = await send('A', '/External/Challenge?provider=VendorB&returnUrl=%2F', cookies)
    assert.equal(challenge.status, 302)
    const authorize = await fetch(challenge.location ?? '', { redirect: 'manual', signal: AbortSignal.timeout(10_000) })
    await authorize.arrayBuffer()
    const callback = new URL(authorize.headers.get('location') ?? '')
    assert.equal(callback.origin, balancer.origin)
    const before = cookies.header
    const accepted = await send('A', callback.pathname + callback.search, cookies)
    assert.equal(accepted.location, '/', `A signed in (A failures: ${JSON.stringify(failuresOn('A'))})`)
    const tokenCalls = vendorIdp.tokenRequests.length
    const replay = new Cookies(before)
    const replayed = await send('B', callback.pathname + callback.search, replay)
    assert.equal(replayed.location, '/Account/Login?failure=correlation')
    assert.equal(replay.hasSession(), false)
    assert.equal(vendorIdp.tokenRequests.length, tokenCalls, 'B did not redeem the code again')
    await replayLogged('B', 'VendorB')
  })

  test('no log line of either process carries a SAML response, a code, a token, the client secret or a session cookie', () => {
    const text = [...processes.values()].map((run) => run.stdout() + run.stderr()).join('\n')
    const planted = [VENDOR_SECRET, ...vendorIdp.planted, ...samlIdp.issuedResponses.map((response) => response.slice(0, 60))]
    assert.deepEqual(planted.filter((value) => value.length >= 6 && text.includes(value)), [])
    assert.ok(!/ProjectTemplate\.Web\.Authentication=[^;\s"]{20}/.test(text), 'no session cookie value')
  })
})
