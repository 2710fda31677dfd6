/**
 * The provider interface: what every external identity provider instance offers the core,
 * whatever its protocol (OpenID Connect, SAML2, an OAuth 2.0 vendor). One instance exists per
 * enabled provider, contract section (`Providers:OpenIdConnect`, `Providers:Saml2`, the vendor
 * slots) or named scheme (`Schemes:<Name>`). It starts a challenge, reports readiness, may sign
 * out at the provider, and declares the anonymous endpoints where it completes a callback,
 * publishes metadata and receives provider-initiated logout ({@link ProviderEndpoint}: method,
 * path, limits and handler; every kind of endpoint, with its limits, is one row of
 * {@link ENDPOINT_KINDS}). The protocols in plugins/providers/ build instances and declare no
 * routes themselves; plugins/providers/open-provider.ts opens an instance of any protocol, the
 * same way for a configured provider and one from the app's provider source. Then
 * plugins/external-providers.ts registers each declared endpoint as an anonymous route, and
 * plugins/runtime-providers.ts dispatches its parametric routes to the endpoints of a provider
 * from the provider source (its bookkeeping: providers/runtime-provider-set.ts). The registry
 * (providers/registry.ts) finds an instance by scheme or e-mail domain.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Principal } from '../session/principal.js'
import type { AuthenticationRequirement } from '../session/authentication-proof.js'
import type { UserIdentity } from '../session/user-identity.js'
import type { RateLimitBucket } from '../state/rate-limit-store.js'

/** Availability of a provider (metadata or discovery loaded). @public @experimental */
export interface ProviderStatus {
  readonly available: boolean
  /** Failure class, never a secret or a URL with credentials. */
  readonly reason?: string
}

/** What e-mail discovery knows about the user, passed on to the provider where its protocol allows. @public @experimental */
export interface ChallengeHint {
  /** The address typed on the login page: OpenID Connect `login_hint`, SAML2 `<Subject><NameID>`. */
  readonly loginHint?: string
  /**
   * A step-up (issue 36, item 3): the session's user is sent back to the provider that signed it
   * in, asking for `requirement` (from the server-side policy, never the request); the response
   * must prove it and name the same `identity`. Only a provider with {@link AuthenticationProvider.stepUp} gets one.
   */
  readonly stepUp?: { readonly requirement: AuthenticationRequirement, readonly identity: UserIdentity }
}

/** What a provider learns at sign-out: who was signed in (claims, tokens it chose to keep) and where to return. @public @experimental */
export interface SignedOutPrincipal {
  readonly principal: Principal
  /** Validated local URL. */
  readonly returnUrl: string
}

/**
 * What an endpoint of a provider is for: the sign-in callback (OpenID Connect, OAuth), the SAML2
 * Assertion Consumer Service, the SAML2 SP metadata document, the OpenID Connect signed-out
 * callback, SAML2 Single Logout, OpenID Connect Back-Channel Logout.
 *
 * @public @experimental
 */
export type ProviderEndpointKind = 'callback' | 'acs' | 'metadata' | 'signed-out-callback' | 'logout' | 'back-channel-logout'

/** What every endpoint of one kind shares, whichever provider declares it. */
export interface ProviderEndpointKindRules {
  /** The methods an endpoint of the kind may answer (a protocol may declare one of them only). */
  readonly methods: ReadonlyArray<'GET' | 'POST'>
  /** The group of per-client rate limits it counts in (`RateLimits:*`); none when absent. */
  readonly rateLimitBucket?: RateLimitBucket
  /** Largest body of its POST in bytes; the parser's or the server's limit when absent. */
  readonly postBodyLimit?: number
  /**
   * The key of a section that sets its path. Its default for a named scheme (its type's registration,
   * providers/provider-types.ts `defaultPathsOf`) is also, with `:scheme` for the name, the pattern of the parametric route
   * that serves a provider from the provider source, whose paths are fixed to these defaults.
   */
  readonly pathKey: 'CallbackPath' | 'SignedOutCallbackPath' | 'BackChannelLogoutPath' | 'ModulePath' | 'MetadataPath' | 'LogoutPath'
}

/**
 * Every kind of provider endpoint, once, in the order a named scheme's path keys are listed: its
 * methods, rate-limit group, body limit and path key. A protocol declares its endpoints with
 * {@link providerEndpoint}, so a configured route and the parametric route of the same kind have
 * the same limits.
 */
export const ENDPOINT_KINDS: { readonly [K in ProviderEndpointKind]: ProviderEndpointKindRules } = {
  // The OpenID Connect or OAuth callback; a form_post response (code, state, id_token) is a few KB.
  callback: { methods: ['GET', 'POST'], rateLimitBucket: 'callback', postBodyLimit: 16 * 1024, pathKey: 'CallbackPath' },
  'signed-out-callback': { methods: ['GET'], rateLimitBucket: 'sign-out', pathKey: 'SignedOutCallbackPath' },
  // One form field holding a logout token.
  'back-channel-logout': { methods: ['POST'], rateLimitBucket: 'logout-receiver', postBodyLimit: 16 * 1024, pathKey: 'BackChannelLogoutPath' },
  // Signed SAML2 responses outgrow the 16 KB form limit.
  acs: { methods: ['POST'], rateLimitBucket: 'callback', postBodyLimit: 256 * 1024, pathKey: 'ModulePath' },
  metadata: { methods: ['GET'], pathKey: 'MetadataPath' },
  logout: { methods: ['GET', 'POST'], rateLimitBucket: 'logout-receiver', postBodyLimit: 256 * 1024, pathKey: 'LogoutPath' }
}

