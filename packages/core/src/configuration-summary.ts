/**
 * What `npm run check-config` reports: a summary of a loaded configuration (environment, sources,
 * posture, enabled providers, where each secret came from, warnings, errors) as plain data, and
 * its readable form. Never a configured value: secrets appear as their key and source only.
 */
import type { LoadedConfiguration } from './providers/application-schema.js'
import { PROVIDERS_DOCUMENT } from './documentation.js'
import { clientAuthenticationWarnings } from './oidc/client-authentication.js'
import { enabledProviderInstancesUnder, signsIn } from './providers/provider-instances.js'
import { metricsRouteWarning } from './telemetry/metrics-route.js'

export interface ConfigurationSummary {
  readonly valid: boolean
  readonly environment: string
  /** Where the environment name came from: `NODE_ENV`, or the default (NODE_ENV unset). */
  readonly environmentFrom?: 'NODE_ENV' | 'default'
  /** True when the app root holds a `.env` that was not read (it is read in Development only). */
  readonly dotenvIgnored?: boolean
  /** Sources read, in order; later wins. */
  readonly sources: readonly string[]
  readonly authentication: { readonly enabled: boolean, readonly requireAuthenticatedUserByDefault: boolean }
  /** The enabled providers users sign in with. */
  readonly providers: ReadonlyArray<{ readonly name: string, readonly displayName: string }>
  /** The enabled schemes that authenticate API callers by token (JwtBearer), and the paths that accept tokens. */
  readonly apiSchemes: ReadonlyArray<{ readonly name: string, readonly type: string }>
  /** `Authentication:Bearer:PathPrefixes`: where bearer tokens are accepted (with an API scheme). */
  readonly bearerPathPrefixes: readonly string[]
  /** `DownstreamApis:<Name>`: the APIs the app calls, and how it gets their tokens. */
  readonly downstreamApis: ReadonlyArray<{ readonly name: string, readonly userTokenScheme?: string, readonly clientCredentials: boolean }>
  /** Configured secrets by key, and where each came from. */
  readonly secrets: ReadonlyArray<{ readonly key: string, readonly source: string }>
  /** The data-protection keys: configured (shared), or a local key directory (one instance only). */
  readonly dataProtection: { readonly keys: number, readonly keyDirectory?: string }
  readonly warnings: ReadonlyArray<{ readonly event: string, readonly key: string, readonly file?: string, readonly message: string }>
  readonly errors: ReadonlyArray<{ readonly key: string, readonly message: string }>
}

/** How the environment was chosen, as the entry point knows it (startup.ts). */
export interface EnvironmentOrigin {
  readonly environmentFrom: 'NODE_ENV' | 'default'
  readonly dotenvIgnored: boolean
}

export function summarizeConfiguration (loaded: LoadedConfiguration, origin?: EnvironmentOrigin): ConfigurationSummary {
  const { config } = loaded
  const keys = config.DataProtection.Keys.length
  const enabled = config.Authentication.Enabled ? enabledProviderInstancesUnder(config, loaded.applicationName) : []
  return {
    valid: loaded.errors.length === 0,
    environment: loaded.environmentName,
    ...(origin === undefined ? {} : { environmentFrom: origin.environmentFrom, dotenvIgnored: origin.dotenvIgnored }),
    sources: [...loaded.sources],
    authentication: {
      enabled: config.Authentication.Enabled,
      requireAuthenticatedUserByDefault: config.Authorization.RequireAuthenticatedUserByDefault
    },
    providers: enabled.filter(signsIn).map((instance) => ({ name: instance.scheme, displayName: instance.settings.DisplayName })),
    apiSchemes: enabled.filter((instance) => !signsIn(instance)).map((instance) => ({ name: instance.scheme, type: instance.protocol })),
    bearerPathPrefixes: [...config.Authentication.Bearer.PathPrefixes],
    downstreamApis: Object.entries(config.DownstreamApis).map(([name, api]) => ({
      name,
      ...(api.UserToken.Scheme.trim() === '' ? {} : { userTokenScheme: api.UserToken.Scheme }),
      clientCredentials: api.ClientCredentials.ClientId.trim() !== ''
    })),
    secrets: loaded.secretOrigins.map((origin) => ({ key: origin.key, source: origin.source })),
    dataProtection: keys > 0 ? { keys } : { keys, keyDirectory: config.DataProtection.KeyDirectory },
    warnings: [
      ...loaded.warnings.map((warning) => ({ event: warning.event, key: warning.key, ...(warning.file === undefined ? {} : { file: warning.file }), message: warning.message })),
      // Every OpenID Connect instance (the contract section and each named scheme), by its own key.
      ...enabled.flatMap((instance) => instance.protocol === 'OpenIdConnect'
        ? clientAuthenticationWarnings(instance.settings, `${instance.keyPrefix}:TokenEndpointAuthMethod`)
        : []),
      ...[metricsRouteWarning(config.Telemetry, loaded.applicationName)].filter((warning) => warning !== undefined)
    ],
    errors: loaded.errors.map((problem) => ({ key: problem.key, message: problem.message }))
  }
}

