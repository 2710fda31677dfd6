/**
 * The metrics switch: off by default (no route, nothing measured); on the app's port the route is
 * served only when Policy or AllowAnonymous opens it (otherwise 404 and a warning naming
 * Prometheus:Policy, at startup and in check-config); the provider gauge; and the events of the
 * scripted flow in the exposition format.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { build, buildTestApp, loadTestConfiguration, signIn, standardUser } from '../helpers/app.js'
import { closedPort } from '../helpers/ports.js'
import { buildTelemetryApp, scriptedSignInAndOut, TELEMETRY_SETTINGS } from './scripted-flow.js'
import { summarizeConfiguration } from '../../src/configuration-summary.js'
import type { AuthenticationProvider } from '../../src/providers/provider.js'

const METRICS_NOT_SERVED = 'ProjectTemplate:Telemetry:Prometheus:Policy is empty and ProjectTemplate:Telemetry:Prometheus:AllowAnonymous is false, so the metrics route is not served on the app\'s port; name the policy a reader needs, or serve the metrics on a port of their own (ProjectTemplate:Telemetry:Prometheus:Port).'

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

test('on the app\'s port the metrics route is not served (404 to a signed-in user, as an unknown path to others) without Policy or AllowAnonymous, and startup warns naming Prometheus:Policy', async (t) => {
  const { app, logs } = await build(t, { settings: { Telemetry: { Enabled: true, Prometheus: { Enabled: true } } } })
  // Anonymous: what any path without a route answers under the closed posture (no hint that it exists).
  const unknown = await app.inject({ url: '/no-such-route', headers: { accept: 'application/json' } })
  const anonymous = await app.inject({ url: '/metrics', headers: { accept: 'application/json' } })
  const withoutRequestId = (body: string): unknown => ({ ...JSON.parse(body), requestId: undefined })
  assert.deepEqual([anonymous.statusCode, withoutRequestId(anonymous.body)], [unknown.statusCode, withoutRequestId(unknown.body)])
  const cookie = await signIn(app, standardUser())
  assert.equal((await app.inject({ url: '/metrics', headers: { cookie } })).statusCode, 404)
  const warnings = logs.records().filter((record) => record.event === 'configuration.metrics_not_served')
  assert.deepEqual(warnings.map((record) => [record.level, record.key, record.msg]), [[40, 'ProjectTemplate:Telemetry:Prometheus:Policy', METRICS_NOT_SERVED]])
})

test('check-config lists the same warning, and none once a Policy, AllowAnonymous or a Port of its own is set', () => {
  const summary = summarizeConfiguration(loadTestConfiguration({ settings: { Telemetry: { Enabled: true, Prometheus: { Enabled: true } } } }))
  assert.deepEqual(summary.warnings.filter((warning) => warning.event === 'configuration.metrics_not_served'),
    [{ event: 'configuration.metrics_not_served', key: 'ProjectTemplate:Telemetry:Prometheus:Policy', message: METRICS_NOT_SERVED }])
  const openings: Array<Record<string, string | number | boolean>> = [{ Policy: 'application.Role.Administrator' }, { AllowAnonymous: true }, { Port: 9464 }]
  for (const prometheus of openings) {
    const opened = summarizeConfiguration(loadTestConfiguration({ settings: { Telemetry: { Enabled: true, Prometheus: { Enabled: true, ...prometheus } } } }))
    assert.deepEqual(opened.warnings.filter((warning) => warning.event === 'configuration.metrics_not_served'), [], JSON.stringify(prometheus))
  }
})

test('with a Policy the metrics route serves the users it admits and refuses the others', async (t) => {
  const { app: guarded } = await build(t, { settings: { Telemetry: { Enabled: true, Prometheus: { Enabled: true, Policy: 'application.Role.Administrator' } } } })
  assert.equal((await guarded.inject({ url: '/metrics', headers: { accept: 'application/json' } })).statusCode, 401)
  const reader = await signIn(guarded, standardUser())
  const refused = await guarded.inject({ url: '/metrics', headers: { cookie: reader, accept: 'application/json' } })
  assert.equal(refused.statusCode, 403)
  const administrator = await signIn(guarded, [...standardUser(), { type: 'application:role', value: 'Administrator', issuer: 'TestFlow' }])
  const admin = await guarded.inject({ url: '/metrics', headers: { cookie: administrator } })
  assert.equal(admin.statusCode, 200)
  assert.equal(admin.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8')
  assert.equal(admin.headers['cache-control'], 'no-store')
  assert.equal(sample(admin.body, 'app_session_created_total', 'provider="TestFlow"'), 2)
  assert.equal(sample(admin.body, 'app_authorization_refused_total', 'policy="application.Role.Administrator",outcome="forbid"'), 1)
})

test('app.provider.available reports every provider, configured and runtime, 1 or 0, and follows a provider going down', async (t) => {
  let upAvailable = true
  const provider = (scheme: string, available: () => boolean, runtime: boolean): AuthenticationProvider => ({
    scheme,
    displayName: scheme,
    paths: [],
    ...(runtime ? { runtime: true } : {}),
    status: () => available() ? { available: true } : { available: false, reason: 'metadata_unreachable' },
    challenge: (_request, reply) => reply.code(500).send()
  })
  const { app } = await build(t, {
    settings: TELEMETRY_SETTINGS,
    configure: (instance) => {
      instance.authentication.registerProvider(provider('Configured', () => upAvailable, false))
      instance.authentication.registerProvider(provider('CustomerUp', () => true, true))
      instance.authentication.registerProvider(provider('CustomerDown', () => false, true))
    }
  })
  const first = (await app.inject({ url: '/metrics' })).body
  assert.equal(sample(first, 'app_provider_available', 'provider="Configured"'), 1)
  assert.equal(sample(first, 'app_provider_available', 'provider="CustomerUp"'), 1)
  assert.equal(sample(first, 'app_provider_available', 'provider="CustomerDown"'), 0)
  upAvailable = false
  assert.equal(sample((await app.inject({ url: '/metrics' })).body, 'app_provider_available', 'provider="Configured"'), 0)
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
