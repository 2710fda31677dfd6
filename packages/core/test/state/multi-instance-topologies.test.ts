/**
 * Two app instances with the same keys on Redis behind Sentinel, and on a Redis Cluster, each with
 * its own connections (as two processes have), configured through State:Redis:Sentinel and
 * State:Redis:Cluster: a session signed in on A works on B; a logout on B refuses the cookie on A
 * within a second (the invalidation over Sentinel's primary, or the cluster's sharded channel);
 * "sign out everywhere" on A ends sessions whose records live in different slots, also on B; a
 * callback accepted by A is refused when replayed to B. No password reaches the logs.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { antiforgeryFor, claim, signIn, standardUser, twoInstancesForSuite, type TestApp } from '../helpers/app.js'
import { RedisClusterFixture, RedisSentinelFixture } from '../helpers/redis-topologies.js'
import { registerTestProvider, replayCallback } from '../helpers/test-provider.js'
import { waitFor } from '../helpers/wait.js'

const API = '/api/application-information'
const PASSWORD = 'PLANTED-multi-instance-redis-password-8d'
const status = async (app: TestApp, cookie: string): Promise<number> => (await app.app.inject({ url: API, headers: { cookie } })).statusCode

type RedisSettings = Record<string, Record<string, string | string[]>>

function twoInstances (shape: string, start: () => Promise<RedisSettings>, stop: () => Promise<void>): void {
  describe(`two instances on ${shape}`, () => {
    const { a, b } = twoInstancesForSuite({
      start: async () => ({ State: { Provider: 'Redis', Redis: { ...await start(), TimeoutMilliseconds: 1000 } } }),
      stop
    }, { nodeEnv: 'development', configure: (built) => { registerTestProvider(built) }, storeReadyMs: 20_000 })

    test('a session signed in on A is readable on B; a logout on B refuses the cookie on A within a second', async () => {
      const cookie = await signIn(a.app, standardUser())
      assert.equal(await status(b, cookie), 200)
      assert.equal(await status(a, cookie), 200, 'A has it cached')
      const { token, cookie: withSecret } = await antiforgeryFor(b.app, cookie)
      const logout = await b.app.inject({ method: 'POST', url: '/Account/Logout', headers: { cookie: withSecret }, payload: { __RequestVerificationToken: token } })
      assert.equal(logout.statusCode, 302)
      await waitFor(async () => await status(a, cookie) === 401, 'A to refuse the cookie', 1000)
    })

    test('sign out everywhere on A ends the user\'s sessions (records in several slots) cached on B', async () => {
      const subject = [claim('application:subject', `roaming-${shape}`)]
      const sessions = [await signIn(a.app, subject), await signIn(b.app, subject), await signIn(a.app, subject), await signIn(b.app, subject)]
      for (const cookie of sessions) assert.equal(await status(b, cookie), 200)
      assert.equal(await a.app.session.revokeUser({ scheme: 'TestFlow', issuer: 'TestFlow', subject: `roaming-${shape}` }), 4)
      await waitFor(async () => (await Promise.all(sessions.map(async (cookie) => await status(b, cookie)))).every((code) => code === 401), 'B to refuse every session', 1000)
    })

    test('a callback accepted by A is refused when replayed to B', async () => {
      const { accepted, replayed } = await replayCallback(a.app, b.app)
      assert.equal(accepted.headers.location, '/')
      assert.equal(replayed.headers.location, '/Account/Login?failure=correlation')
      assert.equal(b.logs.events('external.sign_in.failed').at(-1)?.failure, 'replay')
      assert.ok(!a.logs.text().includes(PASSWORD) && !b.logs.text().includes(PASSWORD), 'no password in the logs')
    })
  })
}

const sentinel = new RedisSentinelFixture({ password: PASSWORD })
twoInstances('Sentinel', async () => {
  await sentinel.start()
  return { Sentinel: { MasterName: sentinel.masterName, Nodes: sentinel.sentinelNodes, Password: PASSWORD } }
}, async () => { await sentinel.dispose() })

const cluster = new RedisClusterFixture({ password: PASSWORD })
twoInstances('Cluster', async () => {
  await cluster.start()
  return { Cluster: { Nodes: cluster.seedNodes, Password: PASSWORD } }
}, async () => { await cluster.dispose() })
