/**
 * Cross-key rules of `<Root>:Telemetry` (docs/telemetry.md), in the form of config/rules.ts: each
 * returns sentences naming the full colon path, never a configured value.
 */
import type { ConfigurationProblem } from './bind.js'
import type { CoreConfiguration } from './schema.js'

const problem = (key: string, message: string): ConfigurationProblem => ({ key, message })

/** Telemetry switched on must export somewhere; spans have only OTLP to go to; the metrics path is a path. */
export function telemetrySettings ({ config, rootKey }: { readonly config: CoreConfiguration, readonly rootKey: string }): ConfigurationProblem[] {
  const TELEMETRY = `${rootKey}:Telemetry`
  const telemetry = config.Telemetry
  if (!telemetry.Enabled) return []
  const problems: ConfigurationProblem[] = []
  if (!telemetry.Prometheus.Enabled && !telemetry.Otlp.Enabled) {
    problems.push(problem(`${TELEMETRY}:Enabled`, `${TELEMETRY}:Enabled is true but neither ${TELEMETRY}:Prometheus:Enabled nor ${TELEMETRY}:Otlp:Enabled is; enable an exporter or switch telemetry off.`))
  }
  if (telemetry.Traces.Enabled && !telemetry.Otlp.Enabled) {
    problems.push(problem(`${TELEMETRY}:Traces:Enabled`, `${TELEMETRY}:Traces:Enabled needs ${TELEMETRY}:Otlp:Enabled: spans are exported over OTLP only.`))
  }
  const prometheus = telemetry.Prometheus
  if (prometheus.Enabled && !/^\/[A-Za-z0-9._~\-/]*$/.test(prometheus.Path)) {
    problems.push(problem(`${TELEMETRY}:Prometheus:Path`, `${TELEMETRY}:Prometheus:Path must be an absolute path of letters, digits and . _ ~ - / (for example /metrics).`))
  }
  if (telemetry.Otlp.Enabled && telemetry.Otlp.Endpoint.trim() !== '' && !/^https?:\/\/[^/?#\s]+\/?$/.test(telemetry.Otlp.Endpoint.trim())) {
    problems.push(problem(`${TELEMETRY}:Otlp:Endpoint`, `${TELEMETRY}:Otlp:Endpoint must be an http or https base URL without a path (for example http://collector:4318).`))
  }
  return problems
}
