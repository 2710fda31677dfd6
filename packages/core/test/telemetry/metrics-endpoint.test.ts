/**
 * The metrics switch: off by default (no route, nothing measured), on with the route closed
 * unless the settings open it, and the events of the scripted flow in the exposition format.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { build, buildTestApp, loadTestConfiguration, signIn, standardUser } from '../helpers/app.js'
import { closedPort } from '../helpers/ports.js'
import { buildTelemetryApp, scriptedSignInAndOut } from './scripted-flow.js'

/** The value of one series line `name{labels} value` in the exposition text, labels in the given order. */
function sample (body: string, name: string, labels: string): number | undefined {
  const line = body.split('\n').find((candidate) => candidate.startsWith(`${name}{${labels},otel_scope_name=`))
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1))
}

test('telemetry is off by default: no metrics route and the state store is the configured one, unwrapped', async (t) => {
  assert.equal(loadTestConfiguration().config.Telemetry.Enabled, false)
  const { app } = await build(t)
  const cookie = await signIn(app, standardUser())
  const response = await app.inject({ url: '/metrics', headers: { cookie } })
  assert.equal(response.statusCode, 404)
  assert.equal(app.state.constructor.name, 'EmbeddedStateStore')
})

test('the metrics route requires an authenticated user unless AllowAnonymous or a Policy says otherwise', async (t) => {
  const { app } = await build(t, { settings: { Telemetry: { Enabled: true, Prometheus: { Enabled: true } } } })
  const anonymous = await app.inject({ url: '/metrics', headers: { accept: 'application/json' } })
  assert.equal(anonymous.statusCode, 401)
  const cookie = await signIn(app, standardUser())
  const signedIn = await app.inject({ url: '/metrics', headers: { cookie } })
  assert.equal(signedIn.statusCode, 200)
  assert.equal(signedIn.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8')
  assert.equal(signedIn.headers['cache-control'], 'no-store')
  assert.equal(sample(signedIn.body, 'app_session_created_total', 'provider="TestFlow"'), 1)

  const { app: guarded } = await build(t, { settings: { Telemetry: { Enabled: true, Prometheus: { Enabled: true, Policy: 'application.Role.Administrator' } } } })
  const reader = await signIn(guarded, standardUser())
  const refused = await guarded.inject({ url: '/metrics', headers: { cookie: reader, accept: 'application/json' } })
  assert.equal(refused.statusCode, 403)
  const administrator = await signIn(guarded, [...standardUser(), { type: 'application:role', value: 'Administrator', issuer: 'TestFlow' }])
  const admin = await guarded.inject({ url: '/metrics', headers: { cookie: administrator } })
  assert.equal(admin.statusCode, 200)
  assert.equal(sample(admin.body, 'app_authorization_refused_total', 'policy="application.Role.Administrator",outcome="forbid"'), 1)
})

test('the scripted sign-in, refused sign-in and sign-out count in the exposition format, whatever the log level', async (t) => {
  const { app } = await buildTelemetryApp(t)
  app.log.level = 'silent'
  await scriptedSignInAndOut(app)
  const body = (await app.inject({ url: '/metrics' })).body
  assert.equal(sample(body, 'app_sign_in_started_total', 'provider="TestIdP"'), 1)
  assert.equal(sample(body, 'app_sign_in_succeeded_total', 'provider="TestIdP"'), 1)
  assert.equal(sample(body, 'app_sign_in_refused_total', 'provider="TestIdP",failure="correlation"'), 1)
  assert.equal(sample(body, 'app_sign_out_total', 'kind="local",provider="TestIdP"'), 1)
  assert.equal(sample(body, 'app_authorization_refused_total', 'policy="application.AuthenticatedUser",outcome="challenge"'), 1)
  assert.equal(sample(body, 'app_sessions_active', 'store="Embedded"'), 0)
  assert.doesNotMatch(body, /user-7/)
})

test('with Prometheus:Port the metrics have a listener of their own, anonymous, and the app has no metrics route; closing the app closes it', async () => {
  const port = await closedPort()
  const { app } = await buildTestApp({ settings: { Telemetry: { Enabled: true, Prometheus: { Enabled: true, Port: port } } } })
  try {
    await signIn(app, standardUser())
    const scraped = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5000) })
    assert.equal(scraped.status, 200)
    assert.equal(sample(await scraped.text(), 'app_session_created_total', 'provider="TestFlow"'), 1)
    const cookie = await signIn(app, standardUser())
    assert.equal((await app.inject({ url: '/metrics', headers: { cookie } })).statusCode, 404)
  } finally {
    await app.close()
  }
  await assert.rejects(fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5000) }), TypeError)
})

test('telemetry switched on without an exporter, or traces without OTLP, fails startup naming the key', () => {
  const loaded = loadTestConfiguration({ settings: { Telemetry: { Enabled: true, Traces: { Enabled: true } } } })
  assert.deepEqual(loaded.errors.map((error) => error.key), ['ProjectTemplate:Telemetry:Enabled', 'ProjectTemplate:Telemetry:Traces:Enabled'])
  assert.equal(loaded.errors[0]?.message, 'ProjectTemplate:Telemetry:Enabled is true but neither ProjectTemplate:Telemetry:Prometheus:Enabled nor ProjectTemplate:Telemetry:Otlp:Enabled is; enable an exporter or switch telemetry off.')
})
