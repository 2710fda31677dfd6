/**
 * Deprovisioning on two instances as a deployment runs them (issue 41, item 4; "two instances on
 * Redis with PostgreSQL for the directory"): real redis-server, real PostgreSQL, oidc-provider, a
 * balancer, every request over HTTP. A person signs in on A and on B (a session on each, both
 * used on both instances); a SCIM deactivation sent to A ends both sessions on B within a second
 * (polled, bounded), and their next sign-in on B is refused at the callback (`deprovisioned`, no
 * session cookie, the page says their organisation turned off their access); a reactivation sent
 * to B lets them sign in again on both. test/scim/postgres-instances.test.ts covers tokens and
 * isolation on PostgreSQL with the embedded state store; test/scim/deprovisioning.test.ts the same
 * doors on one instance.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { sessionCookiesSet } from '../helpers/providers/http-session.js'
import { useRedisPostgresInstances, type Instance } from '../helpers/redis-postgres-instances.js'
import { userBody } from '../helpers/scim.js'
import { entraDisableUserString, entraEnableUserString } from './corpora/entra-id.js'

describe('deprovisioning on two instances (Redis state store, PostgreSQL directory)', () => {
  const t = useRedisPostgresInstances({ idp: { accounts: { grace: { name: 'Grace Hopper', email: 'grace@contoso.test' } } } })

  /** Whether `cookie` is a live session on `on` (the starter page answers 200, else it sends to the login page). */
  async function signedIn (on: Instance, cookie: string): Promise<boolean> {
    const response = await t.request(on, '/', { cookie, accept: 'text/html' })
    await response.arrayBuffer()
    assert.ok(response.status === 200 || response.status === 302, `status ${response.status}`)
    return response.status === 200
  }

  test('signed in on A and on B; deactivated through A: both sessions end on B within a second, the next sign-in on B is refused; reactivated through B: signs in again', async () => {
    const user = await t.scim(t.a, 'POST', '/Users', userBody('grace@contoso.test', { externalId: 'grace' }))
    assert.equal(user.status, 201)
    const sessions: string[] = []
    for (const on of [t.a, t.b]) {
      const signIn = await t.signIn(on, 'grace')
      assert.equal(signIn.callback.location?.pathname, '/', `signed in on ${on.name}`)
      assert.equal(sessionCookiesSet(signIn.callback.response).length, 1)
      sessions.push(signIn.cookie)
    }
    assert.notEqual(sessions[0], sessions[1], 'two sessions')
    assert.equal(t.a.logs.events('external.sign_in.succeeded').length, 1, 'the first on A')
    assert.equal(t.b.logs.events('external.sign_in.succeeded').length, 1, 'the second on B')
    for (const on of [t.a, t.b]) {
      for (const cookie of sessions) assert.equal(await signedIn(on, cookie), true, `each session works on ${on.name} (and B holds both)`)
    }

    const deactivated = await t.scim(t.a, 'PATCH', `/Users/${user.json.id as string}`, entraDisableUserString)
    const deadline = Date.now() + 1000
    assert.equal(deactivated.status, 200)
    assert.equal(deactivated.json.active, false)
    let live = sessions
    for (let attempt = 0; live.length > 0 && Date.now() < deadline; attempt++) {
      const states = await Promise.all(live.map(async (cookie) => await signedIn(t.b, cookie)))
      live = live.filter((_cookie, index) => states[index])
      if (live.length > 0) await sleep(25)
    }
    assert.equal(live.length, 0, 'both sessions ended on B within a second of the deactivation\'s answer')
    for (const cookie of sessions) assert.equal(await signedIn(t.a, cookie), false, 'and on A')

    const refused = await t.signIn(t.b, 'grace')
    assert.equal(refused.callback.response.status, 403)
    assert.match(refused.callback.body, /your organisation has turned off your access to this application/)
    assert.equal(sessionCookiesSet(refused.callback.response).length, 0, 'no session cookie')
    assert.equal(t.b.logs.events('external.sign_in.failed').at(-1)?.failure, 'deprovisioned')

    const reactivated = await t.scim(t.b, 'PATCH', `/Users/${user.json.id as string}`, entraEnableUserString)
    assert.equal(reactivated.status, 200)
    for (const on of [t.b, t.a]) {
      const again = await t.signIn(on, 'grace')
      assert.equal(again.callback.location?.pathname, '/', `reactivated: signs in on ${on.name} with no other step`)
      assert.equal(await signedIn(on === t.a ? t.b : t.a, again.cookie), true)
    }
    assert.ok(!JSON.stringify([...t.a.logs.lines, ...t.b.logs.lines]).includes(t.connectionToken), 'no connection token in the log')
  })
})
