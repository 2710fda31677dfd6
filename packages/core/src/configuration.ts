/**
 * The configuration as the app loads it: config/ (the core's sections, the sources, the binder
 * and the cross-key rules of the core's own sections) composed with the schema and rules of the
 * provider types (providers/application-schema.ts, providers/settings-rules.ts,
 * providers/configuration-rules.ts, from each type's registration) and the rules the
 * data-protection keys and the state store bring from their own folders. config/ imports none of
 * them; {@link RULES} is the one list, in the order problems are reported.
 */
import { loadConfigurationWith, type LoadOptions } from './config/load.js'
import {
  allowedHostsArePatterns, absoluteLifetimeCoversIdleLifetime, authenticationDisabledRequiresNoFallback,
  claimTypesAndValues, cookieSessionRequiredWhenAuthenticationEnabled, forwardedHeadersNeedKnownProxies,
  headersTimeoutWithinRequestTimeout, insecureCookieOnlyInDevelopment, knownProxiesAreAddresses
} from './config/rules.js'
import { CONFIGURATION_SCHEMAS, type ApplicationRule, type ApplicationRuleContext, type LoadedConfiguration } from './providers/application-schema.js'
import {
  apiKeyPrefixesAreDistinct, bearerAudiencesAreNotSignInClients, bearerIntrospectionIsRouted, callbackPathsAreLocalAndDistinct, defaultSchemes, providerDomainsAreDistinct, providersRequireAuthentication, providerSchemesAreFixed, publicOriginIsAnOrigin, bearerSchemesHaveAnOrigin
} from './providers/configuration-rules.js'
import { telemetrySettings } from './config/telemetry-rules.js'
import type { ConfigurationProblem } from './config/bind.js'
import { applicationDiscriminatorIsShort, dataProtectionKeysAreStrong, dataProtectionKeyStoreIsUsable } from './data-protection/settings-rules.js'
import { providerTypeSettings } from './providers/settings-rules.js'
import { internalHostAllowanceIsValid } from './providers/runtime-definitions.js'
import { stateStoreSettings } from './state/settings-rules.js'
import { downstreamApiSettings } from './downstream/settings-rules.js'
import { corsSettings } from './config/cors-rules.js'
import { directoryStoreSettings } from './directory/settings-rules.js'
import { provisioningConnectionSettings } from './scim/connections.js'
import { provisioningConnectionSchemes } from './scim/connection-schemes.js'

/** Every cross-key rule, in the order their messages are reported. */
export const RULES: readonly ApplicationRule[] = [
  authenticationDisabledRequiresNoFallback,
  cookieSessionRequiredWhenAuthenticationEnabled,
  providersRequireAuthentication,
  defaultSchemes,
  insecureCookieOnlyInDevelopment,
  claimTypesAndValues,
  providerSchemesAreFixed,
  ...providerTypeSettings,
  callbackPathsAreLocalAndDistinct,
  providerDomainsAreDistinct,
  bearerIntrospectionIsRouted,
  apiKeyPrefixesAreDistinct,
  internalHostAllowanceIsValid,
  forwardedHeadersNeedKnownProxies,
  knownProxiesAreAddresses,
  dataProtectionKeysAreStrong,
  dataProtectionKeyStoreIsUsable,
  applicationDiscriminatorIsShort,
  publicOriginIsAnOrigin,
  bearerSchemesHaveAnOrigin,
  allowedHostsArePatterns,
  headersTimeoutWithinRequestTimeout,
  absoluteLifetimeCoversIdleLifetime,
  stateStoreSettings,
  directoryStoreSettings,
  provisioningConnectionSettings,
  provisioningConnectionSchemes,
  telemetrySettings,
  downstreamApiSettings,
  corsSettings
]

export function applyRules (context: ApplicationRuleContext): ConfigurationProblem[] {
  return RULES.flatMap((rule) => rule(context))
}

/**
 * Loads, binds and validates the configuration with every rule ({@link RULES}). The same
 * function serves `server.ts` and `npm run check-config`; only those entry points pass in
 * `process.env`.
 *
 * @public
 */
export function loadConfiguration (options: LoadOptions): LoadedConfiguration {
  return withCrossProviderWarnings(loadConfigurationWith(options, RULES, CONFIGURATION_SCHEMAS))
}

/**
 * {@link loadConfiguration} without `appsettings.<Environment>.json` and user secrets: what an
 * app's tests load (testing/app.ts `loadTestConfiguration`), `appsettings.json` and the test's own
 * settings, whatever a developer keeps in their Development settings.
 */
export function loadConfigurationWithoutEnvironmentFiles (options: LoadOptions): LoadedConfiguration {
  return withCrossProviderWarnings(loadConfigurationWith(options, RULES, CONFIGURATION_SCHEMAS, { read: false }))
}

/** Warnings across providers (logged by startup, listed by check-config); values bound, so only when valid. */
function withCrossProviderWarnings (loaded: LoadedConfiguration): LoadedConfiguration {
  if (loaded.errors.length > 0) return loaded
  return { ...loaded, warnings: [...loaded.warnings, ...bearerAudiencesAreNotSignInClients(loaded.config, loaded.applicationName)] }
}
