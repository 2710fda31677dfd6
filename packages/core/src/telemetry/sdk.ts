/**
 * The OpenTelemetry SDK as configured by `<Root>:Telemetry`: a meter provider with the Prometheus
 * reader (served by the app's route or by the exporter's own listener) and/or a periodic OTLP
 * reader, and, with Traces:Enabled, a tracer provider exporting over OTLP plus @fastify/otel for
 * request spans. Loaded only through a dynamic import (telemetry/index.ts), so an app with
 * telemetry off never loads the SDK; the SDK packages are optional peer dependencies of the core.
 */
import type { Meter } from '@opentelemetry/api'
import type { FastifyPluginAsync } from 'fastify'
import type { TelemetryConfiguration } from '../config/telemetry-schema.js'
import { ConfigurationError, type KeyedProblem } from '../errors.js'
import { pathOf } from '../logger.js'
import { StoreTally } from './store-tally.js'

/** The SDK packages telemetry needs besides `@opentelemetry/api` (docs/telemetry.md, "Installing"). */
export const SDK_PACKAGES = [
  '@opentelemetry/sdk-metrics', '@opentelemetry/resources', '@opentelemetry/exporter-prometheus',
  '@opentelemetry/exporter-metrics-otlp-http', '@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-http', '@fastify/otel'
] as const
/** One of {@link SDK_PACKAGES}. */
export type SdkPackage = typeof SDK_PACKAGES[number]

/** The started SDK: what the telemetry plugin serves and closes. */
export interface TelemetrySdk {
  readonly meter: Meter
  /** The state store's counts and latencies, collected by every reader. */
  readonly tally: StoreTally
  /** The metrics in the Prometheus text format (Prometheus:Enabled with Port 0), else undefined. */
  readonly scrape?: () => Promise<string>
  /** @fastify/otel's plugin (Traces:Enabled), to register before any route. */
  readonly requestSpans?: FastifyPluginAsync
  /** Flushes and stops every reader, exporter and listener. */
  readonly shutdown: () => Promise<void>
}

/**
 * The SDK packages are CommonJS: Node's import gives their exports as named exports, a bundler's
 * chunk (the generated app's esbuild output) may give them only as `default`.
 */
function interop<T extends object> (module: T): T {
  const exports = (module as { default?: unknown }).default
  return exports !== null && typeof exports === 'object' ? { ...exports, ...module } : module
}

/**
 * Each SDK package's import, by name: the one place both startup ({@link startSdk}) and
 * check-config ({@link missingSdkProblems}) import them from, so the two give the same answer.
 */
const SDK_IMPORTS = {
  '@opentelemetry/sdk-metrics': async () => await import('@opentelemetry/sdk-metrics'),
  '@opentelemetry/resources': async () => await import('@opentelemetry/resources'),
  '@opentelemetry/exporter-prometheus': async () => await import('@opentelemetry/exporter-prometheus'),
  '@opentelemetry/exporter-metrics-otlp-http': async () => await import('@opentelemetry/exporter-metrics-otlp-http'),
  '@opentelemetry/sdk-trace-node': async () => await import('@opentelemetry/sdk-trace-node'),
  '@opentelemetry/exporter-trace-otlp-http': async () => await import('@opentelemetry/exporter-trace-otlp-http'),
  '@fastify/otel': async () => await import('@fastify/otel')
} as const satisfies Record<SdkPackage, () => Promise<unknown>>

/** The problem startup and check-config report when an SDK package the settings need cannot be imported. */
function sdkNotInstalled (rootKey: string): KeyedProblem {
  return {
    key: `${rootKey}:Telemetry:Enabled`,
    message: `${rootKey}:Telemetry:Enabled is true but the OpenTelemetry SDK is not installed; add it to the app: npm install ${SDK_PACKAGES.join(' ')}.`
  }
}

/** Imports an SDK package, or fails startup naming the switch and what to install. */
async function load<K extends SdkPackage> (name: K, rootKey: string): Promise<Awaited<ReturnType<typeof SDK_IMPORTS[K]>>> {
  let module: Awaited<ReturnType<typeof SDK_IMPORTS[K]>>
  try {
    module = await SDK_IMPORTS[name]() as Awaited<ReturnType<typeof SDK_IMPORTS[K]>>
  } catch (error) {
    throw new ConfigurationError([sdkNotInstalled(rootKey)], { cause: error })
  }
  return interop(module)
}

/** The SDK packages {@link startSdk} imports for `settings` (Telemetry:Enabled assumed). */
export function sdkPackagesFor (settings: TelemetryConfiguration): SdkPackage[] {
  return [
    '@opentelemetry/sdk-metrics', '@opentelemetry/resources',
    ...(settings.Prometheus.Enabled ? ['@opentelemetry/exporter-prometheus' as const] : []),
    ...(settings.Otlp.Enabled ? ['@opentelemetry/exporter-metrics-otlp-http' as const] : []),
    ...(settings.Traces.Enabled ? ['@opentelemetry/sdk-trace-node' as const, '@opentelemetry/exporter-trace-otlp-http' as const, '@fastify/otel' as const] : [])
  ]
}

/**
 * What check-config reports for the SDK (it starts nothing): imports each package startup would
 * import for `settings` and, when one cannot be imported, the very problem startup fails with.
 * Empty when telemetry is off or everything it needs is installed.
 */
