/**
 * One OpenID Connect instance's state, shared by its handlers (openid-connect-sign-in.ts and the
 * endpoints in openid-connect.ts): settings, the discovered metadata (loaded in the background when
 * the app is ready, refreshed hourly, retried with backoff) and the provider's signing keys.
 * Created once per configured OpenID Connect provider (the contract section or a named scheme).
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import * as client from 'openid-client'
import { isDevelopmentLoopbackHttp } from '../../http/host-trust.js'
import { discoverProvider, discoveryUrlOf, OUTBOUND_TIMEOUT_SECONDS, ProviderMetadata, readAllowedTenants, readClientAssertionKeys, type AllowedTenants } from '../../oidc/relying-party.js'
import { ProviderKeys } from '../../oidc/provider-keys.js'
import { isFieldPath } from '../../sign-in/claim-paths.js'
import { networkCauseCode, urlForLog } from '../../http/outbound-diagnostics.js'
import { tooLargeFields } from '../../http/bounded-fetch.js'
import type { Dispatcher } from '../../http/outbound-address.js'
import { postChosenNotice } from '../../oidc/client-authentication.js'
import type { ProviderInstance } from '../../providers/provider-instances.js'
import type { ProviderRegistrationOptions } from '../authentication.js'

export type OpenIdConnectInstance = Extract<ProviderInstance, { protocol: 'OpenIdConnect' }>

/** One OpenID Connect instance as its handlers see it. */
export interface OpenIdConnectContext {
  readonly app: FastifyInstance
  readonly options: ProviderRegistrationOptions<OpenIdConnectInstance>
  readonly settings: OpenIdConnectInstance['settings']
  readonly scheme: string
  readonly log: FastifyBaseLogger
  readonly metadata: ProviderMetadata
  /** The signing keys of the discovered jwks_uri (one set per URI, kept across refreshes). */
  keysOf: (config: client.Configuration) => ProviderKeys
  /** ClaimMappings sources that are nested claim paths. */
  readonly fieldPaths: readonly string[]
  /** `AllowedTenants`, read (oidc/tenant-issuer.ts); undefined when empty. */
  readonly allowedTenants?: AllowedTenants
}

/** `AllowedTenants`, read; undefined when none are listed (startup validation refused any invalid entry). */
function allowedTenantsOf (entries: readonly string[]): AllowedTenants | undefined {
  const read = readAllowedTenants(entries)
  return 'tenants' in read && read.tenants.size > 0 ? read.tenants : undefined
}

/** http to the provider only for a loopback Authority in Development (validation rejects it elsewhere). */
export function allowsInsecureRequests (authority: string, environmentName: string): boolean {
  return isDevelopmentLoopbackHttp(new URL(authority), environmentName)
}

/** The instance's discovered metadata, with its load and failure log lines. */
function metadataOf (options: ProviderRegistrationOptions<OpenIdConnectInstance>, log: FastifyBaseLogger, allowedTenants: AllowedTenants | undefined): ProviderMetadata {
  const settings = options.instance.settings
  const allowInsecureRequests = allowsInsecureRequests(settings.Authority, options.environmentName)
  let warnedBackChannel = false
  let notedClientAuthentication = false
  const metadata = new ProviderMetadata(async () => await discoverProvider(discoveryOptionsOf(options, log, allowedTenants, allowInsecureRequests)), {
    onFailure: (reason, error) => {
      log.warn(metadataFailureFields(settings.Authority, reason, error), 'provider metadata could not be loaded')
    },
    onLoaded: () => {
      log.info({ event: 'external.metadata.loaded' }, 'provider metadata loaded')
      const postChosen = notedClientAuthentication || metadata.current === undefined ? undefined : postChosenNotice(metadata.current)
      if (postChosen !== undefined) { notedClientAuthentication = true; log.info(postChosen, 'client_secret_post chosen: the Basic encoding would change the client id or secret') }
      // OpenID Connect Back-Channel Logout 1.0, section 2.1: an absent backchannel_logout_supported means false.
      if (settings.BackChannelLogout && !warnedBackChannel && metadata.current?.serverMetadata().backchannel_logout_supported !== true) {
        warnedBackChannel = true
        log.warn({
          event: 'oidc.back_channel_logout.unsupported',
          setting: `${options.instance.keyPrefix}:BackChannelLogout`
        }, 'BackChannelLogout is on but the provider\'s discovery document does not advertise backchannel_logout_supported: it may never send logout tokens')
      }
    }
  })
  return metadata
}

