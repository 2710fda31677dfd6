/**
 * Every metric this app records, once: its OpenTelemetry name, kind, unit, labels, and which log
 * events (docs/audit-events.md, the `event` field) count into it. docs/telemetry.md lists the same
 * table and test/telemetry/names.test.ts keeps the two in step. No OpenTelemetry import here: the
 * table is read by the docs test and by the recorder (event-metrics.ts), which only loads when
 * telemetry is switched on.
 *
 * Labels are bounded: a provider scheme, an outcome, a failure class, a policy name, a store
 * kind, an HTTP method, route template or status code, a SCIM connection's name (a known one:
 * any other is `unknown`). Never a user, a session, an issuer, a URL or a path with ids.
 */

export type MetricKind = 'counter' | 'histogram' | 'gauge'

export interface MetricDefinition {
  readonly name: string
  readonly kind: MetricKind
  readonly unit: string
  readonly description: string
  readonly labels: readonly string[]
}

/** The metrics, by a short key the recorder uses. Names never change in a minor version. */
export const METRICS = {
  signInStarted: { name: 'app.sign_in.started', kind: 'counter', unit: '{sign_in}', description: 'External sign-ins started (a challenge sent to the provider).', labels: ['provider'] },
  signInSucceeded: { name: 'app.sign_in.succeeded', kind: 'counter', unit: '{sign_in}', description: 'External sign-ins whose provider response was verified and whose session was stored.', labels: ['provider'] },
  signInRefused: { name: 'app.sign_in.refused', kind: 'counter', unit: '{sign_in}', description: 'External sign-ins refused, by failure class (docs/errors.md, sign-in failures).', labels: ['provider', 'failure'] },
  sessionCreated: { name: 'app.session.created', kind: 'counter', unit: '{session}', description: 'Sessions created by any scheme, a consumer flow\'s reply.signIn included.', labels: ['provider'] },
  signOut: { name: 'app.sign_out', kind: 'counter', unit: '{sign_out}', description: 'Sign-outs by kind: local (POST /Account/Logout), everywhere, back_channel (OpenID Connect logout token), saml_slo (the IdP\'s LogoutRequest).', labels: ['kind', 'provider'] },
  tokenRefresh: { name: 'app.token_refresh', kind: 'counter', unit: '{refresh}', description: 'Provider token refreshes, by outcome and failure class.', labels: ['provider', 'outcome', 'failure'] },
  providerMetadata: { name: 'app.provider.metadata', kind: 'counter', unit: '{fetch}', description: 'Provider metadata fetches (OpenID Connect discovery, SAML2 IdP metadata), by outcome.', labels: ['provider', 'outcome'] },
  providerSigningKeys: { name: 'app.provider.signing_keys', kind: 'counter', unit: '{fetch}', description: 'Provider signing keys fetched again (an ID token or logout token named an unknown key id).', labels: ['provider', 'outcome'] },
  providerAvailable: { name: 'app.provider.available', kind: 'gauge', unit: '1', description: '1 while the provider\'s metadata is usable, 0 while it is unavailable; every enabled provider, configured or runtime.', labels: ['provider'] },
  authorizationRefused: { name: 'app.authorization.refused', kind: 'counter', unit: '{request}', description: 'Requests refused by an authorization policy: challenge (no user) or forbid (the user lacks it); governance for the governance evaluator.', labels: ['policy', 'outcome'] },
  httpServerDuration: { name: 'http.server.request.duration', kind: 'histogram', unit: 's', description: 'Duration of HTTP server requests (OpenTelemetry semantic conventions), by method, route template and status code; a request that matched no route has no http.route.', labels: ['http.request.method', 'http.route', 'http.response.status_code'] },
  stateOperations: { name: 'app.state_store.operations', kind: 'counter', unit: '{operation}', description: 'State-store operations by outcome: ok, unavailable (answered 503), full (embedded bound reached), error.', labels: ['store', 'operation', 'outcome'] },
  stateDuration: { name: 'app.state_store.duration', kind: 'histogram', unit: 's', description: 'State-store operation latency.', labels: ['store', 'operation'] },
  stateAvailable: { name: 'app.state_store.available', kind: 'gauge', unit: '1', description: '1 while the state store answers, 0 while it is unavailable.', labels: ['store'] },
  stateOutages: { name: 'app.state_store.outages', kind: 'counter', unit: '{outage}', description: 'A state-store connection went down (Redis: commands or subscriber), or the embedded store could not write its file (file).', labels: ['store', 'connection'] },
  provisioningRequests: { name: 'app.provisioning.requests', kind: 'counter', unit: '{request}', description: 'SCIM requests by connection (unknown: a name that is no connection), resource, operation (list, read, create, replace, patch, delete) and status class (2xx, 4xx, 5xx).', labels: ['connection', 'resource', 'operation', 'status_class'] },
  activeSessions: { name: 'app.sessions.active', kind: 'gauge', unit: '{session}', description: 'Live session records the store holds (Embedded only: Redis cannot count them without scanning).', labels: ['store'] }
} as const satisfies Record<string, MetricDefinition>

