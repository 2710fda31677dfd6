/**
 * One Saml2 instance's state, shared by its sign-in and logout handlers (saml2-sign-in.ts,
 * saml2-logout.ts): its settings, SP keys, IdP description source, replay caches and readiness.
 * Created once per configured SAML2 provider (the contract Saml2 section or a named scheme).
 */
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify'
import { type Saml2ServiceProviderSettings } from '../../saml2/service-provider.js'
import { partitionByValidity, readCertificate } from '../../saml2/certificates.js'
import type { IdentityProviderDescription } from '../../saml2/metadata.js'
import { IdentityProviderMetadataSource } from '../../saml2/metadata-source.js'
import { tooLargeFields } from '../../http/bounded-fetch.js'
import { networkCauseCode, urlForLog } from '../../http/outbound-diagnostics.js'
import { ReplayCache } from '../../state/replay-cache.js'
import { checkEndpointUrl } from '../../config/rules.js'
import { saml2KeyInput } from '../../saml2/settings-rules.js'
import { readServiceProviderKeys } from '../../saml2/keys.js'
import { ConfigurationError } from '../../errors.js'
import type { ProviderRegistrationOptions } from '../authentication.js'
import type { ProviderInstance } from '../../providers/provider-instances.js'
import { saml2LogoutKey } from '../../state/keys.js'

/** How long a sent LogoutRequest waits for its LogoutResponse. */
export const LOGOUT_LIFETIME_MS = 10 * 60 * 1000
export const LOGOUT_RELAY_STATE = /^[A-Za-z0-9_-]{22}$/
/** A pending logout is a flow record (bounded like pending sign-ins: MaxPendingSignIns). */
export const logoutKey = saml2LogoutKey

/** Longest RelayState echoed back on a LogoutResponse (SAML Bindings 3.4.3 and 3.5.3 ask for at most 80 bytes). */
export const MAX_RELAY_STATE_LENGTH = 1024

/** Whether a RelayState has the shape of this app's flow ids (plugins/external-sign-in.ts). */
export const isFlowId = (value: string | undefined): boolean => value !== undefined && LOGOUT_RELAY_STATE.test(value)

/** A single-valued form field: undefined when absent, null when repeated or not a string. */
export function formField (body: unknown, name: string): string | undefined | null {
  if (body === null || typeof body !== 'object') return undefined
  const value = (body as Record<string, unknown>)[name]
  if (value === undefined) return undefined
  return typeof value === 'string' ? value : null
}

interface IdentityProviderSource {
  readonly current: IdentityProviderDescription | undefined
  readonly reason: string | undefined
  start: () => void
  stop: () => void
  refreshAfterFailure: () => void
}

/** LoadMetadata false: the IdP description comes from the Idp* extension keys. */
function configuredIdentityProvider (options: ProviderRegistrationOptions<Saml2Instance>): IdentityProviderSource {
  const saml = options.instance.settings
  const KEY = options.instance.keyPrefix
  // Startup validation (saml2/settings-rules.ts) refuses an unreadable entry first.
  const signingCertificates = saml.IdpSigningCertificates.flatMap((value, index) => {
    if (value.trim() === '') return []
    try {
      return [readCertificate(value).raw.toString('base64')]
    } catch (error) {
      const key = `${KEY}:IdpSigningCertificates:${index}`
      throw new ConfigurationError([{ key, message: `${key} is not a PEM or base64 DER X.509 certificate.` }], { cause: error })
    }
  })
  const singleLogoutUrl = saml.IdpSingleLogoutUrl.trim()
  const current: IdentityProviderDescription = {
    entityId: saml.IdpEntityId.trim(),
    singleSignOnUrl: saml.IdpSingleSignOnUrl.trim(),
    signingCertificates,
    // IdpSingleLogoutUrl is the HTTP-Redirect SingleLogoutService, both ways.
    ...(singleLogoutUrl === '' ? {} : { singleLogoutUrl, logoutResponseEndpoint: { binding: 'redirect', url: singleLogoutUrl } })
  }
  return { current, reason: undefined, start () {}, stop () {}, refreshAfterFailure () {} }
}