/** The readable report: a few labelled lines, then warnings and errors as lists. */
export function formatSummary (summary: ConfigurationSummary, rootKey: string): string {
  const lines: string[] = []
  lines.push(`Configuration: ${summary.valid ? 'valid' : `INVALID (${summary.errors.length} ${summary.errors.length === 1 ? 'error' : 'errors'}); the application would not start`}`)
  lines.push(`Environment:   ${summary.environment} (${summary.environmentFrom === 'default' ? 'the default: NODE_ENV is not set; NODE_ENV=development selects Development' : 'from NODE_ENV'})`)
  lines.push(`Sources:       ${summary.sources.join(' -> ')} (later wins)`)
  if (summary.dotenvIgnored === true) lines.push('  .env is not read: it is read in Development only (NODE_ENV=development, as npm run dev sets)')
  const { enabled, requireAuthenticatedUserByDefault } = summary.authentication
  lines.push(`Posture:       ${enabled ? 'authentication on' : 'authentication OFF'}; ${requireAuthenticatedUserByDefault ? 'routes without metadata require a signed-in user' : 'routes without metadata are PUBLIC'}`)
  lines.push(`Providers:     ${summary.providers.length === 0
    ? (enabled ? `none enabled (nobody can sign in yet; see ${PROVIDERS_DOCUMENT})` : 'none')
    : summary.providers.map((provider) => `${provider.displayName} (${provider.name})`).join(', ')}`)
  lines.push(`API schemes:   ${summary.apiSchemes.length === 0
    ? 'none (API routes accept the session cookie only)'
    : `${summary.apiSchemes.map((scheme) => `${scheme.name} (${scheme.type})`).join(', ')}: bearer tokens on ${summary.bearerPathPrefixes.join(', ')}`}`)
  lines.push(`Downstream:    ${summary.downstreamApis.length === 0 ? 'none' : summary.downstreamApis.map(downstreamLine).join(', ')}`)
  lines.push(`Session keys:  ${summary.dataProtection.keys > 0
    ? `${summary.dataProtection.keys} configured (${rootKey}:DataProtection:Keys)`
    : `none configured; one is generated in ${summary.dataProtection.keyDirectory ?? '.keys'} (one instance only; npm run generate-key makes a shared one)`}`)
  lines.push(`Secrets:       ${summary.secrets.length === 0 ? 'none configured' : `${summary.secrets.length} configured (values not shown)`}`)
  for (const secret of summary.secrets) lines.push(`  ${secret.key}  from ${secret.source}`)
  lines.push(`Warnings:      ${summary.warnings.length}`)
  for (const warning of summary.warnings) lines.push(`  - ${warning.message}`)
  if (summary.errors.length > 0) {
    lines.push(`Errors:        ${summary.errors.length}`)
    for (const problem of summary.errors) lines.push(`  - ${problem.message}`)
  }
  return `${lines.join('\n')}\n`
}

/** `Orders (as the user with OpenIdConnect's token; as the app)`: an API the app calls, and how. */
function downstreamLine (api: ConfigurationSummary['downstreamApis'][number]): string {
  const ways = [
    ...(api.userTokenScheme === undefined ? [] : [`as the user with ${api.userTokenScheme}'s token`]),
    ...(api.clientCredentials ? ['as the app'] : [])
  ]
  return `${api.name} (${ways.length === 0 ? 'no token configured' : ways.join('; ')})`
}
