/**
 * An OpenID Connect instance's sign-in: the challenge (authorization request with PKCE, state,
 * nonce and, from e-mail discovery, login_hint; pushed first with PushedAuthorization; for a step-up
 * the policy's acr_values, max_age and prompt=login, sealed into the flow with the session's user)
 * and the callback at CallbackPath (query, or the form body with ResponseMode form_post; a step-up
 * response must prove the requirement, oidc/step-up.ts), and RP-initiated logout's end_session URL.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import * as client from 'openid-client'
import { buildAuthorizationRequest, completeAuthorizationCodeFlow, newCorrelationValues, OpenIdConnectError, PushedAuthorizationUnsupportedError } from '../../oidc/relying-party.js'
import { singleValue } from '../../http/request-input.js'
import { providerSessionIndexKey, providerSubjectIndexKey } from '../../session/session-store.js'
import type { ChallengeHint, SignedOutPrincipal } from '../authentication.js'
import { proofOfTokenClaims } from '../../session/authentication-proof.js'
import { stepUpFlowData } from '../../sign-in/step-up-flow.js'
import type { OpenIdConnectContext } from './openid-connect-instance.js'

export async function challenge (ctx: OpenIdConnectContext, request: FastifyRequest, reply: FastifyReply, returnUrl: string, hint?: ChallengeHint): Promise<FastifyReply> {
  const { app, settings, scheme, metadata } = ctx
  const config = metadata.current
  if (config === undefined) return app.externalSignIn.fail(request, reply, scheme, 'unavailable')
  const { nonce, codeVerifier } = newCorrelationValues()
  const stepUp = hint?.stepUp
  const state = await app.externalSignIn.beginFlow(reply, scheme, returnUrl, {
    nonce,
    codeVerifier,
    ...(stepUp === undefined ? {} : stepUpFlowData(stepUp, Math.floor(Date.now() / 1000)))
  })
  let url: URL
  try {
    url = await buildAuthorizationRequest(config, {
      redirectUri: `${app.externalSignIn.publicOrigin(request)}${settings.CallbackPath}`,
      scopes: settings.Scopes,
      resources: settings.Resources,
      state,
      nonce,
      codeVerifier,
      responseMode: settings.ResponseMode,
      ...(hint?.loginHint === undefined ? {} : { loginHint: hint.loginHint }),
      ...(stepUp === undefined ? {} : { stepUp: stepUp.requirement }),
      pushedAuthorization: settings.PushedAuthorization,
      pushedAuthorizationSetting: `${ctx.options.instance.keyPrefix}:PushedAuthorization`
    })
  } catch (failure) {
    // The provider refused or did not answer the pushed authorization request (RFC 9126).
    if (failure instanceof OpenIdConnectError) return app.externalSignIn.fail(request, reply, scheme, failure.failure, failure)
    if (failure instanceof PushedAuthorizationUnsupportedError) return app.externalSignIn.fail(request, reply, scheme, 'unavailable', failure)
    throw failure
  }
  return reply.redirect(url.href, 302)
}

/**
 * The authorization response: from the query (GET) or, with ResponseMode form_post, from the
 * form body of the provider's cross-site POST. No anti-forgery token: the state and the
 * correlation cookie bind the response to the browser that started the flow.
 */
