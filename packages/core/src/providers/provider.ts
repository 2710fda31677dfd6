/**
 * The provider interface: what every external identity provider instance offers the core,
 * whatever its protocol (OpenID Connect, SAML2, an OAuth 2.0 vendor). One instance exists per
 * enabled provider, contract section (`Providers:OpenIdConnect`, `Providers:Saml2`, the vendor
 * slots) or named scheme (`Schemes:<Name>`). It starts a challenge, reports readiness, may sign
 * out at the provider, and names the anonymous endpoints where it completes a callback, publishes
 * metadata and receives provider-initiated logout (each protocol's registration in
 * plugins/providers/ routes those paths to it). The registry (providers/registry.ts) finds an
 * instance by scheme or e-mail domain.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Principal } from '../session/principal.js'

/** Availability of a provider (metadata or discovery loaded). */
export interface ProviderStatus {
  readonly available: boolean
  /** Failure class, never a secret or a URL with credentials. */
  readonly reason?: string
}

/** What e-mail discovery knows about the user, passed on to the provider where its protocol allows. */
export interface ChallengeHint {
  /** The address typed on the login page: OpenID Connect `login_hint`, SAML2 `<Subject><NameID>`. */
  readonly loginHint?: string
}

/** What a provider learns at sign-out: who was signed in (claims, tokens it chose to keep) and where to return. */
export interface SignedOutPrincipal {
  readonly principal: Principal
  /** Validated local URL. */
  readonly returnUrl: string
}

/** A remote-authentication handler (OpenID Connect, SAML2, OAuth vendor) as the core sees it. */
export interface AuthenticationProvider {
  readonly scheme: string
  readonly displayName: string
  /** The protocol of the instance: OpenIdConnect, Saml2 or OAuth. */
  readonly protocol?: string
  /** E-mail domains this instance serves (`Domains`), for discovery by e-mail address. */
  readonly domains?: readonly string[]
  /**
   * True for a provider from the app's provider source (issue 28): /health/ready reports it in
   * its details but its failure does not make the app unready.
   */
  readonly runtime?: boolean
  /** Paths the handler owns (callback, ACS, metadata, logout); reachable anonymously. */
  readonly paths: readonly string[]
  /** Starts the protocol flow for a validated local `returnUrl`. */
  challenge: (request: FastifyRequest, reply: FastifyReply, returnUrl: string, hint?: ChallengeHint) => Promise<FastifyReply> | FastifyReply
  /** Readiness: /health/ready and the login page report each provider by it. */
  status: () => ProviderStatus
  /**
   * Optional sign-out at the provider (OpenID Connect RP-initiated logout, SAML2 Single Logout).
   * POST /Account/Logout calls it after the local session has ended, with the principal that was
   * signed in by this provider and the validated local return URL; a URL it returns is where the
   * browser goes next (the provider's logout endpoint), undefined keeps the sign-out local. It
   * must not contact the provider: the local sign-out never waits for or depends on it.
   */
  signOutRedirect?: (request: FastifyRequest, signedOut: SignedOutPrincipal) => Promise<string | undefined> | string | undefined
}
