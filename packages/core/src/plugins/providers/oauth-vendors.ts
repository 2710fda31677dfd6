/**
 * The VendorA, VendorB and VendorC slots (auth-contract.md, "Providers:VendorA, Providers:VendorB,
 * Providers:VendorC"): one OAuth 2.0 authorization-code handler instance per enabled slot, with
 * its own configuration, anonymous callback at CallbackPath (declared as its endpoint;
 * plugins/external-providers.ts registers the route) and entry on the login page. After the
 * code exchange the user-information JSON becomes provider claims (nested fields where a
 * ClaimMappings source is a path such as `data.id`); with an EmailsEndpoint, the verified primary
 * address from it replaces the user-information `email`. `id` -> subject and `login` -> name are
 * the vendor defaults, ClaimMappings override them. With SaveTokens the tokens go into the
 * server-side session record and app.session.accessToken refreshes them at the token endpoint. Vendor-specific needs
 * (extra authorization parameters, other defaults) go into {@link VENDOR_SLOTS}.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import {
  buildAuthorizationUrl,
  fetchUserInformation,
  fetchVerifiedPrimaryEmail,
  newCodeVerifier,
  redeemAuthorizationCode,
  refreshVendorTokens,
  tokenRecord,
  userInformationClaims,
  VENDOR_DEFAULT_CLAIM_MAPPINGS,
  VendorFlowError,
  type VendorEndpoints
} from '../../oauth/vendor-client.js'
import type { VendorConfiguration, VendorName } from '../../oauth/settings-schema.js'
import { TokenRefreshError, type TokenRefresher } from '../../session/token-refresh.js'
import { singleValue } from '../../http/request-input.js'
import { groupOverageInJson } from '../../sign-in/group-overage.js'
import { endpointPathsOf, providerEndpoint } from '../../providers/provider.js'
import type { ProviderRegistration } from '../authentication.js'
import type { ProviderInstance } from '../../providers/provider-instances.js'

/** Per-slot handler settings that are code, not configuration. */
export interface VendorSlot {
  /** Claim mapping defaults for this vendor, below its ClaimMappings configuration. */
  readonly providerDefaults: Readonly<Record<string, string>>
  /** Extra authorization request parameters the vendor needs. */
  readonly authorizationParameters: Readonly<Record<string, string>>
}

export const VENDOR_SLOTS: Readonly<Record<VendorName, VendorSlot>> = {
  VendorA: { providerDefaults: VENDOR_DEFAULT_CLAIM_MAPPINGS, authorizationParameters: {} },
  VendorB: { providerDefaults: VENDOR_DEFAULT_CLAIM_MAPPINGS, authorizationParameters: {} },
  VendorC: { providerDefaults: VENDOR_DEFAULT_CLAIM_MAPPINGS, authorizationParameters: {} }
}

/** One slot's handler: its own settings and endpoints. */
class VendorHandler {
  /** The scheme's name (its instance's). */
  readonly scheme: string
  readonly #app: FastifyInstance
  readonly #settings: VendorConfiguration
  readonly #slot: VendorSlot
  readonly #endpoints: VendorEndpoints