export async function missingSdkProblems (settings: TelemetryConfiguration, rootKey: string, importer: (name: SdkPackage) => Promise<unknown> = async (name) => await SDK_IMPORTS[name]()): Promise<KeyedProblem[]> {
  if (!settings.Enabled) return []
  const imported = await Promise.allSettled(sdkPackagesFor(settings).map(async (name) => await importer(name)))
  return imported.some((result) => result.status === 'rejected') ? [sdkNotInstalled(rootKey)] : []
}

const OTLP_DEFAULT_ENDPOINT = 'http://localhost:4318'

function otlpUrl (endpoint: string, signal: 'metrics' | 'traces'): string {
  const base = endpoint.trim() === '' ? (process.env.OTEL_EXPORTER_OTLP_ENDPOINT ?? OTLP_DEFAULT_ENDPOINT) : endpoint.trim()
  return `${base.replace(/\/+$/, '')}/v1/${signal}`
}

export async function startSdk (settings: TelemetryConfiguration, serviceName: string, rootKey: string): Promise<TelemetrySdk> {
  const [{ MeterProvider, PeriodicExportingMetricReader, DataPointType, AggregationTemporality }, { resourceFromAttributes }, { ValueType, trace, context, propagation }] = await Promise.all([
    load('@opentelemetry/sdk-metrics', rootKey),
    load('@opentelemetry/resources', rootKey),
    import('@opentelemetry/api')
  ])
  const tally = new StoreTally({ dataPointType: DataPointType, cumulative: AggregationTemporality.CUMULATIVE, doubleValueType: ValueType.DOUBLE })
  const metricProducers = [tally as unknown as import('@opentelemetry/sdk-metrics').MetricProducer]
  const resource = resourceFromAttributes({ 'service.name': serviceName })
  const readers: Array<InstanceType<typeof PeriodicExportingMetricReader> | import('@opentelemetry/exporter-prometheus').PrometheusExporter> = []
  let scrape: (() => Promise<string>) | undefined
  let prometheusListener: import('@opentelemetry/exporter-prometheus').PrometheusExporter | undefined

  if (settings.Prometheus.Enabled) {
    const { PrometheusExporter, PrometheusSerializer } = await load('@opentelemetry/exporter-prometheus', rootKey)
    const separate = settings.Prometheus.Port !== 0
    const exporter = new PrometheusExporter({
      preventServerStart: true,
      host: settings.Prometheus.Host,
      port: settings.Prometheus.Port,
      endpoint: settings.Prometheus.Path,
      metricProducers
    })
    readers.push(exporter)
    if (separate) {
      prometheusListener = exporter
    } else {
      const serializer = new PrometheusSerializer()
      scrape = async () => {
        const { resourceMetrics } = await exporter.collect()
        return serializer.serialize(resourceMetrics)
      }
    }
  }
  if (settings.Otlp.Enabled) {
    const { OTLPMetricExporter } = await load('@opentelemetry/exporter-metrics-otlp-http', rootKey)
    readers.push(new PeriodicExportingMetricReader({
      exporter: new OTLPMetricExporter({ url: otlpUrl(settings.Otlp.Endpoint, 'metrics') }),
      exportIntervalMillis: settings.Otlp.ExportIntervalSeconds * 1000,
      metricProducers
    }))
  }
  const meterProvider = new MeterProvider({ resource, readers })
  // The exporter's own listener starts once the reader is attached, on Host:Port only.
  await prometheusListener?.startServer()

  let requestSpans: FastifyPluginAsync | undefined
  let tracerShutdown = async (): Promise<void> => {}
  if (settings.Traces.Enabled) {
    const [{ NodeTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler }, { OTLPTraceExporter }, { FastifyOtelInstrumentation }] = await Promise.all([
      load('@opentelemetry/sdk-trace-node', rootKey),
      load('@opentelemetry/exporter-trace-otlp-http', rootKey),
      load('@fastify/otel', rootKey)
    ])
    const tracerProvider = new NodeTracerProvider({
      resource,
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.Traces.SamplePercent / 100) }),
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: otlpUrl(settings.Otlp.Endpoint, 'traces') }))]
    })
    // Global: @fastify/otel and the sign-in step spans take their tracer from the API.
    tracerProvider.register()
    const instrumentation = new FastifyOtelInstrumentation({
      // @fastify/otel records url.path with the query string: OIDC code and state, SAML payloads.
      // The path alone, as in the request log (logger.ts); no exception messages or stacks.
      requestHook: (span, request) => { span.setAttribute('url.path', pathOf(request.url)) },
      recordExceptions: false
    })
    instrumentation.setTracerProvider(tracerProvider)
    requestSpans = instrumentation.plugin() as unknown as FastifyPluginAsync
    tracerShutdown = async () => {
      await tracerProvider.shutdown()
      // Free the globals register() set, so an app built after this one (tests) can set its own.
      trace.disable()
      context.disable()
      propagation.disable()
    }
  }

  return {
    meter: meterProvider.getMeter('@project-template/core'),
    tally,
    ...(scrape === undefined ? {} : { scrape }),
    ...(requestSpans === undefined ? {} : { requestSpans }),
    shutdown: async () => {
      await Promise.allSettled([meterProvider.shutdown(), tracerShutdown()])
    }
  }
}
