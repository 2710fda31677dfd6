/**
 * Several instances behind a balancer: two apps with the same keys and one real redis-server, each
 * with its own Redis connections (as two processes have). A publication on A has reached B when it
 * resolves (Redis may answer PUBLISH before it writes the subscribers' copies). A session signed in on A works on B; a
 * logout on B refuses the old cookie on A within a second; a SAML2 response and an OAuth-style
 * callback accepted by A are refused when replayed to B; "sign out everywhere" on A reaches B.
 * Redis lost while running: requests that need it answer 503 (never 5xx otherwise, never signed
 * in without verification); after Redis is back the apps recover without a restart.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { antiforgeryFor, claim, signIn, standardUser, twoInstancesForSuite, type TestApp } from '../helpers/app.js'
import { RedisServer } from '../helpers/redis-server.js'
import { waitFor } from '../helpers/wait.js'
import { registerTestProvider, replayCallback, TEST_PROVIDER, TEST_PROVIDER_CALLBACK } from '../helpers/test-provider.js'
import { postToAcs, SP_ENTITY_ID, startSaml2SignIn, waitForSaml2 } from '../helpers/saml2/app.js'
import { TestIdentityProvider } from '../helpers/saml2/identity-provider.js'

const API = '/api/application-information'
const server = new RedisServer()
const idp = new TestIdentityProvider()
const { a, b } = twoInstancesForSuite({
  start: async () => {
    await server.start()
    await idp.start()
    return {
      State: { Provider: 'Redis', Redis: { ConnectionString: server.connectionString, TimeoutMilliseconds: 300 } },
      Authentication: { Providers: { Saml2: { Enabled: true, EntityId: SP_ENTITY_ID, MetadataUrl: idp.metadataUrl } } }
    }
  },
  stop: async () => {
    await idp.stop()
    await server.dispose()
  }
}, {
  nodeEnv: 'development',
  configure: (built) => { registerTestProvider(built) },
  ready: async (instance) => { await waitForSaml2(instance.app) }
})

const status = async (app: TestApp, cookie: string): Promise<number> => (await app.app.inject({ url: API, headers: { cookie } })).statusCode

describe('two instances, one Redis', () => {
  test('a session signed in on A is readable on B, with every claim', async () => {
    const groups = Array.from({ length: 300 }, (_, index) => claim('application:group', `group-number-${String(index).padStart(3, '0')}-of-a-large-directory`))
    const cookie = await signIn(a.app, [...standardUser(), ...groups])
    assert.equal(await status(b, cookie), 200)
    const home = await b.app.inject({ url: '/', headers: { cookie } })
    assert.ok(home.body.includes('group-number-299-of-a-large-directory'))
  })

  test('a publication on A has reached B when it resolves (thirty in a row): a revocation is not overtaken by the next request', async () => {
    const received = new Set<string>()
    b.app.state.subscribe({ onInvalidate: (message) => { if (message.startsWith('test-only:')) received.add(message) }, onReset: () => {} })
    const missed: number[] = []
    for (let index = 0; index < 30; index++) {
      await a.app.state.publish(`test-only:${index}`)
      if (!received.has(`test-only:${index}`)) missed.push(index)
    }
    assert.deepEqual(missed, [])
  })

  test('logout on B: the old cookie is refused on A within a second', async () => {
    const cookie = await signIn(a.app, standardUser())
    assert.equal(await status(a, cookie), 200, 'A has it cached')
    const { token, cookie: withSecret } = await antiforgeryFor(b.app, cookie)
    const logout = await b.app.inject({ method: 'POST', url: '/Account/Logout', headers: { cookie: withSecret }, payload: { __RequestVerificationToken: token } })
    assert.equal(logout.statusCode, 302)
    const started = Date.now()
    await waitFor(async () => await status(a, cookie) === 401, 'A to refuse the cookie', 1000)
    assert.ok(Date.now() - started < 1000)
  })

  test('sign out everywhere on A ends the user\'s sessions cached on B', async () => {
    const subject = [claim('application:subject', 'roaming-user')]
    const first = await signIn(a.app, subject)
    const second = await signIn(b.app, subject)
    assert.equal(await status(b, first), 200)
    assert.equal(await status(b, second), 200)
    assert.equal(await a.app.session.revokeUser({ scheme: 'TestFlow', issuer: 'TestFlow', subject: 'roaming-user' }), 2)
    await waitFor(async () => await status(b, first) === 401 && await status(b, second) === 401, 'B to refuse both', 1000)
  })

  test('an OAuth-style callback accepted by A is refused when replayed to B (replay)', async () => {
    const { accepted, replayed } = await replayCallback(a.app, b.app)
    assert.equal(accepted.headers.location, '/')
    assert.equal(replayed.headers.location, '/Account/Login?failure=correlation')
    assert.equal(replayed.cookies.some((c) => c.name.endsWith('Web.Authentication') && c.value !== ''), false)
    assert.equal(b.logs.events('external.sign_in.failed').at(-1)?.failure, 'replay')
  })

  test('a SAML2 response accepted by A is refused when replayed to B', async () => {
    const flow = await startSaml2SignIn(a.app)
    const samlResponse = idp.buildResponse({ acsUrl: flow.request.acsUrl, audience: SP_ENTITY_ID, user: { nameId: 'ada@example.test', attributes: {} }, inResponseTo: flow.request.id })
    const accepted = await postToAcs(a.app, { SAMLResponse: samlResponse, RelayState: flow.relayState }, flow.cookie)
    assert.equal(accepted.headers.location, '/')
    const replayed = await postToAcs(b.app, { SAMLResponse: samlResponse, RelayState: flow.relayState }, flow.cookie)
    assert.notEqual(replayed.headers.location, '/')
    assert.equal(replayed.cookies.some((c) => c.name.endsWith('Web.Authentication') && c.value !== ''), false)
    assert.equal(b.logs.events('external.sign_in.failed').at(-1)?.failure, 'replay')
    // Without the flow (an unsolicited replay) the assertion id record refuses it as well.
    const unsolicited = await postToAcs(b.app, { SAMLResponse: samlResponse })
    assert.equal(unsolicited.cookies.some((c) => c.name.endsWith('Web.Authentication') && c.value !== ''), false)
  })
})

describe('Redis lost while running', () => {
  test('authenticated requests answer 503 (problem+json or page), anonymous pages still work, readiness names the store; all recover after Redis is back', async () => {
    const cookie = await signIn(a.app, standardUser())
    assert.equal(await status(a, cookie), 200)
    await server.kill()
    await waitFor(() => !a.app.state.status().available, 'A to notice', 5000)

    const api = await a.app.inject({ url: API, headers: { cookie, accept: 'application/json' } })
    assert.equal(api.statusCode, 503)
    assert.equal(api.json().code, 'APP_ERR_STATE_UNAVAILABLE')
    assert.equal(api.headers['retry-after'], '10')
    const page = await a.app.inject({ url: '/', headers: { cookie, accept: 'text/html' } })
    assert.equal(page.statusCode, 503)
    assert.ok(!page.body.includes(server.socket), 'the connection string is not shown')
    assert.equal((await a.app.inject({ url: '/Account/Login' })).statusCode, 200)
    assert.equal((await a.app.inject({ url: '/health/live' })).statusCode, 200)
    const ready = await a.app.inject({ url: '/health/ready' })
    assert.equal(ready.statusCode, 503)
    assert.equal(ready.json().checks.state.status, 'Unhealthy')
    // Starting a sign-in writes nothing on the server (issue 21); completing one needs the store.
    const challenge = await a.app.inject({ url: `/External/Challenge?provider=${TEST_PROVIDER}` })
    assert.equal(challenge.statusCode, 302, 'a challenge needs no store')
    const flow = challenge.cookies[0]!
    const state = new URL(String(challenge.headers.location)).searchParams.get('state') ?? ''
    const callback = await a.app.inject({ url: `${TEST_PROVIDER_CALLBACK}?state=${state}`, headers: { cookie: `${flow.name}=${flow.value}` } })
    assert.equal(callback.statusCode, 503, 'no sign-in completes without the store')
    assert.ok(!a.logs.text().includes(server.socket), 'the connection string is never logged')

    await server.start()
    await waitFor(() => a.app.state.status().available && b.app.state.status().available, 'both instances to reconnect', 15_000)
    assert.equal((await a.app.inject({ url: '/health/ready' })).statusCode, 200)
    // The restarted Redis kept nothing: the old cookie is anonymous, a new sign-in works everywhere.
    assert.equal(await status(a, cookie), 401)
    const fresh = await signIn(a.app, standardUser())
    assert.equal(await status(b, fresh), 200)
  })
})
