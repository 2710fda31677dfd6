/**
 * The governance seam: an evaluator decides permit/deny for a route's governed action, runs only
 * after authentication and authorization have passed (never for anonymous or forbidden callers),
 * and without an evaluator the seam does nothing.
 */
import { describe, test, type TestContext } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import assert from 'node:assert/strict'
import { ApplicationAuthorizationPolicyNames } from '../../src/authorization/policies.js'
import type { GovernanceContext } from '../../src/plugins/authorization.js'
import { build, claim, signIn, standardUser, type TestApp } from '../helpers/app.js'

interface Harness extends TestApp { readonly calls: GovernanceContext[] }

/** The app with two governed routes and, when `decide` is given, an evaluator recording its calls; closed after the test. */
async function harness (test: Pick<TestContext, 'after'>, decide?: (context: GovernanceContext) => boolean): Promise<Harness> {
  const calls: GovernanceContext[] = []
  const t = await build(test, {
    configure: (app) => {
      app.post('/orders/approve', { config: { governance: { action: 'orders.approve' } } }, async () => ({ approved: true }))
      app.post('/orders/purge', { config: { authorize: ApplicationAuthorizationPolicyNames.AdministratorRole, governance: { action: 'orders.purge' } } }, async () => ({ purged: true }))
      if (decide !== undefined) {
        app.authorization.useGovernanceEvaluator((context) => { calls.push(context); return decide(context) })
      }
    }
  })
  return { ...t, calls }
}

const json = { accept: 'application/json' }

/** A JSON POST to a governed route, anonymous or with a session cookie. */
async function post (t: TestApp, url: string, cookie?: string): Promise<LightMyRequestResponse> {
  return await t.app.inject({ method: 'POST', url, headers: cookie === undefined ? json : { ...json, cookie } })
}

describe('governance seam', () => {
  test('an anonymous request never reaches the evaluator', async (context) => {
    const t = await harness(context, () => true)
    const response = await post(t, '/orders/approve')
    assert.equal(response.statusCode, 401)
    assert.equal(t.calls.length, 0)
  })

  test('a forbidden request never reaches the evaluator', async (context) => {
    const t = await harness(context, () => true)
    const cookie = await signIn(t.app, standardUser())
    const response = await post(t, '/orders/purge', cookie)
    assert.equal(response.statusCode, 403)
    assert.equal((response.json() as Record<string, unknown>).code, 'APP_ERR_AUTH_FORBIDDEN')
    assert.equal(t.calls.length, 0)
  })

  test('an authorized request is evaluated with the action and principal; permit runs the handler', async (context) => {
    const t = await harness(context, () => true)
    const cookie = await signIn(t.app, standardUser())
    const response = await post(t, '/orders/approve', cookie)
    assert.equal(response.statusCode, 200)
    assert.deepEqual(response.json(), { approved: true })
    assert.equal(t.calls.length, 1)
    assert.equal(t.calls[0]?.action, 'orders.approve')
    assert.equal(t.calls[0]?.principal?.subject, 'user-1')
  })

  test('deny answers 403 (problem+json for JSON, the error page for HTML) and skips the handler', async (context) => {
    let handled = 0
    const t = await build(context, {
      configure: (app) => {
        app.post('/orders/approve', { config: { governance: { action: 'orders.approve' } } }, async () => { handled++; return { approved: true } })
        app.authorization.useGovernanceEvaluator(({ principal }) => principal?.subject === 'boss')
      }
    })
    const cookie = await signIn(t.app, standardUser())
    const denied = await post(t, '/orders/approve', cookie)
    assert.equal(denied.statusCode, 403)
    assert.equal(denied.headers['content-type'], 'application/problem+json; charset=utf-8')
    assert.equal((denied.json() as Record<string, unknown>).code, 'APP_ERR_GOVERNANCE_DENIED')
    const deniedHtml = await t.app.inject({ method: 'POST', url: '/orders/approve', headers: { accept: 'text/html', cookie } })
    assert.equal(deniedHtml.statusCode, 403)
    assert.match(deniedHtml.body, /<h1>403 Action not permitted<\/h1>/)
    assert.equal(handled, 0)
    assert.equal(t.logs.events('governance.denied').length, 2)
    const boss = await signIn(t.app, [claim('application:subject', 'boss')])
    assert.equal((await t.app.inject({ method: 'POST', url: '/orders/approve', headers: { ...json, cookie: boss } })).statusCode, 200)
    assert.equal(handled, 1)
  })

  test('an administrator passes authorization and then meets the evaluator', async (context) => {
    const t = await harness(context, (governed) => governed.action !== 'orders.purge')
    const cookie = await signIn(t.app, [...standardUser(), claim('application:role', 'Administrator')])
    const response = await post(t, '/orders/purge', cookie)
    assert.equal(response.statusCode, 403)
    assert.equal((response.json() as Record<string, unknown>).code, 'APP_ERR_GOVERNANCE_DENIED')
    assert.deepEqual(t.calls.map((call) => call.action), ['orders.purge'])
  })

  test('without an evaluator the seam does nothing', async (context) => {
    const t = await harness(context)
    const cookie = await signIn(t.app, standardUser())
    assert.equal((await post(t, '/orders/approve', cookie)).statusCode, 200)
    assert.equal((await post(t, '/orders/approve')).statusCode, 401)
  })
})