export async function callback (ctx: OpenIdConnectContext, request: FastifyRequest, reply: FastifyReply, parameters: unknown, query: string | undefined): Promise<FastifyReply> {
  const { app, settings, scheme, metadata, keysOf, fieldPaths } = ctx
  const state = singleValue(parameters, 'state')
  const taken = await app.externalSignIn.takeFlow(request, reply, scheme, state)
  const flow = taken.flow
  const error = singleValue(parameters, 'error')
  if (error !== undefined) return app.externalSignIn.fail(request, reply, scheme, error === 'access_denied' ? 'cancelled' : 'provider_error')
  if (flow === undefined) return app.externalSignIn.fail(request, reply, scheme, taken.correlationFailure)
  const config = metadata.current
  if (config === undefined) return app.externalSignIn.fail(request, reply, scheme, 'unavailable')
  const nonce = flow.data.nonce
  const codeVerifier = flow.data.codeVerifier
  if (nonce === undefined || codeVerifier === undefined) return app.externalSignIn.fail(request, reply, scheme, 'correlation')

  if (query === undefined) return app.externalSignIn.fail(request, reply, scheme, 'provider_error')
  try {
    const callbackUrl = new URL(`${app.externalSignIn.publicOrigin(request)}${settings.CallbackPath}${query}`)
    const result = await completeAuthorizationCodeFlow(config, callbackUrl, {
      state: flow.flowId,
      nonce,
      codeVerifier,
      ...(taken.stepUp === undefined ? {} : { stepUp: taken.stepUp })
    }, {
      keys: keysOf(config),
      algorithm: settings.IdTokenSignedResponseAlg,
      clockToleranceSeconds: settings.ClockSkewSeconds,
      fieldPaths,
      ...(ctx.allowedTenants === undefined ? {} : { tenants: ctx.allowedTenants })
    })
    const { issuer, sub, sid } = result.providerSession
    const authentication = proofOfTokenClaims(result.idTokenClaims)
    return await app.externalSignIn.complete(request, reply, taken, {
      scheme,
      protocol: 'OpenIdConnect',
      claims: result.claims,
      ...(authentication === undefined ? {} : { authentication }),
      ...(ctx.options.runtime === undefined ? {} : { runtime: ctx.options.runtime }),
      // AllowedTenants: the allowed tenant's mapping is the only application:tenant claim.
      ...(result.tenant === undefined ? {} : { tenant: result.tenant.applicationTenant === undefined ? {} : { value: result.tenant.applicationTenant } }),
      ...(result.groupOverage === undefined ? {} : { groupOverage: result.groupOverage, acceptGroupOverage: settings.AcceptGroupOverage }),
      // Back-channel logout finds the session by the provider's sid, or by its sub.
      ...(settings.BackChannelLogout
        ? { indexKeys: [providerSubjectIndexKey(issuer, sub), ...(sid === undefined ? [] : [providerSessionIndexKey(issuer, sid)])] }
        : {}),
      returnUrl: flow.returnUrl,
      claimMappings: settings.ClaimMappings,
      // RP-initiated logout needs the ID token as id_token_hint: kept alone when SaveTokens is off.
      ...(settings.SaveTokens
        ? { tokens: result.tokens }
        : settings.SignOutAtProvider && result.tokens.id_token !== undefined ? { tokens: { id_token: result.tokens.id_token } } : {})
    })
  } catch (failure) {
    if (failure instanceof OpenIdConnectError) {
      return app.externalSignIn.fail(request, reply, scheme, failure.failure, failure)
    }
    // An unparsable callback URL (the host check makes it unreachable; never a 500 if it is not).
    if ((failure as { code?: unknown }).code === 'ERR_INVALID_URL') return app.externalSignIn.fail(request, reply, scheme, 'provider_error', failure)
    throw failure
  }
}

/**
 * RP-initiated logout: the provider's end_session_endpoint with id_token_hint (when the ticket
 * kept the ID token), client_id, the registered post-logout redirect URI and the local return
 * URL as `state`. Nothing is sent to the provider from here; undefined (local sign-out only)
 * when the option is off, the metadata is not loaded or the provider has no end_session_endpoint.
 */
export function signOutRedirect (ctx: OpenIdConnectContext, request: FastifyRequest, signedOut: SignedOutPrincipal): string | undefined {
  const { app, settings, metadata } = ctx
  const config = metadata.current
  if (!settings.SignOutAtProvider || config === undefined || config.serverMetadata().end_session_endpoint === undefined) return undefined
  const parameters: Record<string, string> = {
    post_logout_redirect_uri: `${app.externalSignIn.publicOrigin(request)}${settings.SignedOutCallbackPath}`,
    state: signedOut.returnUrl
  }
  const idToken = signedOut.principal.ticket.tokens?.id_token
  if (idToken !== undefined) parameters.id_token_hint = idToken
  return client.buildEndSessionUrl(config, parameters).href
}
