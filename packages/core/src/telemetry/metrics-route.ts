/**
 * Whether the metrics route is served on the app's own port, and the warning when it is not.
 * With `Prometheus:Port` 0 the route must be opened explicitly: a `Policy` it requires, or
 * `AllowAnonymous` (issue 33, item 4). "Any signed-in user" is no default here: in an app with
 * runtime providers a user of any customer could read every customer's counts, and with the
 * `app.provider.available` gauge the customer list itself. No OpenTelemetry import: check-config
 * reads this too (configuration-summary.ts), with telemetry off.
 */
import type { TelemetryConfiguration } from '../config/telemetry-schema.js'

/** Why the route is not on the app's port, as a configuration warning (never a value). */
export interface MetricsRouteWarning {
  readonly event: 'configuration.metrics_not_served'
  readonly key: string
  readonly message: string
}

/** The route's authorization on the app's port, or undefined when it is not served there. */
export function metricsRouteAccess (prometheus: TelemetryConfiguration['Prometheus']): { readonly allowAnonymous: true } | { readonly authorize: string } | undefined {
  if (prometheus.AllowAnonymous) return { allowAnonymous: true }
  const policy = prometheus.Policy.trim()
  return policy === '' ? undefined : { authorize: policy }
}

/**
 * The warning startup logs, and check-config lists, when metrics are switched on for the app's
 * port (`Telemetry:Enabled`, `Prometheus:Enabled`, `Port` 0) and neither `Policy` nor
 * `AllowAnonymous` opens the route: it is not registered (404).
 */
export function metricsRouteWarning (telemetry: TelemetryConfiguration, rootKey: string): MetricsRouteWarning | undefined {
  const prometheus = telemetry.Prometheus
  if (!telemetry.Enabled || !prometheus.Enabled || prometheus.Port !== 0 || metricsRouteAccess(prometheus) !== undefined) return undefined
  const key = `${rootKey}:Telemetry:Prometheus:Policy`
  return {
    event: 'configuration.metrics_not_served',
    key,
    message: `${key} is empty and ${rootKey}:Telemetry:Prometheus:AllowAnonymous is false, so the metrics route is not served on the app's port; name the policy a reader needs, or serve the metrics on a port of their own (${rootKey}:Telemetry:Prometheus:Port).`
  }
}