/**
 * One anonymous endpoint of a provider (auth-contract.md, "(paths) ... Owned by authentication
 * middleware"). For a configured provider the core registers it as a route with `config: {
 * allowAnonymous: true, rateLimitBucket }` and `bodyLimit`, so it appears in the reviewed
 * anonymous-route inventory; a provider from the provider source is reached through the core's
 * parametric routes, which call `handle`.
 *
 * @public @experimental
 */
export interface ProviderEndpoint {
  /** The HTTP method; a GET endpoint answers HEAD too. */
  readonly method: 'GET' | 'POST'
  /** The configured path (CallbackPath, ModulePath, ...), matched as Fastify matches a static route. */
  readonly path: string
  /** What the endpoint is for. */
  readonly kind: ProviderEndpointKind
  /** Largest request body in bytes; the parser's or the server's limit when absent. */
  readonly bodyLimit?: number
  /** The group of per-client rate limits the endpoint counts in (`RateLimits:*`); none when absent. */
  readonly rateLimitBucket?: RateLimitBucket
  /** Answers a request to the endpoint (the protocol's handler). */
  handle: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> | FastifyReply
}

/** One endpoint of `kind` at `path`, with the limits of its kind ({@link ENDPOINT_KINDS}). */
export function providerEndpoint (kind: ProviderEndpointKind, method: 'GET' | 'POST', path: string, handle: ProviderEndpoint['handle']): ProviderEndpoint {
  const { rateLimitBucket, postBodyLimit } = ENDPOINT_KINDS[kind]
  return {
    method,
    path,
    kind,
    ...(method === 'POST' && postBodyLimit !== undefined ? { bodyLimit: postBodyLimit } : {}),
    ...(rateLimitBucket === undefined ? {} : { rateLimitBucket }),
    handle
  }
}

/** The paths of `endpoints`, each once, in declaration order: a core-built provider's {@link AuthenticationProvider.paths}. */
export function endpointPathsOf (endpoints: readonly ProviderEndpoint[]): string[] {
  return [...new Set(endpoints.map((endpoint) => endpoint.path))]
}

/**
 * When a provider instance loads what it needs from its provider (discovery document, IdP
 * metadata): a configured one on its own schedule from startup ({@link ALREADY_OPEN}), one from the
 * app's provider source on first use ({@link openingOnFirstUse}). Internal: not part of the
 * package's API.
 */
export interface ProviderOpening {
  /** Resolves once the first load has been made (it waits for it on first use). */
  open: () => Promise<void>
  /** Whether the first load has been started: until then nothing is known against the provider. */
  readonly opened: boolean
}

/** A configured instance: nothing to wait for on use. */
export const ALREADY_OPEN: ProviderOpening = { open: async () => {}, opened: true }

/** An instance from the provider source: runs `load` once, on first use; later calls wait for the same first load. */
export function openingOnFirstUse (load: () => Promise<void>): ProviderOpening {
  let first: Promise<void> | undefined
  return {
    open: async () => { first ??= load(); await first },
    get opened () { return first !== undefined }
  }
}

/** A scheme that authenticates a credential sent with each request instead of signing users in. @public @experimental */
export interface RequestCredentialScheme {
  /** Its type, as its section's `Type` spells it. */
  readonly type: string
  readonly scheme: string
}

/** A remote-authentication handler (OpenID Connect, SAML2, OAuth vendor) as the core sees it. @public @experimental */
export interface AuthenticationProvider {
  readonly scheme: string
  readonly displayName: string
  /** The protocol of the instance: OpenIdConnect, Saml2 or OAuth. */
  readonly protocol?: string
  /** E-mail domains this instance serves (`Domains`), for discovery by e-mail address. */
  readonly domains?: readonly string[]
  /**
   * True for a provider from the app's provider source (issue 28): /health/ready counts it among
   * the unavailable runtime providers (never by name) but its failure does not make the app unready.
   */
  readonly runtime?: boolean
  /**
   * The identity issuer the provider trusts, once known: a SAML2 IdP's entity id (`IdpEntityId`, or
   * its metadata's). A provider from the provider source may not trust an issuer another provider
   * already trusts (issue 33, item 6).
   */
  readonly issuer?: () => string | undefined
  /** Paths the handler owns (callback, ACS, metadata, logout); reachable anonymously. */
  readonly paths: readonly string[]
  /**
   * The endpoints behind {@link paths}, with method, limits and handler. Every provider the core
   * builds declares them (its `paths` are derived from them). `app.authentication.registerProvider`
   * registers no route: a provider an app implements and registers itself routes its own paths,
   * and may leave this out.
   */
  readonly endpoints?: readonly ProviderEndpoint[]
  /**
   * Set for a scheme of a request-credential type (issue 35; issue 43, item 1): it authenticates a
   * credential sent with each API call and signs no one in, so the login page does not list it
   * and /External/Challenge does not start it.
   */
  readonly credentialScheme?: RequestCredentialScheme
  /**
   * True when {@link challenge} honours {@link ChallengeHint.stepUp} (OpenID Connect, SAML2): it asks
   * the provider for the requirement and its callback refuses a response that does not prove it.
   * A session of a provider without it that does not satisfy a step-up policy is forbidden.
   */
  readonly stepUp?: boolean
  /** Starts the protocol flow for a validated local `returnUrl`. */
  challenge: (request: FastifyRequest, reply: FastifyReply, returnUrl: string, hint?: ChallengeHint) => Promise<FastifyReply> | FastifyReply
  /** Readiness: /health/ready counts it, the login page marks it, the `app.provider.available` gauge reports it. */
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

/** A provider instance as its protocol's registration opened it: the provider with its endpoints, and how to stop its state. */
export interface OpenedProvider {
  readonly provider: AuthenticationProvider & { readonly endpoints: readonly ProviderEndpoint[] }
  /** Stops its schedules and unregisters its token refresher (a provider from the provider source, when removed). */
  stop: () => void
}
