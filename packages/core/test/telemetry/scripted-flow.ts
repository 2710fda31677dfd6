/**
 * The telemetry tests' app (metrics on, served anonymously on the app's own listener: only for
 * tests) and the scripted traffic they count: one anonymous request to a protected page (an
 * authorization challenge), one refused sign-in (a callback without its flow), one sign-in
 * through the test provider's real flow (challenge, correlation cookie, completion) and one
 * sign-out through POST /Account/Logout.
 */
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { antiforgeryFor, build, cookieHeaderFrom, type TestApp } from '../helpers/app.js'
import { registerTestProvider, TEST_PROVIDER, TEST_PROVIDER_CALLBACK } from '../helpers/test-provider.js'
import type { TestContext } from 'node:test'

export const TELEMETRY_SETTINGS = { Telemetry: { Enabled: true, Prometheus: { Enabled: true, AllowAnonymous: true } } }

export async function buildTelemetryApp (context: Pick<TestContext, 'after'>): Promise<TestApp> {
  return await build(context, { settings: TELEMETRY_SETTINGS, configure: (app) => { registerTestProvider(app) } })
}

export async function scriptedSignInAndOut (app: FastifyInstance): Promise<void> {
  const anonymous = await app.inject({ url: '/' })
  assert.equal(anonymous.statusCode, 302)

  const refused = await app.inject({ url: `${TEST_PROVIDER_CALLBACK}?state=AAAAAAAAAAAAAAAAAAAAAA` })
  assert.equal(refused.statusCode, 302)
  assert.match(refused.headers.location ?? '', /^\/Account\/Login\?failure=/)

  const challenge = await app.inject({ url: `/External/Challenge?provider=${TEST_PROVIDER}&returnUrl=/` })
  assert.equal(challenge.statusCode, 302)
  const state = new URL(challenge.headers.location ?? '').searchParams.get('state') ?? ''
  const callback = await app.inject({ url: `${TEST_PROVIDER_CALLBACK}?state=${state}&sub=user-7`, headers: { cookie: cookieHeaderFrom(challenge) } })
  assert.equal(callback.statusCode, 302)
  assert.equal(callback.headers.location, '/')
  const session = cookieHeaderFrom(callback)

  const { token, cookie } = await antiforgeryFor(app, session)
  const logout = await app.inject({ method: 'POST', url: '/Account/Logout', headers: { cookie }, payload: { __RequestVerificationToken: token } })
  assert.equal(logout.statusCode, 302)
}
