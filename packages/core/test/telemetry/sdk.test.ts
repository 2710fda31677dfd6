/**
 * The OpenTelemetry SDK packages check-config imports (telemetry/sdk.ts, missingSdkProblems) are
 * the ones startup imports for the same Telemetry settings, and a missing one gives startup's
 * sentence (issue 33, item 7; the two entry points side by side: test/config/startup-parity.test.ts).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { missingSdkProblems, sdkPackagesFor } from '../../src/telemetry/sdk.js'
import { loadTestConfiguration } from '../helpers/app.js'

function telemetry (settings: Record<string, unknown>): ReturnType<typeof loadTestConfiguration>['config']['Telemetry'] {
  const loaded = loadTestConfiguration({ settings: { Telemetry: { Enabled: true, ...settings } } })
  assert.deepEqual(loaded.errors, [])
  return loaded.config.Telemetry
}

const MESSAGE = 'ProjectTemplate:Telemetry:Enabled is true but the OpenTelemetry SDK is not installed; add it to the app: npm install @opentelemetry/sdk-metrics @opentelemetry/resources @opentelemetry/exporter-prometheus @opentelemetry/exporter-metrics-otlp-http @opentelemetry/sdk-trace-node @opentelemetry/exporter-trace-otlp-http @fastify/otel.'

/** An importer that fails for `missing` as Node does for an absent package. */
const without = (missing: string) => async (name: string): Promise<unknown> => {
  if (name === missing) throw Object.assign(new Error(`Cannot find package '${name}'`), { code: 'ERR_MODULE_NOT_FOUND' })
  return {}
}

const cases: Array<{ name: string, settings: Record<string, unknown>, packages: string[] }> = [
  { name: 'Otlp', settings: { Otlp: { Enabled: true } }, packages: ['@opentelemetry/sdk-metrics', '@opentelemetry/resources', '@opentelemetry/exporter-metrics-otlp-http'] },
  { name: 'Prometheus', settings: { Prometheus: { Enabled: true } }, packages: ['@opentelemetry/sdk-metrics', '@opentelemetry/resources', '@opentelemetry/exporter-prometheus'] },
  {
    name: 'Otlp and Traces',
    settings: { Otlp: { Enabled: true }, Traces: { Enabled: true } },
    packages: ['@opentelemetry/sdk-metrics', '@opentelemetry/resources', '@opentelemetry/exporter-metrics-otlp-http', '@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-http', '@fastify/otel']
  }
]
for (const { name, settings, packages } of cases) {
  test(`${name}: startup imports ${packages.length} packages, and each missing one is reported with startup's sentence`, async () => {
    const configured = telemetry(settings)
    assert.deepEqual(sdkPackagesFor(configured), packages)
    for (const missing of packages) {
      assert.deepEqual(await missingSdkProblems(configured, 'ProjectTemplate', without(missing)), [{ key: 'ProjectTemplate:Telemetry:Enabled', message: MESSAGE }], missing)
    }
  })
}

test('a package these settings do not need may be missing, as at startup (@fastify/otel without Traces)', async () => {
  assert.deepEqual(await missingSdkProblems(telemetry({ Prometheus: { Enabled: true } }), 'ProjectTemplate', without('@fastify/otel')), [])
})

test('Telemetry:Enabled false imports nothing', async () => {
  const off = loadTestConfiguration({}).config.Telemetry
  assert.deepEqual(await missingSdkProblems(off, 'ProjectTemplate', async () => { throw new Error('imported') }), [])
})

test('the installed SDK (the core\'s dev dependencies): no problem, under the application\'s root key', async () => {
  assert.deepEqual(await missingSdkProblems(telemetry({ Otlp: { Enabled: true }, Traces: { Enabled: true } }), 'Contoso'), [])
})
