/**
 * A Saml2 instance's sign-in: the challenge (AuthnRequest by HTTP-Redirect, RelayState = flow id,
 * request id sealed in the correlation cookie; for a step-up ForceAuthn and RequestedAuthnContext)
 * and the Assertion Consumer Service (HTTP-POST; a step-up's assertion must prove it, saml2/step-up.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { buildAuthnRequestUrl, classifyLibraryError, newRequestId, readResponseEnvelope, SAML2_CLAIM_DEFAULTS, Saml2ResponseError, sessionToTokens, validateResponse } from '../../saml2/service-provider.js'
import { StateStoreFullError, StateStoreUnavailableError } from '../../state/state-store.js'
import { isLocalUrl } from '../../http/local-url.js'
import type { SignInFailure } from '../../sign-in/sign-in-failure.js'
import { groupOverageInClaims } from '../../sign-in/group-overage.js'
import { signInIndexKeys } from '../../saml2/logout-request.js'
import { formField, isFlowId, type Saml2Context } from './saml2-instance.js'
import type { ChallengeHint } from '../authentication.js'
import { checkAuthnStatement, proofOfAuthnStatement } from '../../saml2/step-up.js'
import { stepUpFlowData } from '../../sign-in/step-up-flow.js'
import type { TakenFlow } from '../../sign-in/pipeline.js'

export async function challenge (ctx: Saml2Context, request: FastifyRequest, reply: FastifyReply, returnUrl: string, hint?: ChallengeHint): Promise<FastifyReply> {
  const { app, settings, scheme, source, acsUrlOf } = ctx
  const idp = source.current
  if (idp === undefined) return app.externalSignIn.fail(request, reply, scheme, 'unavailable')
  const requestId = newRequestId()
  // A step-up: ForceAuthn and RequestedAuthnContext from the policy, sealed with the session's user.
  const stepUp = hint?.stepUp
  const flowId = await app.externalSignIn.beginFlow(reply, scheme, returnUrl, {
    requestId,
    ...(stepUp === undefined ? {} : stepUpFlowData(stepUp, Math.floor(Date.now() / 1000)))
  })
  const url = await buildAuthnRequestUrl({ settings, idp, acsUrl: acsUrlOf(request), requestId, relayState: flowId, ...(stepUp === undefined ? {} : { stepUp: stepUp.requirement }) })
  request.log.info({ event: 'external.challenge', provider: scheme }, 'SAML2 AuthnRequest sent')
  return reply.redirect(url, 302)
}

export async function assertionConsumerService (ctx: Saml2Context, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const { app, settings, scheme, source, replayCache, acsUrlOf } = ctx
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
  const taken = typeof relayState === 'string' ? await app.externalSignIn.takeFlow(request, reply, scheme, relayState) : undefined
  const flow = taken?.flow
  // What a missing flow is reported as: `replay` when the flow RelayState names was completed already.
  const correlation = taken?.correlationFailure ?? 'correlation'
  if (flow === undefined && !settings.allowUnsolicitedResponses) return await unsolicited(ctx, request, reply, relayState, fail, correlation)

  let envelope
  try {
    envelope = readResponseEnvelope(samlResponse, { acceptEncrypted: settings.decryption !== undefined })
  } catch (error) {
    return fail(classifyLibraryError(error), error)
  }
  // A response answering a request needs that request's flow (RelayState + correlation cookie).
  if (envelope.inResponseTo !== undefined && flow === undefined) return fail(correlation)
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
  const stepUp = taken?.stepUp
  if (stepUp !== undefined) {
    const unmet = checkAuthnStatement(assertion.authnStatement, stepUp.requirement, { requestedAtSeconds: stepUp.requestedAtSeconds, nowSeconds: Math.floor(Date.now() / 1000) })
    if (unmet !== undefined) return fail(unmet.failure, new Saml2ResponseError(unmet.failure, 'the assertion does not prove the step-up', { diagnostics: { detail: unmet.code } }))
  }
  return await completeSignIn(ctx, request, reply, taken, assertion, idp.entityId)
}

/**
 * A response no flow of this browser asked for. IdP-initiated (Okta tile, Entra My Apps), with
 * RestartUnsolicitedSignIn: nothing in the response is read or trusted; a fresh SP-initiated flow
 * keeps InResponseTo, the correlation cookie and replay protection, and the IdP's existing session
 * makes it a silent round trip. A local RelayState is where the user lands; anything else is
 * ignored. Starting it writes nothing on the server (the flow lives in the correlation cookie).
 * A RelayState naming a flow of ours, or a browser with a sign-in pending, answers a request
 * whose correlation is missing, foreign or used; anything else is an unsolicited response.
 */
async function unsolicited (ctx: Saml2Context, request: FastifyRequest, reply: FastifyReply, relayState: string | undefined, fail: (failure: SignInFailure) => FastifyReply, correlation: SignInFailure): Promise<FastifyReply> {
  const { app, saml, scheme, status } = ctx
  if (saml.RestartUnsolicitedSignIn && !isFlowId(relayState) && !app.externalSignIn.holdsFlow(request)) {
    const returnUrl = typeof relayState === 'string' && isLocalUrl(relayState) ? relayState : '/'
    request.log.info({ event: 'saml2.unsolicited.restarted', provider: scheme }, 'unsolicited SAML2 response: starting an SP-initiated sign-in')
    if (!status().available) return fail('unavailable')
    return await challenge(ctx, request, reply, returnUrl)
  }
  return fail(isFlowId(relayState) || app.externalSignIn.holdsFlow(request) ? correlation : 'unsolicited')
}

type ValidatedAssertion = Awaited<ReturnType<typeof validateResponse>>

/** A valid assertion becomes the sign-in: its claims, its proof and the IdP session for logout. */
async function completeSignIn (ctx: Saml2Context, request: FastifyRequest, reply: FastifyReply, taken: TakenFlow | undefined, assertion: ValidatedAssertion, idpEntityId: string): Promise<FastifyReply> {
  const { app, saml, settings, scheme, singleLogout } = ctx
  const groupOverage = groupOverageInClaims(assertion.claims, assertion.attributeNames)
  const authentication = proofOfAuthnStatement(assertion.authnStatement)
  return await app.externalSignIn.complete(request, reply, taken, {
    scheme,
    protocol: 'Saml2',
    claims: assertion.claims,
    ...(authentication === undefined ? {} : { authentication }),
    ...(ctx.options.runtime === undefined ? {} : { runtime: ctx.options.runtime }),
    ...(groupOverage === undefined ? {} : { groupOverage, acceptGroupOverage: saml.AcceptGroupOverage }),
    returnUrl: taken?.flow?.returnUrl ?? '/',
    claimMappings: saml.ClaimMappings,
    providerDefaults: SAML2_CLAIM_DEFAULTS,
    // The IdP session: NameID (as issued, with Format and qualifiers) and SessionIndex, kept in
    // the server-side session record like OpenID Connect's id_token for its logout hint, and
    // (with Single Logout) indexed so the IdP's own LogoutRequest finds exactly these sessions.
    tokens: sessionToTokens(assertion.session),
    ...(singleLogout ? { indexKeys: signInIndexKeys({ scheme, idpEntityId, spEntityId: settings.entityId }, assertion.session) } : {})
  })
}
