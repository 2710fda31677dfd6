/**
 * With Traces:Enabled, spans reach an OTLP/HTTP receiver (a loopback server standing in for the
 * collector): one span per request from @fastify/otel, and the sign-in steps as child spans in the
 * request's trace, carrying the provider and never a user or a query string.
 */
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { buildTestApp } from '../helpers/app.js'
import { registerTestProvider } from '../helpers/test-provider.js'
import { scriptedSignInAndOut } from './scripted-flow.js'

interface OtlpSpan { traceId: string, spanId: string, parentSpanId?: string, name: string, attributes: Array<{ key: string, value: { stringValue?: string } }> }
interface OtlpTraces { resourceSpans: Array<{ scopeSpans: Array<{ scope: { name: string }, spans: OtlpSpan[] }> }> }

test('request spans and the sign-in steps as their children reach the OTLP collector when the app closes', { timeout: 30_000 }, async (t) => {
  const received: OtlpTraces[] = []
  const collector = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      if (request.url === '/v1/traces') received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpTraces)
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve))
  t.after(() => { collector.close() })
  const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`

  const { app } = await buildTestApp({
    settings: { Telemetry: { Enabled: true, Otlp: { Enabled: true, Endpoint: endpoint }, Traces: { Enabled: true } } },
    configure: (instance) => { registerTestProvider(instance) }
  })
  await scriptedSignInAndOut(app)
  await app.close()

  const spans = received.flatMap((batch) => batch.resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans)))
  const byId = new Map(spans.map((span) => [span.spanId, span]))
  const attribute = (span: OtlpSpan | undefined, key: string): string | undefined => span?.attributes.find((entry) => entry.key === key)?.value.stringValue
  const rootOf = (span: OtlpSpan): OtlpSpan => {
    let current = span
    for (let depth = 0; depth < 20 && current.parentSpanId !== undefined && byId.has(current.parentSpanId); depth++) current = byId.get(current.parentSpanId) as OtlpSpan
    return current
  }
  for (const step of ['sign_in.begin', 'sign_in.take_flow', 'sign_in.complete', 'sign_in.fail']) {
    const span = spans.find((candidate) => candidate.name === step)
    assert.ok(span !== undefined, `${step} was exported (got ${[...new Set(spans.map((candidate) => candidate.name))].join(', ')})`)
    assert.equal(attribute(span, 'app.provider'), 'TestIdP')
    const root = rootOf(span)
    assert.notEqual(root.spanId, span.spanId, `${step} has a parent request span`)
    assert.equal(root.traceId, span.traceId)
  }
  const complete = spans.find((span) => span.name === 'sign_in.complete') as OtlpSpan
  assert.equal(attribute(rootOf(complete), 'http.route'), '/signin-testidp')
  // The query (state, code, SAML payloads) never reaches a span: url.path is the path alone.
  assert.equal(attribute(rootOf(complete), 'url.path'), '/signin-testidp')
  assert.doesNotMatch(JSON.stringify(spans), /state=|user-7/)
})
