/**
 * `<Root>:Telemetry`: metrics and traces in OpenTelemetry (docs/telemetry.md). Off by default;
 * while off, nothing of the OpenTelemetry SDK is loaded.
 */
import { Type, type Static } from '@sinclair/typebox'

export const TelemetrySchema = Type.Object({
  Enabled: Type.Boolean({ default: false, description: 'Extension. Metrics (and, with Traces:Enabled, request spans) in OpenTelemetry, exported by Prometheus and/or Otlp below. false: the OpenTelemetry SDK is not even loaded. docs/telemetry.md.' }),
  ServiceName: Type.String({ default: '', description: 'Extension. service.name of the metrics and spans. Empty: the application\'s name (the configuration root key).' }),
  Prometheus: Type.Object({
    Enabled: Type.Boolean({ default: false, description: 'Extension. Serves the metrics in the Prometheus text format at Path, on the app\'s own listener (Port 0) or on a listener of its own (Port).' }),
    Path: Type.String({ default: '/metrics', description: 'Extension. Path of the metrics endpoint.' }),
    Port: Type.Integer({ default: 0, minimum: 0, maximum: 65535, description: 'Extension. 0: Path is a route of the app, served only when Policy or AllowAnonymous says who may read it. 1-65535: a separate listener on Host:Port serves Path without authentication (keep it off the public network); the app\'s own listener has no metrics route.' }),
    Host: Type.String({ default: '127.0.0.1', description: 'Extension. Address of the separate metrics listener (Port not 0). Default loopback; 0.0.0.0 or :: exposes it to every network the host is on.' }),
    AllowAnonymous: Type.Boolean({ default: false, description: 'Extension. DANGEROUS: with Port 0, anyone who reaches the app can read its metrics (sign-in counts, refusal classes, store health). Only behind a network boundary that keeps the path internal.' }),
    Policy: Type.String({ default: '', description: 'Extension. With Port 0 and AllowAnonymous false, the named authorization policy the metrics route requires. Empty: the route is not served on the app\'s port (startup logs a warning naming this key); metrics name every provider, runtime customers included, so any signed-in user is no default.' })
  }, { additionalProperties: false, default: {} }),
  Otlp: Type.Object({
    Enabled: Type.Boolean({ default: false, description: 'Extension. Pushes the metrics (and the spans when Traces:Enabled) to an OpenTelemetry collector over OTLP/HTTP (protobuf).' }),
    Endpoint: Type.String({ default: '', description: 'Extension. The collector\'s base URL (http://collector:4318); /v1/metrics and /v1/traces are appended. Empty: the OTEL_EXPORTER_OTLP_ENDPOINT environment variable, else http://localhost:4318.' }),
    ExportIntervalSeconds: Type.Integer({ default: 60, minimum: 1, maximum: 3600, description: 'Extension. How often the metrics are pushed to the collector.' })
  }, { additionalProperties: false, default: {} }),
  Traces: Type.Object({
    Enabled: Type.Boolean({ default: false, description: 'Extension. Request spans through @fastify/otel (one span per request, child spans for hooks and the handler) with the sign-in flow\'s steps as child spans, exported over OTLP (requires Otlp:Enabled).' }),
    SamplePercent: Type.Integer({ default: 100, minimum: 0, maximum: 100, description: 'Extension. Share of requests traced, 0-100 percent, parent-based: a request whose caller sent a sampled traceparent is traced.' })
  }, { additionalProperties: false, default: {} })
}, { additionalProperties: false, default: {} })

export type TelemetryConfiguration = Static<typeof TelemetrySchema>
