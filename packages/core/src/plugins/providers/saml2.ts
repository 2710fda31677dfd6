/**
 * The Saml2 provider (auth-contract.md, "Providers:Saml2"; issue 3 "SAML2"): the challenge
 * (AuthnRequest by HTTP-Redirect, RelayState = flow id, request id sealed in the correlation
 * cookie), the Assertion Consumer Service at ModulePath (HTTP-POST binding) and the SP metadata
 * document at {@link SAML2_METADATA_PATH}. Protocol checks live in auth/saml2.ts.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { randomBytes } from 'node:crypto'
import {
  buildAuthnRequestUrl, buildLogoutRequestUrl, buildServiceProviderMetadata, classifyLibraryError, newRequestId, readResponseEnvelope,
  SAML2_CLAIM_DEFAULTS, Saml2ResponseError, sessionFromTokens, sessionToTokens, validateLogoutResponse, validateResponse,
  type Saml2ServiceProviderSettings
} from '../../saml2/service-provider.js'
import { partitionByValidity, readCertificate } from '../../saml2/certificates.js'
import type { IdentityProviderDescription } from '../../saml2/metadata.js'
import { IdentityProviderMetadataSource } from '../../saml2/metadata-source.js'
import { networkCauseCode, urlForLog } from '../../http/outbound-diagnostics.js'
import { ReplayCache } from '../../state/replay-cache.js'
import { StateStoreFullError, StateStoreUnavailableError } from '../../state/state-store.js'
import { isLocalUrl } from '../../http/local-url.js'
import type { SignInFailure } from '../../sign-in/sign-in-failure.js'
import { groupOverageInClaims } from '../../sign-in/group-overage.js'
import { checkEndpointUrl, saml2KeyInput } from '../../config/rules.js'
import { readServiceProviderKeys } from '../../saml2/keys.js'
import { ConfigurationError } from '../../errors.js'
import type { ProviderRegistrationOptions, SignedOutPrincipal } from '../authentication.js'
import type { ProviderInstance } from '../../providers/instances.js'

type Saml2Instance = Extract<ProviderInstance, { protocol: 'Saml2' }>
import { singleValue } from '../../http/request-input.js'
import { saml2LogoutKey } from '../../state/keys.js'
import { auditFieldsOf } from '../../session/user-identity.js'
import { buildLogoutResponse, logoutIndexKeys, signInIndexKeys, validateLogoutRequest } from '../../saml2/logout-request.js'
import { autoPostContentSecurityPolicy, autoPostPage } from '../../views/auto-post.js'

/**
 * The contract Saml2 provider's metadata and Single Logout paths (reserved in config/rules.ts
 * RESERVED_PATHS); a named SAML2 scheme has its own (MetadataPath, LogoutPath). The Single Logout
 * endpoint, HTTP-Redirect or HTTP-POST, takes the IdP's LogoutResponse to our LogoutRequest and
 * the IdP's own LogoutRequest (SAML Profiles 4.4).
 */
export { SAML2_LOGOUT_PATH, SAML2_METADATA_PATH } from '../../providers/instances.js'

/** How long a sent LogoutRequest waits for its LogoutResponse. */
const LOGOUT_LIFETIME_MS = 10 * 60 * 1000
const LOGOUT_RELAY_STATE = /^[A-Za-z0-9_-]{22}$/
/** A pending logout is a flow record (bounded like pending sign-ins: MaxPendingSignIns). */
const logoutKey = saml2LogoutKey

/** Longest RelayState echoed back on a LogoutResponse (SAML Bindings 3.4.3 and 3.5.3 ask for at most 80 bytes). */
const MAX_RELAY_STATE_LENGTH = 1024

/** Body limit of the ACS route only: signed responses outgrow the 16 KB form limit. */
export const ACS_BODY_LIMIT = 256 * 1024

/** Whether a RelayState has the shape of this app's flow ids (plugins/external-sign-in.ts). */
const isFlowId = (value: string | undefined): boolean => value !== undefined && LOGOUT_RELAY_STATE.test(value)

