/**
 * A Saml2 instance's Single Logout: SP-initiated (a signed LogoutRequest to the IdP, its
 * LogoutResponse back at the instance's logout path) and IdP-initiated (the IdP's LogoutRequest
 * ends the sessions it names and gets a signed LogoutResponse).
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { autoPostContentSecurityPolicy, autoPostPage } from '../../views/auto-post.js'
import { randomBytes } from 'node:crypto'
import { buildLogoutRequestUrl, classifyLibraryError, newRequestId, Saml2ResponseError, sessionFromTokens, validateLogoutResponse } from '../../saml2/service-provider.js'
import { isLocalUrl } from '../../http/local-url.js'
import { checkEndpointUrl } from '../../config/rules.js'
import type { SignedOutPrincipal } from '../authentication.js'
import { singleValue } from '../../http/request-input.js'
import { auditFieldsOf } from '../../session/user-identity.js'
import { buildLogoutResponse, logoutIndexKeys, validateLogoutRequest } from '../../saml2/logout-request.js'
import { LOGOUT_LIFETIME_MS, LOGOUT_RELAY_STATE, logoutKey, MAX_RELAY_STATE_LENGTH, type Saml2Context } from './saml2-instance.js'

/**
 * SP-initiated Single Logout: a signed LogoutRequest for the session's NameID and
 * SessionIndex, sent by the browser to the IdP's HTTP-Redirect SingleLogoutService. The local
 * session has already ended; the request id and return URL wait in the state store under a
 * random RelayState for the LogoutResponse. Undefined (local sign-out only) when the option is
 * off, the IdP advertises no usable SingleLogoutService or the session kept no NameID.
 */
export async function signOutRedirect (ctx: Saml2Context, request: FastifyRequest, signedOut: SignedOutPrincipal): Promise<string | undefined> {
  const { app, options, settings, source, singleLogout, acsUrlOf } = ctx
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
export function signedMessageOf (ctx: Saml2Context, request: FastifyRequest, fields: unknown): { binding: 'redirect' | 'post', rawQuery: string, signature: string | undefined, sigAlg: string | undefined, logoutUrl: string } {
  const { app, SAML2_LOGOUT_PATH } = ctx
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
export async function logoutRequestService (ctx: Saml2Context, request: FastifyRequest, reply: FastifyReply, fields: unknown, samlRequest: string): Promise<FastifyReply> {
  const { app, options, settings, scheme, source, logoutRequestReplays } = ctx
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
    validated = await validateLogoutRequest({ ...signedMessageOf(ctx, request, fields), samlRequest, relayState, settings, idp })
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
  // Scoped to this scheme: a LogoutRequest ends only sessions this provider signed in (issue 33, item 6).
  for (const indexKey of logoutIndexKeys({ scheme, idpEntityId: idp.entityId, spEntityId: settings.entityId }, validated)) ended += await app.session.revokeIndexed(indexKey, scheme)
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
export async function singleLogoutService (ctx: Saml2Context, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const { app, settings, scheme, source } = ctx
  const fields = request.method === 'GET' ? request.query : request.body
  const samlRequest = singleValue(fields, 'SAMLRequest')
  if (samlRequest === null) return await logoutRequestService(ctx, request, reply, fields, '')
  if (samlRequest !== undefined && singleValue(fields, 'SAMLResponse') === undefined) return await logoutRequestService(ctx, request, reply, fields, samlRequest)
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
    const result = await validateLogoutResponse({ ...signedMessageOf(ctx, request, fields), samlResponse, relayState, settings, idp, expectedRequestId: pending.requestId })
    if (!result.success) return finish('provider_error', typeof pending.returnUrl === 'string' ? pending.returnUrl : undefined)
  } catch (error) {
    const failure = classifyLibraryError(error)
    if (error instanceof Saml2ResponseError) request.log.debug({ event: 'saml2.logout.detail', failure, detail: error.message }, 'SAML2 LogoutResponse rejected')
    return finish(failure)
  }
  return finish('completed', typeof pending.returnUrl === 'string' ? pending.returnUrl : undefined)
}