export type Saml2Instance = Extract<ProviderInstance, { protocol: 'Saml2' }>

/** One Saml2 instance as its handlers see it. */
export interface Saml2Context {
  readonly app: FastifyInstance
  readonly options: ProviderRegistrationOptions<Saml2Instance>
  readonly saml: Saml2Instance['settings']
  readonly settings: Saml2ServiceProviderSettings
  readonly scheme: string
  readonly log: FastifyBaseLogger
  readonly source: IdentityProviderSource
  readonly replayCache: ReplayCache
  readonly logoutRequestReplays: ReplayCache
  /** SignOutAtProvider with a signing key: the logout endpoint is served. */
  readonly singleLogout: boolean
  readonly modulePath: string
  readonly SAML2_METADATA_PATH: string
  readonly SAML2_LOGOUT_PATH: string
  acsUrlOf: (request: FastifyRequest) => string
  status: () => { available: boolean, reason?: string }
}

/** The SP settings of the instance, its keys read as at startup validation (saml2/settings-rules.ts). */
function serviceProviderSettingsOf (options: ProviderRegistrationOptions<Saml2Instance>): Saml2ServiceProviderSettings {
  const saml = options.instance.settings
  const KEY = options.instance.keyPrefix
  // Startup validation (saml2/settings-rules.ts) reports the same problems first.
  const spKeys = readServiceProviderKeys(saml2KeyInput(saml))
  if (spKeys.problems.length > 0) {
    throw new ConfigurationError(spKeys.problems.map((problem) => ({ key: `${KEY}:${problem.key}`, message: `${KEY}:${problem.key} ${problem.message}` })))
  }
  const settings: Saml2ServiceProviderSettings = {
    signing: spKeys.keys.signing,
    decryption: spKeys.keys.decryption,
    entityId: saml.EntityId,
    requireSignedAssertions: saml.RequireSignedAssertions,
    validateCertificates: saml.ValidateCertificates,
    allowUnsolicitedResponses: saml.AllowUnsolicitedResponses,
    clockSkewSeconds: saml.ClockSkewSeconds,
    sectionKey: KEY
  }
  return settings
}

/** The instance's IdP description: its metadata loaded and refreshed, or the Idp* keys. */
function identityProviderSourceOf (options: ProviderRegistrationOptions<Saml2Instance>, settings: Saml2ServiceProviderSettings, log: FastifyBaseLogger): IdentityProviderSource {
  const saml = options.instance.settings
  function reportCertificates (description: IdentityProviderDescription): void {
    if (!settings.validateCertificates) return
    const certificates = description.signingCertificates.map((value) => readCertificate(value))
    const { current, outside } = partitionByValidity(certificates, Date.now(), settings.clockSkewSeconds * 1000)
    if (outside.length > 0) {
      log.warn({ event: 'saml2.certificates.outside_validity', outside: outside.length, current: current.length }, 'IdP signing certificates outside their validity period are not trusted')
    }
  }

  const source: IdentityProviderSource = saml.LoadMetadata
    ? new IdentityProviderMetadataSource({
      url: saml.MetadataUrl,
      refreshMs: saml.MetadataRefreshMinutes * 60_000,
      entityId: saml.IdpEntityId.trim(),
      metadataSigningCertificates: saml.MetadataSigningCertificates.filter((value) => value.trim() !== ''),
      ...(options.runtime?.dispatcher === undefined ? {} : { dispatcher: options.runtime.dispatcher }),
      check (description) {
        // A customer's metadata may not claim an IdP another provider trusts (issue 33, item 6).
        if (options.runtime?.issuerTaken?.(description.entityId) === true) return 'the IdP entity id is one another provider trusts'
        try {
          description.signingCertificates.forEach((value) => readCertificate(value))
        } catch {
          return 'a signing certificate cannot be read'
        }
        return checkEndpointUrl(description.singleSignOnUrl, 'SingleSignOnService', options.environmentName).length === 0
          ? undefined
          : 'SingleSignOnService Location must be https'
      },
      onEvent (event) {
        if (event.kind === 'loaded') {
          log.info({ event: 'saml2.metadata.loaded', certificates: event.certificates }, 'IdP metadata loaded')
          const description = (source as IdentityProviderMetadataSource).current
          if (description !== undefined) reportCertificates(description)
        } else {
          const error = event.error instanceof Error ? { errorName: event.error.name, causeCode: networkCauseCode(event.error), ...tooLargeFields(event.error) } : {}
          log.warn({ event: 'saml2.metadata.failed', reason: event.reason, detail: event.detail, url: urlForLog(saml.MetadataUrl), ...error }, 'IdP metadata not loaded')
        }
      }
    })
    : configuredIdentityProvider(options)
  if (!saml.LoadMetadata && source.current !== undefined) reportCertificates(source.current)
  return source
}