/** A single-valued form field: undefined when absent, null when repeated or not a string. */
function formField (body: unknown, name: string): string | undefined | null {
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
  // Startup validation (config/rules.ts, saml2Settings) refuses an unreadable entry first.
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

export async function registerSaml2 (app: FastifyInstance, options: ProviderRegistrationOptions<Saml2Instance>): Promise<void> {
  const saml = options.instance.settings
  const KEY = options.instance.keyPrefix
  const SAML2_METADATA_PATH = saml.MetadataPath
  const SAML2_LOGOUT_PATH = saml.LogoutPath
  const scheme = saml.Scheme
  const modulePath = saml.ModulePath
  // Startup validation (config/rules.ts, saml2Settings) reports the same problems first.
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
    clockSkewSeconds: saml.ClockSkewSeconds
  }
  const replayCache = new ReplayCache(app.state, 'saml2-assertion')
  const logoutRequestReplays = new ReplayCache(app.state, 'saml2-logout-request')
  // Startup validation requires SigningKey with SignOutAtProvider.
  const singleLogout = saml.SignOutAtProvider && settings.signing !== undefined
  const log = app.log.child({ provider: scheme })

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
      check (description) {
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
          const error = event.error instanceof Error ? { errorName: event.error.name, causeCode: networkCauseCode(event.error) } : {}
          log.warn({ event: 'saml2.metadata.failed', reason: event.reason, detail: event.detail, url: urlForLog(saml.MetadataUrl), ...error }, 'IdP metadata not loaded')
        }
      }
    })
    : configuredIdentityProvider(options)
  if (!saml.LoadMetadata && source.current !== undefined) reportCertificates(source.current)

  app.addHook('onReady', async () => { source.start() })
  app.addHook('onClose', async () => { source.stop() })

  const acsUrlOf = (request: FastifyRequest): string => `${app.externalSignIn.publicOrigin(request)}${modulePath}`

  async function challenge (request: FastifyRequest, reply: FastifyReply, returnUrl: string): Promise<FastifyReply> {
    const idp = source.current
    if (idp === undefined) return app.externalSignIn.fail(request, reply, scheme, 'unavailable')
    const requestId = newRequestId()
    const flowId = await app.externalSignIn.beginFlow(reply, scheme, returnUrl, { requestId })
    const url = await buildAuthnRequestUrl({ settings, idp, acsUrl: acsUrlOf(request), requestId, relayState: flowId })
    request.log.info({ event: 'external.challenge', provider: scheme }, 'SAML2 AuthnRequest sent')
    return reply.redirect(url, 302)
  }

  async function assertionConsumerService (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const fail = (failure: SignInFailure, error?: unknown): FastifyReply => {
      if (error instanceof Saml2ResponseError) request.log.debug({ event: 'saml2.response.rejected', failure, detail: error.message }, 'SAML2 response rejected')
      return app.externalSignIn.fail(request, reply, scheme, failure, error)
    }
    const samlResponse = formField(request.body, 'SAMLResponse')
    const relayState = formField(request.body, 'RelayState')
    if (typeof samlResponse !== 'string' || samlResponse === '' || relayState === null) return fail('malformed')
    const idp = source.current
    if (idp === undefined) return fail('unavailable')
    // The cheap checks first (correlation cookie and RelayState; no XML is parsed yet), so a
    // response nobody asked for costs no parsing unless AllowUnsolicitedResponses wants it.
    const flow = typeof relayState === 'string' ? await app.externalSignIn.takeFlow(request, reply, scheme, relayState) : undefined
    if (flow === undefined && !settings.allowUnsolicitedResponses) {
      if (saml.RestartUnsolicitedSignIn && !isFlowId(relayState) && !app.externalSignIn.holdsFlow(request)) {
        // IdP-initiated (Okta tile, Entra My Apps): nothing in the response is read or trusted.
        // A fresh SP-initiated flow keeps InResponseTo, the correlation cookie and replay
        // protection, and the IdP's existing session makes it a silent round trip. A local
        // RelayState is where the user lands; anything else is ignored. Starting it writes
        // nothing on the server (the flow lives in the browser's correlation cookie).
        const returnUrl = typeof relayState === 'string' && isLocalUrl(relayState) ? relayState : '/'
        request.log.info({ event: 'saml2.unsolicited.restarted', provider: scheme }, 'unsolicited SAML2 response: starting an SP-initiated sign-in')
        if (!status().available) return fail('unavailable')
        return await challenge(request, reply, returnUrl)
      }
      // A RelayState naming a flow of ours, or a browser with a sign-in pending, answers a request
      // whose correlation is missing, foreign or used; anything else is an unsolicited response.
      return fail(isFlowId(relayState) || app.externalSignIn.holdsFlow(request) ? 'correlation' : 'unsolicited')
    }

    let envelope
    try {
      envelope = readResponseEnvelope(samlResponse, { acceptEncrypted: settings.decryption !== undefined })
    } catch (error) {
      return fail(classifyLibraryError(error), error)
    }
    // A response answering a request needs that request's flow (RelayState + correlation cookie).
    if (envelope.inResponseTo !== undefined && flow === undefined) return fail('correlation')
    const expectedRequestId = flow?.data.requestId
    if (flow !== undefined && typeof expectedRequestId !== 'string') return fail('correlation')

    let assertion
    try {
      assertion = await validateResponse({ envelope, settings, idp, acsUrl: acsUrlOf(request), expectedRequestId, replayCache })
    } catch (error) {
      // The replay record could not be written: 503 (try again), never a sign-in without it.
      if (error instanceof StateStoreFullError || error instanceof StateStoreUnavailableError) throw error
      const failure = classifyLibraryError(error)
      if (failure === 'signature' || failure === 'certificate') source.refreshAfterFailure()
      return fail(failure, error)
    }
    const groupOverage = groupOverageInClaims(assertion.claims)
    return await app.externalSignIn.complete(request, reply, {
      scheme,
      claims: assertion.claims,
      ...(groupOverage === undefined ? {} : { groupOverage, acceptGroupOverage: saml.AcceptGroupOverage }),
      returnUrl: flow?.returnUrl ?? '/',
      claimMappings: saml.ClaimMappings,
      providerDefaults: SAML2_CLAIM_DEFAULTS,
      // The IdP session: NameID (as issued, with Format and qualifiers) and SessionIndex, kept in
      // the server-side session record like OpenID Connect's id_token for its logout hint, and
      // (with Single Logout) indexed so the IdP's own LogoutRequest finds exactly these sessions.
      tokens: sessionToTokens(assertion.session),
      ...(singleLogout ? { indexKeys: signInIndexKeys(idp.entityId, settings.entityId, assertion.session) } : {})
    })
  }

  app.post(modulePath, { bodyLimit: ACS_BODY_LIMIT, config: { allowAnonymous: true } }, assertionConsumerService)

  app.get(SAML2_METADATA_PATH, { config: { allowAnonymous: true } }, async (request, reply) => {
    const logoutUrl = singleLogout ? `${app.externalSignIn.publicOrigin(request)}${SAML2_LOGOUT_PATH}` : undefined
    return reply.type('application/samlmetadata+xml; charset=utf-8').send(buildServiceProviderMetadata(settings, acsUrlOf(request), logoutUrl))
  })

  /**
   * SP-initiated Single Logout: a signed LogoutRequest for the session's NameID and
   * SessionIndex, sent by the browser to the IdP's HTTP-Redirect SingleLogoutService. The local
   * session has already ended; the request id and return URL wait in the state store under a
   * random RelayState for the LogoutResponse. Undefined (local sign-out only) when the option is
   * off, the IdP advertises no usable SingleLogoutService or the session kept no NameID.
   */
  async function signOutRedirect (request: FastifyRequest, signedOut: SignedOutPrincipal): Promise<string | undefined> {
    const idp = source.current
    const session = sessionFromTokens(signedOut.principal.ticket.tokens)
    const singleLogoutUrl = idp?.singleLogoutUrl
    if (!singleLogout || idp === undefined || session === undefined || singleLogoutUrl === undefined) return undefined
    if (checkEndpointUrl(singleLogoutUrl, 'SingleLogoutService', options.environmentName).length > 0) {
      request.log.warn({ event: 'saml2.logout.skipped', reason: 'insecure_endpoint' }, 'IdP SingleLogoutService is not https; signing out locally only')
      return undefined
    }
    const requestId = newRequestId()
    const relayState = randomBytes(16).toString('base64url')
    // Who, for the LogoutResponse's audit line: opaque hashes only (the record is not sealed).
    const { userKey, sessionAuditId } = auditFieldsOf(signedOut.principal.ticket)
    await app.state.add(logoutKey(relayState), JSON.stringify({ requestId, returnUrl: signedOut.returnUrl, userKey, sessionAuditId }), LOGOUT_LIFETIME_MS)
    return await buildLogoutRequestUrl({ settings, idp: { ...idp, singleLogoutUrl }, acsUrl: acsUrlOf(request), requestId, relayState, session })
  }

  /**
   * What the IdP's LogoutRequest and its LogoutResponse both come with besides the message: the
   * binding, for HTTP-Redirect the raw query and its Signature and SigAlg (the signature covers the
   * octets as received), and the logout URL a Destination must name.
   */
  function signedMessageOf (request: FastifyRequest, fields: unknown): { binding: 'redirect' | 'post', rawQuery: string, signature: string | undefined, sigAlg: string | undefined, logoutUrl: string } {
    const queryStart = request.url.indexOf('?')
    return {
      binding: request.method === 'GET' ? 'redirect' : 'post',
      rawQuery: queryStart === -1 ? '' : request.url.slice(queryStart + 1),
      signature: singleValue(fields, 'Signature') ?? undefined,
      sigAlg: singleValue(fields, 'SigAlg') ?? undefined,
      logoutUrl: `${app.externalSignIn.publicOrigin(request)}${SAML2_LOGOUT_PATH}`
    }
  }

  /**
   * The IdP's own LogoutRequest (SAML Profiles 4.4.4): validated (saml2/logout-request.ts), its ID
   * recorded against replay, the sessions it names ended on every instance, and a signed
   * LogoutResponse sent back through the browser. A refused request ends nothing and gets no
   * LogoutResponse; the browser lands on /.
   */
  async function logoutRequestService (request: FastifyRequest, reply: FastifyReply, fields: unknown, samlRequest: string): Promise<FastifyReply> {
    reply.header('cache-control', 'no-store')
    const binding = request.method === 'GET' ? 'redirect' : 'post'
    const refuse = (failure: string): FastifyReply => {
      request.log.warn({ event: 'saml2.logout.request.rejected', provider: scheme, binding, failure }, 'SAML2 LogoutRequest refused')
      return reply.redirect('/', 302)
    }
    const relayState = singleValue(fields, 'RelayState')
    // Echoed to the IdP (in a Location header for HTTP-Redirect): bounded, as the bindings ask for 80 bytes.
    if (relayState === null || (relayState !== undefined && relayState.length > MAX_RELAY_STATE_LENGTH) || samlRequest === '') return refuse('malformed')
    const idp = source.current
    if (idp === undefined) return refuse('unavailable')
    let validated
    try {
      validated = await validateLogoutRequest({ ...signedMessageOf(request, fields), samlRequest, relayState, settings, idp })
    } catch (error) {
      const failure = classifyLibraryError(error)
      if (error instanceof Saml2ResponseError) request.log.debug({ event: 'saml2.logout.detail', failure, detail: error.message }, 'SAML2 LogoutRequest refused')
      if (failure === 'signature' || failure === 'certificate') source.refreshAfterFailure()
      return refuse(failure)
    }
    // After the signature: a forged request cannot burn the ID of a genuine one. Every instance
    // that shares the store refuses the second use.
    if (!await logoutRequestReplays.remember(`${idp.entityId}\u0000${validated.id}`, validated.acceptableUntilMs)) return refuse('replay')
    let ended = 0
    for (const indexKey of logoutIndexKeys(idp.entityId, settings.entityId, validated)) ended += await app.session.revokeIndexed(indexKey)
    request.log.info({ event: 'saml2.logout.request.succeeded', provider: scheme, binding, by: validated.sessionIndexes.length === 0 ? 'name_id' : 'session_index', sessions: ended }, 'SAML2 LogoutRequest')

    const endpoint = idp.logoutResponseEndpoint
    if (endpoint === undefined || checkEndpointUrl(endpoint.url, 'SingleLogoutService', options.environmentName).length > 0) {
      request.log.warn({ event: 'saml2.logout.response.skipped', provider: scheme, reason: endpoint === undefined ? 'no_endpoint' : 'insecure_endpoint' }, 'no usable IdP SingleLogoutService; LogoutResponse not sent')
      return reply.redirect('/', 302)
    }
    const delivery = buildLogoutResponse({ settings, endpoint, inResponseTo: validated.id, relayState, partial: ended === 0 })
    if (delivery.binding === 'redirect') return reply.redirect(delivery.url, 302)
    const policy = reply.getHeader('content-security-policy')
    if (typeof policy === 'string') reply.header('content-security-policy', autoPostContentSecurityPolicy(policy, delivery.url))
    return reply.type('text/html; charset=utf-8').send(autoPostPage({ action: delivery.url, fields: delivery.fields, title: 'Signing out' }))
  }

  /**
   * /Saml2/Logout: an IdP's LogoutRequest (SAMLRequest), else the IdP's LogoutResponse to ours:
   * validated, logged, then the local return URL (else /).
   */
  async function singleLogoutService (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const fields = request.method === 'GET' ? request.query : request.body
    const samlRequest = singleValue(fields, 'SAMLRequest')
    if (samlRequest === null) return await logoutRequestService(request, reply, fields, '')
    if (samlRequest !== undefined && singleValue(fields, 'SAMLResponse') === undefined) return await logoutRequestService(request, reply, fields, samlRequest)
    const samlResponse = singleValue(fields, 'SAMLResponse')
    const relayState = singleValue(fields, 'RelayState')
    // The signed-out session's user key and audit id, once the pending logout is read.
    let who: Record<string, string> = {}
    const finish = (outcome: string, returnUrl?: string): FastifyReply => {
      const level = outcome === 'completed' ? 'info' : 'warn'
      const issuer = source.current?.entityId
      request.log[level]({ event: outcome === 'completed' ? 'saml2.logout.completed' : 'saml2.logout.rejected', provider: scheme, ...(issuer === undefined ? {} : { issuer }), ...who, ...(outcome === 'completed' ? {} : { failure: outcome }) }, 'SAML2 LogoutResponse')
      return reply.header('cache-control', 'no-store').redirect(returnUrl !== undefined && isLocalUrl(returnUrl) ? returnUrl : '/', 302)
    }
    if (typeof samlResponse !== 'string' || samlResponse === '' || typeof relayState !== 'string' || !LOGOUT_RELAY_STATE.test(relayState)) {
      return finish('malformed')
    }
    const stored = await app.state.replace(logoutKey(relayState), 'used')
    if (stored === undefined) return finish('correlation')
    if (stored === 'used') return finish('replay')
    let pending: { requestId?: unknown, returnUrl?: unknown, userKey?: unknown, sessionAuditId?: unknown }
    try {
      pending = JSON.parse(stored) as typeof pending
    } catch {
      return finish('correlation')
    }
    who = {
      ...(typeof pending.userKey === 'string' ? { userKey: pending.userKey } : {}),
      ...(typeof pending.sessionAuditId === 'string' ? { sessionAuditId: pending.sessionAuditId } : {})
    }
    const idp = source.current
    if (idp === undefined || typeof pending.requestId !== 'string') return finish('unavailable')
    try {
      const result = await validateLogoutResponse({ ...signedMessageOf(request, fields), samlResponse, relayState, settings, idp, expectedRequestId: pending.requestId })
      if (!result.success) return finish('provider_error', typeof pending.returnUrl === 'string' ? pending.returnUrl : undefined)
    } catch (error) {
      const failure = classifyLibraryError(error)
      if (error instanceof Saml2ResponseError) request.log.debug({ event: 'saml2.logout.detail', failure, detail: error.message }, 'SAML2 LogoutResponse rejected')
      return finish(failure)
    }
    return finish('completed', typeof pending.returnUrl === 'string' ? pending.returnUrl : undefined)
  }

  if (singleLogout) {
    app.get(SAML2_LOGOUT_PATH, { config: { allowAnonymous: true } }, singleLogoutService)
    app.post(SAML2_LOGOUT_PATH, { bodyLimit: ACS_BODY_LIMIT, config: { allowAnonymous: true } }, singleLogoutService)
  }

  // Readiness tells the truth: with ValidateCertificates, an IdP whose every signing certificate
  // is outside its validity period cannot sign anything this SP accepts. Checked at most once a
  // minute per description (the health endpoint and the login page ask on every request).
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

  app.authentication.registerProvider({
    scheme,
    displayName: saml.DisplayName,
    protocol: 'Saml2',
    domains: saml.Domains,
    paths: singleLogout ? [modulePath, SAML2_METADATA_PATH, SAML2_LOGOUT_PATH] : [modulePath, SAML2_METADATA_PATH],
    challenge,
    status,
    signOutRedirect
  })
}
