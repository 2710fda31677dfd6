/**
 * The settings schema of the JwtBearer provider type: a named scheme of Type JwtBearer
 * (`Authentication:Schemes:<Name>`) and the section every bearer scheme shares
 * (`Authentication:Bearer`), no contract section and no path of its own. Built from the
 * helpers of config/schema-parts.ts; composed into the application schema by
 * providers/application-schema.ts. Plain data.
 */
import { Type, type Static } from '@sinclair/typebox'
import { choice, claimMappings, schemeTypeKey, secret, secretArray, strings } from '../config/schema-parts.js'
import type { ProviderInstanceBase } from '../config/provider-type.js'

/**
 * `Authentication:Bearer` (issue 35, item 2; issue 40, items 15 and 17): which routes accept
 * request credentials, and the scopes the protected-resource metadata lists. Composed after
 * `Authentication:Schemes` (providers/application-schema.ts).
 */
export const BearerSectionSchema = Type.Object({
  ScopesSupported: strings([], 'Extension. The scopes listed as scopes_supported in the protected-resource metadata (RFC 9728) at /.well-known/oauth-protected-resource, published while a JwtBearer scheme is configured. Empty: the member is left out.'),
  PathPrefixes: strings(['/api/'], 'Extension. Routes whose path starts with one of these accept Authorization: Bearer tokens of the JwtBearer schemes (a route may also opt in or out with config: { bearer: true | false }). Pages never should. A request carrying a bearer token there is decided by the token alone: a refused token is 401, even with a session cookie. docs/providers/jwt-bearer.md.')
}, { additionalProperties: false, default: {} })

/** `Authentication:Bearer`, as bound. */
export type BearerSectionConfiguration = Static<typeof BearerSectionSchema>

/**
 * Authentication:Schemes:<Name>:Introspection of a JwtBearer scheme (issue 35, item 4): opaque
 * access tokens checked at the issuer's OAuth 2.0 Token Introspection endpoint (RFC 7662). Rules:
 * bearer/settings-rules.ts.
 */
export const JwtBearerIntrospectionSchema = Type.Object({
  ClientId: Type.String({ default: '', description: 'Extension. The client id the API authenticates with at the introspection endpoint (RFC 7662). Setting it turns introspection on: a token that is not a JWT is then sent to the endpoint; a JWT is still validated locally. Empty: opaque tokens are refused.' }),
  ClientSecret: secret('Extension. The introspection client\'s secret, with TokenEndpointAuthMethod client_secret_basic or client_secret_post. Secret: supply it through user secrets, environment variables or a key-per-file directory.'),
  Endpoint: Type.String({ default: '', description: 'Extension. The introspection endpoint URL. Empty: the introspection_endpoint of the Authority\'s discovery document (required when the scheme has no Authority). Absolute https URL (http only on loopback in Development).' }),
  TokenEndpointAuthMethod: choice(['client_secret_basic', 'client_secret_post', 'private_key_jwt'], 'client_secret_basic', 'Extension. How the API authenticates at the introspection endpoint: client_secret_basic (Authorization header, id and secret percent-encoded as for OpenID Connect), client_secret_post (form body) or private_key_jwt (RFC 7523, a JWT signed with ClientAssertionKeys for the issuer as audience).'),
  ClientAssertionKeys: secretArray('Extension. With TokenEndpointAuthMethod private_key_jwt: one or two PEM private keys, as the OpenID Connect section\'s ClientAssertionKeys (the newest signs). Secret.'),
  ClientAssertionCertificates: strings([], 'Extension. With TokenEndpointAuthMethod private_key_jwt: the PEM certificate of each key (optional), as the OpenID Connect section\'s.'),
  TokenPrefix: Type.String({ default: '', description: 'Extension. The text every opaque access token of this issuer starts with (for example its vendor\'s token prefix). An opaque token is sent to one introspection endpoint only: the one whose TokenPrefix it starts with among the schemes the request\'s path selects (PathPrefixes), else the only such scheme without a TokenPrefix; a token starting with another scheme\'s TokenPrefix never goes to a scheme without one. Startup (and a reload, for a scheme from the provider source) refuses two introspecting schemes one of whose TokenPrefix starts with the other\'s, and two introspecting schemes sharing API paths with the same TokenPrefix or both without one; a scheme from the provider source shares API paths with another introspecting scheme only when both have a TokenPrefix. Empty: none. docs/security/api-credentials.md, "Bearer tokens go to one issuer".' }),
  CacheSeconds: Type.Integer({ default: 60, minimum: 0, maximum: 300, description: 'Extension. How long an active introspection answer is reused, 0-300 seconds, never past the token\'s exp: a token revoked at the issuer is refused within this time. Answers are cached in memory by a hash of the token (never the token), at most 10,000 per app; an inactive answer is remembered for at most 10 seconds, at most 1,000 of them.' })
}, { additionalProperties: false, default: {} })