  constructor (app: FastifyInstance, scheme: string, settings: VendorConfiguration, slot: VendorSlot) {
    this.scheme = scheme
    this.#app = app
    this.#settings = settings
    this.#slot = slot
    this.#endpoints = {
      clientId: settings.ClientId,
      clientSecret: settings.ClientSecret,
      tokenEndpointAuthMethod: settings.TokenEndpointAuthMethod,
      emailsEndpoint: settings.EmailsEndpoint.trim() === '' ? undefined : settings.EmailsEndpoint,
      authorizationEndpoint: settings.AuthorizationEndpoint,
      tokenEndpoint: settings.TokenEndpoint,
      userInformationEndpoint: settings.UserInformationEndpoint
    }
  }

  #redirectUri (request: FastifyRequest): string {
    return `${this.#app.externalSignIn.publicOrigin(request)}${this.#settings.CallbackPath}`
  }

  async challenge (request: FastifyRequest, reply: FastifyReply, returnUrl: string): Promise<FastifyReply> {
    const codeVerifier = this.#settings.UsePkce ? newCodeVerifier() : undefined
    const state = await this.#app.externalSignIn.beginFlow(reply, this.scheme, returnUrl, codeVerifier === undefined ? {} : { codeVerifier })
    const url = await buildAuthorizationUrl(this.#endpoints, {
      redirectUri: this.#redirectUri(request),
      scopes: this.#settings.Scopes,
      state,
      codeVerifier,
      extraParameters: this.#slot.authorizationParameters
    })
    return reply.redirect(url.href, 302)
  }

  /** Refreshes stored tokens (SaveTokens) at the slot's token endpoint. */
  async refresh (tokens: Readonly<Record<string, string>>): Promise<Record<string, string>> {
    return await refreshVendorTokens(this.#endpoints, tokens)
  }

  async callback (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const signIn = this.#app.externalSignIn
    const taken = await signIn.takeFlow(request, reply, this.scheme, singleValue(request.query, 'state'))
    const flow = taken.flow
    const error = singleValue(request.query, 'error')
    if (error !== undefined) return signIn.fail(request, reply, this.scheme, error === 'access_denied' ? 'cancelled' : 'provider_error')
    if (flow === undefined) return signIn.fail(request, reply, this.scheme, taken.correlationFailure)
    const code = singleValue(request.query, 'code')
    if (typeof code !== 'string' || code === '') return signIn.fail(request, reply, this.scheme, 'provider_error')
    const codeVerifier = flow.data.codeVerifier
    if (this.#settings.UsePkce && codeVerifier === undefined) return signIn.fail(request, reply, this.scheme, 'correlation')
    try {
      const tokens = await redeemAuthorizationCode(this.#endpoints, { code, redirectUri: this.#redirectUri(request), codeVerifier })
      const information = await fetchUserInformation(this.#endpoints, tokens.accessToken)
      let claims = userInformationClaims(information, this.scheme, Object.keys(this.#settings.ClaimMappings))
      if (this.#endpoints.emailsEndpoint !== undefined) {
        // The user-information address may be unverified (GitHub: the public profile address).
        const email = await fetchVerifiedPrimaryEmail(this.#endpoints, tokens.accessToken)
        claims = claims.filter((claim) => claim.type !== 'email')
        if (email !== undefined) claims.push({ type: 'email', value: email, issuer: this.scheme })
      }
      const groupOverage = groupOverageInJson(information)
      return await signIn.complete(request, reply, taken, {
        scheme: this.scheme,
        claims,
        ...(groupOverage === undefined ? {} : { groupOverage, acceptGroupOverage: this.#settings.AcceptGroupOverage }),
        returnUrl: flow.returnUrl,
        ...(this.#settings.SaveTokens ? { tokens: tokenRecord(tokens) } : {}),
        providerDefaults: this.#slot.providerDefaults,
        claimMappings: this.#settings.ClaimMappings
      })
    } catch (failure) {
      if (failure instanceof VendorFlowError) return signIn.fail(request, reply, this.scheme, failure.failure, failure)
      throw failure
    }
  }
}

/** Builds one vendor slot's instance (its endpoint: the callback at CallbackPath) and, with SaveTokens, registers its token refresher. */
export const registerVendor: ProviderRegistration<Extract<ProviderInstance, { protocol: 'OAuth' }>> = (app, options) => {
  const settings = options.instance.settings
  const handler = new VendorHandler(app, options.instance.scheme, settings, VENDOR_SLOTS[options.instance.vendor])
  // A vendor's refresh grant takes no per-API parameters: no token for one API from it.
  const refresher: TokenRefresher = async (tokens, parameters) => {
    if (parameters !== undefined) throw new TokenRefreshError('unavailable')
    return await handler.refresh(tokens)
  }
  const unregisterRefresher = settings.SaveTokens ? app.session.registerTokenRefresher(handler.scheme, refresher) : undefined
  const endpoints = [providerEndpoint('callback', 'GET', settings.CallbackPath, async (request, reply) => await handler.callback(request, reply))]
  return {
    provider: {
      scheme: handler.scheme,
      displayName: settings.DisplayName,
      protocol: 'OAuth',
      domains: settings.Domains,
      paths: endpointPathsOf(endpoints),
      endpoints,
      challenge: async (request, reply, returnUrl) => await handler.challenge(request, reply, returnUrl),
      status: () => ({ available: true })
    },
    stop: () => { unregisterRefresher?.() }
  }
}
