/**
 * The `app.provider.available` gauge: 1 or 0 for each enabled provider, configured or runtime,
 * read from the provider's own status when metrics are collected (nothing is recorded between
 * scrapes). The per-provider detail the anonymous health answer leaves out (routes/health.ts):
 * on the metrics endpoint it is behind a policy or on a port of its own (metrics-route.ts).
 */
import type { Meter } from '@opentelemetry/api'
import { labelValue } from './event-metrics.js'
import { METRICS } from './names.js'

/** What the gauge reads of a provider (providers/provider.ts, AuthenticationProvider). */
export interface ObservedProvider {
  readonly scheme: string
  readonly status: () => { readonly available: boolean }
}

/** Registers the gauge; `providers` is called at each collection, so runtime additions and removals show at the next scrape. */
export function observeProviders (meter: Meter, providers: () => Iterable<ObservedProvider>): void {
  const metric = METRICS.providerAvailable
  meter.createObservableGauge(metric.name, { description: metric.description, unit: metric.unit })
    .addCallback((result) => {
      for (const provider of providers()) result.observe(provider.status().available ? 1 : 0, { provider: labelValue(provider.scheme) })
    })
}