/**
 * Authentication:Schemes:<Name> of Type JwtBearer (issue 35): bearer tokens on API routes, no
 * sign-in. Its rules are bearer/settings-rules.ts; docs/providers/jwt-bearer.md.
 *
 * @public @experimental
 */
export const JwtBearerSchemeSchema = Type.Object({
  Type: schemeTypeKey('JwtBearer', 'Extension. The scheme\'s type: JwtBearer, a bearer scheme for API calls (no sign-in). Required.'),
  Enabled: Type.Boolean({ default: true, description: 'Extension. Accepts bearer tokens of this scheme when true. Default true (declaring a scheme means using it).' }),
  Scheme: Type.String({ default: '', description: 'The scheme name; equals <Name>. The principal of a bearer call carries it, as a session carries its provider\'s.' }),
  DisplayName: Type.String({ default: '', description: 'Extension. Name shown in /health/ready details; bearer schemes are never listed on the login page.' }),
  Authority: Type.String({ default: '', description: 'Extension. Issuer URL of the authorization server; discovery at <Authority>/.well-known/openid-configuration gives the issuer (which must equal it) and jwks_uri. Absolute https URL (http only on loopback in Development). Required unless Issuer and JwksUri are set.' }),
  Issuer: Type.String({ default: '', description: 'Extension. The iss value tokens must carry, when Authority is empty (no discovery). Set together with JwksUri.' }),
  JwksUri: Type.String({ default: '', description: 'Extension. The issuer\'s key set URL, when Authority is empty. Absolute https URL (http only on loopback in Development).' }),
  PathPrefixes: strings([], 'Extension. The API paths where this scheme\'s tokens are accepted: a request whose path (as sent, before decoding, compared case-sensitively) starts with one of them, on a route that accepts bearer tokens (Authentication:Bearer:PathPrefixes or config.bearer), and that a route\'s config.bearerSchemes does not exclude. A token naming (iss) or introspected by a scheme the request\'s path does not select is refused without any outbound call. Each entry starts with /, for example /api/contoso/. Empty: every route that accepts bearer tokens.'),
  Audiences: strings([], 'Extension. The aud values this API accepts; a token must carry one of them. Required: startup refuses a JwtBearer scheme without it. Entra ID: the App ID URI (api://<client id>) or the client id; Okta: the authorization server\'s audience (api://default); Keycloak: the client id an audience mapper adds.'),
  ValidAlgorithms: strings(['RS256', 'PS256', 'ES256', 'EdDSA'], 'Extension. The JWS algorithms accepted for access tokens: asymmetric only (RS, PS, ES 256/384/512, EdDSA); none and the HMAC algorithms are refused at startup.'),
  ClockSkewSeconds: Type.Integer({ default: 60, minimum: 0, maximum: 300, description: 'Extension. Clock skew allowed on the token\'s exp, nbf and iat, 0-300 seconds.' }),
  // Token hardening (issue 40, items 3 and 6).
  MaxTokenLifetimeSeconds: Type.Integer({ default: 86400, minimum: 60, maximum: 604800, description: 'Extension. The longest lifetime accepted, 60-604800 seconds (default 86400, one day): a token whose exp - iat is longer is refused; a token without iat, when exp is further than this (plus ClockSkewSeconds) from now. An iat ahead of now by more than ClockSkewSeconds is refused too. Applies to introspection answers that carry exp.' }),
  RequireAccessTokenType: Type.Boolean({ default: false, description: 'Extension. Set it when the issuer marks its access tokens with typ at+jwt as RFC 9068 says (oidc-provider does, Auth0 with its RFC 9068 token profile; look at a token\'s header): the JWS header typ must then be at+jwt or application/at+jwt (any case), so an ID token (typ JWT) or any other JWT of the issuer is refused. Default false: typ at+jwt, JWT or none is accepted (Entra ID sends JWT), and ID tokens are refused by their claims (DangerouslyAllowIdTokenMarkers).' }),
  DangerouslyAllowIdTokenMarkers: Type.Boolean({ default: false, description: 'Extension. DANGEROUS. Accepts tokens that carry nonce, at_hash, c_hash or s_hash, the claims of an ID token. Default false: such a token is refused (bearer.refused failure id_token), because an ID token whose aud is one of Audiences (the sign-in client id) would otherwise be accepted as an access token, and an ID token reaches the browser and the sign-in app\'s logs. Only for an issuer that puts nonce into access tokens (Keycloak before 25); then Audiences must never hold a sign-in client\'s id.' }),
  ClaimMappings: claimMappings('Extension. Per-scheme claim mapping overrides, as the OpenID Connect section\'s: an array of { From, To } (token claim name, or a nested claim path such as realm_access.roles or /resource_access/my-api/roles -> application claim type) or a JSON object { "<claim>": "<type>" }. The token\'s scope and scp are application:scope claims, read by scope policies only; an entry scp -> permission makes them permissions too (only where an administrator alone grants those scopes).'),
  Introspection: JwtBearerIntrospectionSchema,
  DevelopmentTokens: Type.Boolean({ default: false, description: 'Extension. DANGEROUS, Development only. Also accept the tokens `npm run dev-token` mints (issuer dev-tokens:<Name>, signed with the app\'s own key under .state/dev-tokens/, created on first use and never read from configuration), with every other check of this scheme (Audiences, lifetime, policies). Startup refuses true outside Development, and the key is never loaded there. Default false.' }),
  // Sender-constrained tokens (issue 35, item 5): DPoP, RFC 9449.
  RequireDPoP: Type.Boolean({ default: false, description: 'Extension. Accept only DPoP-bound tokens (cnf.jkt) sent as Authorization: DPoP with a valid DPoP proof (RFC 9449): a plain bearer token of this scheme is refused. Every JwtBearer scheme accepts DPoP requests; a DPoP-bound token sent as Bearer is always refused. Proofs: typ dpop+jwt, an alg of ValidAlgorithms, a public jwk, htm and htu of the request (htu from Hosting:PublicOrigin, else the request\'s origin), iat within 60 seconds, ath, and a jti used once (the state store\'s replay cache; shared across instances with Redis).' })
}, { additionalProperties: false, default: {} })

/** Authentication:Schemes:<Name> of Type JwtBearer. @public @experimental */
export type JwtBearerSchemeConfiguration = Static<typeof JwtBearerSchemeSchema>

/** A JwtBearer scheme's settings (no Type): bearer tokens on API routes, no sign-in (bearer/). @public @experimental */
export type JwtBearerSettingsOfInstance = Omit<JwtBearerSchemeConfiguration, 'Type'>

/** A JwtBearer scheme: configured, or a definition from the provider source. */
export type JwtBearerInstance = ProviderInstanceBase & { readonly protocol: 'JwtBearer', readonly settings: JwtBearerSettingsOfInstance }