/** What discovery of the instance's provider needs from its settings (oidc/discovery.ts). */
function discoveryOptionsOf (options: ProviderRegistrationOptions<OpenIdConnectInstance>, log: FastifyBaseLogger, allowedTenants: AllowedTenants | undefined, allowInsecureRequests: boolean): Parameters<typeof discoverProvider>[0] {
  const settings = options.instance.settings
  const key = (name: string): string => `${options.instance.keyPrefix}:${name}`
  return {
    authority: settings.Authority,
    clientId: settings.ClientId,
    clientSecret: settings.ClientSecret,
    idTokenSignedResponseAlg: settings.IdTokenSignedResponseAlg,
    allowInsecureRequests,
    tokenEndpointAuthMethod: settings.TokenEndpointAuthMethod,
    tokenEndpointAuthMethodSetting: key('TokenEndpointAuthMethod'),
    // Validated at startup (oidc/settings-rules.ts); a refusal here names the setting too.
    ...(settings.TokenEndpointAuthMethod === 'private_key_jwt'
      ? { clientAssertionKeys: readClientAssertionKeys(settings.ClientAssertionKeys.map((entry) => entry.reveal()).join('\n'), settings.ClientAssertionCertificates.join('\n'), { keys: key('ClientAssertionKeys'), certificates: key('ClientAssertionCertificates') }) }
      : {}),
    clientAssertionAudience: settings.ClientAssertionAudience,
    pushedAuthorization: settings.PushedAuthorization,
    pushedAuthorizationSetting: key('PushedAuthorization'),
    ...(allowedTenants === undefined ? {} : { allowedTenants }),
    allowedTenantsSetting: key('AllowedTenants'),
    authoritySetting: key('Authority'),
    clockToleranceSeconds: settings.ClockSkewSeconds,
    ...(options.runtime?.dispatcher === undefined ? {} : { dispatcher: options.runtime.dispatcher }),
    // A provider from the provider source: its endpoints on its issuer's origin (oidc/provider-metadata.ts).
    ...(options.runtime === undefined
      ? {}
      : {
          sameOriginEndpoints: true,
          onEndpointIgnored: (endpoint: string) => { log.warn({ event: 'oidc.metadata.endpoint_ignored', endpoint, reason: 'off_issuer_origin' }, 'an endpoint the provider\'s discovery names off its issuer\'s origin is not used') }
        })
  }
}

/** The safe fields of `external.metadata.failed`: no credential, query or document content. */
function metadataFailureFields (authority: string, reason: string, error: unknown): Record<string, unknown> {
  const setting = (error as { setting?: unknown } | null)?.setting
  const endpoint = (error as { endpoint?: unknown } | null)?.endpoint
  // The URL without credentials or query, and the cause code (ENOTFOUND, ECONNREFUSED,
  // certificate errors) that undici keeps in error.cause.
  return {
    event: 'external.metadata.failed',
    reason,
    url: urlForLog(discoveryUrlOf(authority)),
    causeCode: networkCauseCode(error),
    errorName: (error as Error | null)?.name,
    errorCode: (error as { code?: unknown } | null)?.code,
    // The setting a discovered document cannot satisfy (PushedAuthorization Require without a PAR endpoint).
    ...(typeof setting === 'string' ? { setting } : {}),
    // The discovery member refused off the issuer's origin (a provider from the provider source).
    ...(typeof endpoint === 'string' ? { endpoint } : {}),
    ...tooLargeFields(error)
  }
}

/** The signing keys of the discovered jwks_uri, kept across metadata refreshes of the same URI so the unknown-key refetch limit holds per provider. */
function signingKeysOf (allowInsecureRequests: boolean, log: FastifyBaseLogger, dispatcher: Dispatcher | undefined): (config: client.Configuration) => ProviderKeys {
  let signingKeys: ProviderKeys | undefined
  function keysOf (config: client.Configuration): ProviderKeys {
    const jwksUri = config.serverMetadata().jwks_uri ?? ''
    if (signingKeys?.jwksUri !== jwksUri) {
      signingKeys = new ProviderKeys({
        jwksUri,
        allowInsecureRequests,
        timeoutMs: OUTBOUND_TIMEOUT_SECONDS * 1000,
        ...(dispatcher === undefined ? {} : { dispatcher }),
        onUnknownKeyRefetch: (found) => {
          log.info({ event: 'oidc.signing_keys.refetched', reason: 'unknown_key', found }, 'provider signing keys fetched again for an unknown key id')
        }
      })
    }
    return signingKeys
  }
  return keysOf
}

/** Creates the instance's state; discovery starts when the app is ready. */
export function createOpenIdConnectContext (app: FastifyInstance, options: ProviderRegistrationOptions<OpenIdConnectInstance>): OpenIdConnectContext {
  const settings = options.instance.settings
  const { scheme } = options.instance
  const log = app.log.child({ provider: scheme })
  const allowedTenants = allowedTenantsOf(settings.AllowedTenants)
  const metadata = metadataOf(options, log, allowedTenants)
  if (options.runtime === undefined) {
    app.addHook('onReady', async () => { metadata.start() })
    app.addHook('onClose', async () => { metadata.stop() })
  }
  return {
    app,
    options,
    settings,
    scheme,
    log,
    metadata,
    keysOf: signingKeysOf(allowsInsecureRequests(settings.Authority, options.environmentName), log, options.runtime?.dispatcher),
    fieldPaths: Object.keys(settings.ClaimMappings).filter(isFieldPath),
    ...(allowedTenants === undefined ? {} : { allowedTenants })
  }
}
