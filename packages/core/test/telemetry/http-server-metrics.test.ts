/**
 * Issue 33, item 12: `http.server.request.duration` by method, route template and status code
 * (a request that matched no route has no `http.route`; the metrics route is not measured), kept
 * in bounded plain-number tallies; and a sign-in refused by the application's sign-in hook counts
 * into `app.sign_in.refused` with failure `application`.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { build, cookieHeaderFrom, signIn, standardUser } from '../helpers/app.js'
import { registerTestProvider, TEST_PROVIDER, TEST_PROVIDER_CALLBACK } from '../helpers/test-provider.js'
import { TELEMETRY_SETTINGS } from './scripted-flow.js'
import { MAX_REQUEST_SERIES, RequestTally } from '../../src/telemetry/request-tally.js'

const ENUMS = { dataPointType: { SUM: 3, HISTOGRAM: 0 }, cumulative: 1, doubleValueType: 1 }

/** The value of the one exposition line `name{labels,otel_scope_name=...} value`. */
function sample (body: string, name: string, labels: string): number | undefined {
  const lines = body.split('\n').filter((candidate) => candidate.startsWith(`${name}{${labels},otel_scope_name=`))
  assert.ok(lines.length <= 1, `one line for ${name}{${labels}}`)
  return lines[0] === undefined ? undefined : Number(lines[0].slice(lines[0].lastIndexOf(' ') + 1))
}

const COUNT = 'http_server_request_duration_count'

test('every response is counted by method, route template and status code; an unmatched request has no route label; the metrics route is not counted', async (t) => {
  const { app } = await build(t, {
    settings: TELEMETRY_SETTINGS,
    configure: (instance) => { instance.get('/items/:id', { config: { allowAnonymous: true } }, async (request) => ({ id: (request.params as { id: string }).id })) }
  })
  for (const id of ['41', '42', 'planted-item-id']) assert.equal((await app.inject({ url: `/items/${id}?q=planted-query` })).statusCode, 200)
  assert.equal((await app.inject({ method: 'HEAD', url: '/items/7' })).statusCode, 200)
  assert.equal((await app.inject({ url: '/' })).statusCode, 302)
  const cookie = await signIn(app, standardUser())
  assert.equal((await app.inject({ url: '/no-such-path/planted-unmatched', headers: { cookie } })).statusCode, 404)
  await app.inject({ url: '/metrics' })

  const body = (await app.inject({ url: '/metrics' })).body
  assert.equal(sample(body, COUNT, 'http_request_method="GET",http_route="/items/:id",http_response_status_code="200"'), 3)
  assert.equal(sample(body, COUNT, 'http_request_method="HEAD",http_route="/items/:id",http_response_status_code="200"'), 1)
  assert.equal(sample(body, COUNT, 'http_request_method="GET",http_route="/",http_response_status_code="302"'), 1)
  assert.equal(sample(body, COUNT, 'http_request_method="POST",http_route="/test-only/sign-in",http_response_status_code="204"'), 1)
  assert.equal(sample(body, COUNT, 'http_request_method="GET",http_response_status_code="404"'), 1)
  assert.match(body, /^http_server_request_duration_bucket\{http_request_method="GET",http_route="\/items\/:id",http_response_status_code="200",otel_scope_name="@project-template\/core",le="0\.005"\} \d+$/m)
  assert.match(body, /^http_server_request_duration_sum\{http_request_method="GET",http_route="\/items\/:id",http_response_status_code="200",otel_scope_name="@project-template\/core"\} \d/m)
  assert.doesNotMatch(body, /http_route="\/metrics"/)
  assert.doesNotMatch(body, /planted/)
})

test('a sign-in refused by the application\'s sign-in hook counts as app.sign_in.refused with failure application', async (t) => {
  const { app, logs } = await build(t, {
    settings: TELEMETRY_SETTINGS,
    configure: (instance) => { registerTestProvider(instance) },
    signInHook: async () => ({ allow: false, reason: 'Your account is suspended.' })
  })
  const challenge = await app.inject({ url: `/External/Challenge?provider=${TEST_PROVIDER}&returnUrl=/` })
  const state = new URL(challenge.headers.location ?? '').searchParams.get('state') ?? ''
  const callback = await app.inject({ url: `${TEST_PROVIDER_CALLBACK}?state=${state}&sub=user-9`, headers: { cookie: cookieHeaderFrom(challenge) } })
  assert.equal(callback.statusCode, 403)
  assert.equal(logs.events('external.sign_in.refused_by_application').length, 1)
  const body = (await app.inject({ url: '/metrics' })).body
  // Fixed labels come first in the series (the recorder adds them before the fields).
  assert.equal(sample(body, 'app_sign_in_refused_total', 'failure="application",provider="TestIdP"'), 1)
  assert.equal(sample(body, 'app_sign_in_succeeded_total', 'provider="TestIdP"'), undefined)
  assert.equal(sample(body, COUNT, `http_request_method="GET",http_route="${TEST_PROVIDER_CALLBACK}",http_response_status_code="403"`), 1)
})

test('the request tally maps unknown methods to _OTHER and keeps at most MAX_REQUEST_SERIES label sets, then one overflow point', async () => {
  const tally = new RequestTally(ENUMS)
  const route = tally.route('/r')
  route.record('PROPFIND', 207, 3)
  for (let status = 0; status < MAX_REQUEST_SERIES + 10; status++) route.record('GET', 1000 + status, 1)
  const { resourceMetrics } = await tally.collect()
  const [metric] = (resourceMetrics.scopeMetrics[0] as { metrics: Array<{ descriptor: { name: string, unit: string }, dataPoints: Array<{ attributes: Record<string, unknown>, value: { count: number, sum: number } }> }> }).metrics
  assert.equal(metric?.descriptor.name, 'http.server.request.duration')
  assert.equal(metric?.descriptor.unit, 's')
  const points = metric?.dataPoints ?? []
  assert.equal(points.length, MAX_REQUEST_SERIES + 1)
  assert.deepEqual(points[0]?.attributes, { 'http.request.method': '_OTHER', 'http.route': '/r', 'http.response.status_code': 207 })
  assert.equal(points[0]?.value.sum, 0.003)
  assert.deepEqual(points.at(-1)?.attributes, { 'otel.metric.overflow': true })
  assert.equal(points.at(-1)?.value.count, 11)
  assert.deepEqual((await new RequestTally(ENUMS).collect()).resourceMetrics.scopeMetrics, [])
})
