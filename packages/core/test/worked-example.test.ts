/**
 * The worked example of README.md ("a route and a named policy"), run as written: createApp with
 * the app's parts (a named policy, a governance evaluator, branding, routes) answers the table the
 * README gives, and the unannotated route is covered by the fallback policy.
 */
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { ApplicationClaimTypes, createApp, html, type ApplicationParts } from '../src/index.js'
import { userKeyOf } from '../src/session/user-identity.js'
import { APP_ROOT, claim, cookieHeaderFrom, LogCapture, loadTestConfiguration, standardUser, testKeyRing } from './helpers/app.js'
import { createLogger } from '../src/logger.js'

const OrdersPolicies = { Approver: 'orders.Approver' } as const

const application: ApplicationParts = {
  branding: { applicationName: 'Acme Orders' },
  policies: [{
    name: OrdersPolicies.Approver,
    requirement: (user) => user.claims.some((c) => c.type === ApplicationClaimTypes.Permission && c.value === 'orders.approve')
  }],
  governance: ({ action, principal }) => action !== 'orders.purge' || principal?.subject === 'boss',
  routes: async (app: FastifyInstance) => {
    app.get('/orders', async (request, reply) =>
      reply.type('text/html; charset=utf-8').send(app.pages.layout({ title: 'Orders', userName: request.user?.name },
        html`<h1>Orders</h1><p>Hello ${request.user?.name}</p>`)))
    app.post('/api/orders/:id/approve', { config: { authorize: OrdersPolicies.Approver, governance: { action: 'orders.approve' } } },
      async (request) => ({ approvedBy: request.user?.userKey }))
    app.post('/api/orders/purge', { config: { authorize: OrdersPolicies.Approver, governance: { action: 'orders.purge' } } },
      async () => ({ purged: true }))
    app.get('/orders/help', { config: { allowAnonymous: true } }, async (_request, reply) =>
      reply.type('text/html; charset=utf-8').send(app.pages.layout({ title: 'Help' }, html`<h1>How ordering works</h1>`)))
    // Test-only sign-in (never in an app).
    app.post<{ Body: { claims: ReturnType<typeof standardUser> } }>('/test-only/sign-in', { config: { allowAnonymous: true } }, async (request, reply) => {
      await reply.signIn({ scheme: 'TestFlow', claims: request.body.claims })
      return reply.code(204).send()
    })
  }
}

async function example (context: TestContext): Promise<FastifyInstance> {
  const loaded = loadTestConfiguration()
  const app = await createApp({ config: loaded.config, environmentName: loaded.environmentName, contentRoot: APP_ROOT, logger: createLogger('silent', new LogCapture()), keyRing: testKeyRing(), ...application })
  context.after(async () => { await app.close() })
  await app.ready()
  return app
}

async function signIn (app: FastifyInstance, claims: ReturnType<typeof standardUser>): Promise<string> {
  return cookieHeaderFrom(await app.inject({ method: 'POST', url: '/test-only/sign-in', payload: { claims } }))
}

const json = { accept: 'application/json' }

test('the README example answers as its table says', async (context) => {
  const app = await example(context)
  const anonymousPage = await app.inject({ url: '/orders', headers: { accept: 'text/html' } })
  assert.equal(anonymousPage.statusCode, 302)
  assert.equal(anonymousPage.headers.location, '/Account/Login?ReturnUrl=%2Forders')
  const anonymousApi = await app.inject({ method: 'POST', url: '/api/orders/1/approve', headers: json })
  assert.equal(anonymousApi.statusCode, 401)
  assert.equal((anonymousApi.json() as { code: string }).code, 'APP_ERR_AUTH_REQUIRED')

  const reader = await signIn(app, standardUser())
  const page = await app.inject({ url: '/orders', headers: { cookie: reader } })
  assert.equal(page.statusCode, 200)
  assert.match(page.body, /<title>Orders - Acme Orders<\/title>/)
  const forbidden = await app.inject({ method: 'POST', url: '/api/orders/1/approve', headers: { ...json, cookie: reader } })
  assert.equal(forbidden.statusCode, 403)
  assert.equal((forbidden.json() as { code: string }).code, 'APP_ERR_AUTH_FORBIDDEN')

  const approver = await signIn(app, [...standardUser(), claim('application:permission', 'orders.approve')])
  const approved = await app.inject({ method: 'POST', url: '/api/orders/1/approve', headers: { ...json, cookie: approver } })
  assert.equal(approved.statusCode, 200)
  assert.deepEqual(approved.json(), { approvedBy: userKeyOf({ scheme: 'TestFlow', issuer: 'TestFlow', subject: 'user-1' }) })
  const purge = await app.inject({ method: 'POST', url: '/api/orders/purge', headers: { ...json, cookie: approver } })
  assert.equal(purge.statusCode, 403)
  assert.equal((purge.json() as { code: string }).code, 'APP_ERR_GOVERNANCE_DENIED')

  const help = await app.inject({ url: '/orders/help' })
  assert.equal(help.statusCode, 200)
  assert.match(help.body, /<title>Help - Acme Orders<\/title>/)
  assert.ok(app.authorization.anonymousRoutes().includes('GET /orders/help'))
  assert.ok(!app.authorization.anonymousRoutes().includes('GET /orders'))
})