export type MetricKey = keyof typeof METRICS

/** What one log event records: the metric and the labels read from the line (and its logger's bindings). */
export interface EventMetric {
  readonly metric: MetricKey
  /** Fixed labels (`kind: 'local'`). */
  readonly labels?: Readonly<Record<string, string>>
  /** Labels read from a field of the line; a missing field gives an empty label. */
  readonly fields?: Readonly<Record<string, string>>
}

/** The log events that count, by event name. Events not listed here count nothing. */
export const EVENT_METRICS: Readonly<Record<string, EventMetric>> = {
  'external.sign_in.succeeded': { metric: 'signInSucceeded', fields: { provider: 'provider' } },
  'external.sign_in.failed': { metric: 'signInRefused', fields: { provider: 'provider', failure: 'failure' } },
  'external.sign_in.refused_by_application': { metric: 'signInRefused', labels: { failure: 'application' }, fields: { provider: 'provider' } },
  'session.signed_in': { metric: 'sessionCreated', fields: { provider: 'provider' } },
  'session.signed_out': { metric: 'signOut', labels: { kind: 'local' }, fields: { provider: 'provider' } },
  'session.signed_out_everywhere': { metric: 'signOut', labels: { kind: 'everywhere' }, fields: { provider: 'provider' } },
  'oidc.back_channel_logout.succeeded': { metric: 'signOut', labels: { kind: 'back_channel' }, fields: { provider: 'provider' } },
  'saml2.logout.request.succeeded': { metric: 'signOut', labels: { kind: 'saml_slo' }, fields: { provider: 'provider' } },
  'session.token_refresh.succeeded': { metric: 'tokenRefresh', labels: { outcome: 'succeeded', failure: '' }, fields: { provider: 'provider' } },
  'session.token_refresh.failed': { metric: 'tokenRefresh', labels: { outcome: 'failed' }, fields: { provider: 'provider', failure: 'failure' } },
  'external.metadata.loaded': { metric: 'providerMetadata', labels: { outcome: 'loaded' }, fields: { provider: 'provider' } },
  'external.metadata.failed': { metric: 'providerMetadata', labels: { outcome: 'failed' }, fields: { provider: 'provider' } },
  'saml2.metadata.loaded': { metric: 'providerMetadata', labels: { outcome: 'loaded' }, fields: { provider: 'provider' } },
  'saml2.metadata.failed': { metric: 'providerMetadata', labels: { outcome: 'failed' }, fields: { provider: 'provider' } },
  'oidc.signing_keys.refetched': { metric: 'providerSigningKeys', fields: { provider: 'provider', outcome: 'found' } },
  'governance.denied': { metric: 'authorizationRefused', labels: { policy: 'governance', outcome: 'forbid' } },
  'state.store.unavailable': { metric: 'stateOutages', fields: { store: 'stateStore', connection: 'connection' } },
  'state.embedded.write_failed': { metric: 'stateOutages', labels: { connection: 'file' }, fields: { store: 'stateStore' } },
  'provisioning.request': { metric: 'provisioningRequests', fields: { connection: 'connection', resource: 'resource', operation: 'operation', status_class: 'statusClass' } }
}

/** Fields of a logger's bindings (`log.child({ provider })`) that label the events it logs. */
export const BINDING_FIELDS: readonly string[] = ['provider', 'stateStore']

/** Longest label value kept; a longer one (never expected) is cut, so a bug cannot blow up a series. */
export const MAX_LABEL_LENGTH = 64

/** Latency buckets of the state store, in seconds: embedded reads are microseconds, Redis round trips a millisecond or more. */
export const STATE_DURATION_BUCKETS: readonly number[] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

/**
 * Request duration buckets, in seconds: the OpenTelemetry semantic conventions' advice for
 * `http.server.request.duration`, so dashboards built for it read these as they are.
 */
export const HTTP_DURATION_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]