/**
 * Readiness tells the truth: with ValidateCertificates, an IdP whose every signing certificate is
 * outside its validity period cannot sign anything this SP accepts. Checked at most once a minute
 * per description (the health endpoint and the login page ask on every request).
 */
function statusOf (source: IdentityProviderSource, settings: Saml2ServiceProviderSettings, log: FastifyBaseLogger): () => { available: boolean, reason?: string } {
  let validity: { description: IdentityProviderDescription, checkedAt: number, expired: boolean } | undefined
  function everyCertificateOutsideValidity (description: IdentityProviderDescription): boolean {
    if (!settings.validateCertificates) return false
    const now = Date.now()
    if (validity?.description === description && now - validity.checkedAt < 60_000) return validity.expired
    let expired = false
    try {
      const certificates = description.signingCertificates.map((value) => readCertificate(value))
      expired = partitionByValidity(certificates, now, settings.clockSkewSeconds * 1000).current.length === 0
    } catch {
      // Unreadable certificates are refused when the metadata loads; nothing to add here.
    }
    if (expired && validity?.expired !== true) {
      log.error({ event: 'saml2.certificates.expired', certificates: description.signingCertificates.length }, 'every IdP signing certificate is outside its validity period; Saml2 is unavailable')
    }
    validity = { description, checkedAt: now, expired }
    return expired
  }

  function status (): { available: boolean, reason?: string } {
    const description = source.current
    if (description === undefined) return { available: false, reason: source.reason ?? 'metadata_not_loaded' }
    if (everyCertificateOutsideValidity(description)) return { available: false, reason: 'certificate_expired' }
    return { available: true }
  }
  return status
}

/** Creates the instance's state; its IdP metadata loads when the app is ready. */
export function createSaml2Context (app: FastifyInstance, options: ProviderRegistrationOptions<Saml2Instance>): Saml2Context {
  const saml = options.instance.settings
  const settings = serviceProviderSettingsOf(options)
  const { scheme } = options.instance
  const log = app.log.child({ provider: scheme })
  const source = identityProviderSourceOf(options, settings, log)
  if (options.runtime === undefined) {
    app.addHook('onReady', async () => { source.start() })
    app.addHook('onClose', async () => { source.stop() })
  }
  return {
    app,
    options,
    saml,
    settings,
    scheme,
    log,
    source,
    replayCache: new ReplayCache(app.state, 'saml2-assertion'),
    logoutRequestReplays: new ReplayCache(app.state, 'saml2-logout-request'),
    // Startup validation requires SigningKey with SignOutAtProvider.
    singleLogout: saml.SignOutAtProvider && settings.signing !== undefined,
    modulePath: saml.ModulePath,
    SAML2_METADATA_PATH: saml.MetadataPath,
    SAML2_LOGOUT_PATH: saml.LogoutPath,
    acsUrlOf: (request) => `${app.externalSignIn.publicOrigin(request)}${saml.ModulePath}`,
    status: statusOf(source, settings, log)
  }
}
