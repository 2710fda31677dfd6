/**
 * `/metrics` scraped by a real Prometheus (Debian's `prometheus`, installed by
 * scripts/install-test-dependencies.sh), started by the test on a loopback port with a temporary
 * configuration and data directory and a 1 s scrape interval, after a scripted sign-in and
 * sign-out; the values are read back through Prometheus's HTTP API.
 */
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { closedPort } from '../helpers/ports.js'
import { runProcess } from '../helpers/process.js'
import { waitFor } from '../helpers/wait.js'
import { buildTelemetryApp, scriptedSignInAndOut } from './scripted-flow.js'

const PROMETHEUS = process.env.PROMETHEUS ?? '/usr/bin/prometheus'

interface VectorResult { metric: Record<string, string>, value: [number, string] }

async function query (base: string, expression: string): Promise<VectorResult[]> {
  const response = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(expression)}`, { signal: AbortSignal.timeout(5000) })
  const body = await response.json() as { status: string, data: { resultType: string, result: VectorResult[] } }
  assert.equal(body.status, 'success')
  return body.data.result
}

async function valueOf (base: string, expression: string): Promise<number | undefined> {
  const result = await query(base, expression)
  return result.length === 0 ? undefined : Number(result[0]?.value[1])
}

test('a real Prometheus scrapes /metrics and reads back the sign-in, refusal, sign-out and store counts', { skip: existsSync(PROMETHEUS) ? false : `${PROMETHEUS} is not installed (npm run test:setup)`, timeout: 60_000 }, async (t) => {
  const { app } = await buildTelemetryApp(t)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const appPort = (app.server.address() as AddressInfo).port
  await scriptedSignInAndOut(app)

  const directory = mkdtempSync(join(tmpdir(), 'prometheus-'))
  t.after(() => { rmSync(directory, { recursive: true, force: true }) })
  writeFileSync(join(directory, 'prometheus.yml'), [
    'global:',
    '  scrape_interval: 1s',
    '  scrape_timeout: 1s',
    'scrape_configs:',
    '  - job_name: app',
    '    metrics_path: /metrics',
    '    static_configs:',
    `      - targets: ['127.0.0.1:${appPort}']`,
    ''
  ].join('\n'))
  const prometheusPort = await closedPort()
  const prometheus = runProcess(PROMETHEUS, [
    `--config.file=${join(directory, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(directory, 'data')}`,
    `--web.listen-address=127.0.0.1:${prometheusPort}`,
    '--log.level=warn'
  ], { cwd: directory, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } })
  t.after(async () => { prometheus.kill(); await prometheus.exited(10_000).catch(() => undefined) })
  const base = `http://127.0.0.1:${prometheusPort}`

  await waitFor(async () => {
    try {
      return (await valueOf(base, 'up{job="app"}')) === 1 && (await valueOf(base, 'app_sign_out_total')) !== undefined
    } catch {
      return false
    }
  }, `Prometheus scraping 127.0.0.1:${appPort}/metrics (stderr: ${prometheus.stderr()})`, 30_000, 250)

  assert.equal(await valueOf(base, 'app_sign_in_started_total{provider="TestIdP"}'), 1)
  assert.equal(await valueOf(base, 'app_sign_in_succeeded_total{provider="TestIdP"}'), 1)
  assert.equal(await valueOf(base, 'app_sign_in_refused_total{provider="TestIdP",failure="correlation"}'), 1)
  assert.equal(await valueOf(base, 'app_session_created_total{provider="TestIdP"}'), 1)
  assert.equal(await valueOf(base, 'app_sign_out_total{kind="local",provider="TestIdP"}'), 1)
  assert.equal(await valueOf(base, 'app_authorization_refused_total{policy="application.AuthenticatedUser",outcome="challenge"}'), 1)
  assert.equal(await valueOf(base, 'app_state_store_available{store="Embedded"}'), 1)
  assert.equal(await valueOf(base, 'app_sessions_active{store="Embedded"}'), 0)
  // The session was written once (set) and deleted once at sign-out; every operation is timed.
  assert.equal(await valueOf(base, 'app_state_store_operations_total{store="Embedded",operation="set",outcome="ok"}'), 1)
  assert.equal(await valueOf(base, 'app_state_store_operations_total{store="Embedded",operation="delete",outcome="ok"}'), 1)
  assert.equal(await valueOf(base, 'sum(app_state_store_duration_count{store="Embedded"})'), await valueOf(base, 'sum(app_state_store_operations_total{store="Embedded"})'))
  // The logout was one POST to its route template, answered 302.
  assert.equal(await valueOf(base, 'http_server_request_duration_count{http_request_method="POST",http_route="/Account/Logout",http_response_status_code="302"}'), 1)
  // Bounded labels: no series carries a user, a session or a path.
  const series = await query(base, '{job="app",__name__=~"(app|http)_.+"}')
  const labelNames = new Set(series.flatMap((entry) => Object.keys(entry.metric)))
  for (const forbidden of ['subject', 'userKey', 'sessionAuditId', 'url', 'path', 'issuer']) assert.equal(labelNames.has(forbidden), false, forbidden)
})
