/**
 * The settings schema of the OpenID Connect provider type: the contract section
 * `Authentication:Providers:OpenIdConnect` (auth-contract.md, "Providers:OpenIdConnect") and a
 * named scheme of Type OpenIdConnect (`Authentication:Schemes:<Name>`), with the paths that
 * default from the scheme's name. Built from the helpers of config/schema-parts.ts; composed
 * into the application schema by providers/application-schema.ts. Plain data.
 */
import { Type, type Static } from '@sinclair/typebox'
import { acceptGroupOverage, choice, claimMappings, providerCommon, schemeTypeKey, secret, secretArray, strings } from '../config/schema-parts.js'
import type { ProviderInstanceBase } from '../config/provider-type.js'

/** @public */
export const OpenIdConnectSchema = Type.Object({
  ...providerCommon('OpenIdConnect', 'OpenID Connect'),
  Authority: Type.String({ default: '', description: 'Issuer URL; discovery is read from <Authority>/.well-known/openid-configuration. Absolute https URL (http only on loopback in Development). Required when enabled.' }),
  ClientId: Type.String({ default: '', description: 'Client identifier registered at the provider. Required when enabled.' }),
  ClientSecret: secret('Client secret. Required when enabled. Secret: never commit it.'),
  CallbackPath: Type.String({ default: '/signin-oidc', description: 'Redirect URI path handled by the OpenID Connect handler.' }),
  ResponseType: Type.String({ default: 'code', description: 'OAuth response type. Only "code" (authorization code flow with PKCE) is supported.' }),
  ResponseMode: choice(['query', 'form_post'], 'query', 'Extension. How the provider returns the authorization response: query (a GET to CallbackPath) or form_post (OAuth 2.0 Form Post Response Mode: a cross-site POST to CallbackPath, carried by the SameSite=None correlation cookie). The callback accepts only the configured method.'),
  SaveTokens: Type.Boolean({ default: false, description: 'When true, the provider tokens are stored in the sealed session ticket.' }),
  Scopes: strings(['openid', 'profile', 'email'], 'Scopes requested at the authorization endpoint.'),
  Resources: strings([], 'Extension. RFC 8707 resource indicators sent with the authorization request, one resource parameter each (absolute URIs without fragment): the APIs the sign-in\'s refresh token may later get a token for (DownstreamApis:<Name>:UserToken:Resource must be among them). Empty: none sent. Entra ID v2 refuses the parameter (it takes the API in the scope).'),
  SignOutAtProvider: Type.Boolean({ default: false, description: 'Extension. RP-initiated logout: after the local sign-out, POST /Account/Logout sends the browser to the provider\'s end_session_endpoint with id_token_hint and the post-logout redirect URI (<origin><SignedOutCallbackPath>, which must be registered at the provider). Keeps the ID token in the session ticket even when SaveTokens is false.' }),
  SignedOutCallbackPath: Type.String({ default: '/signout-callback-oidc', description: 'Extension. Path of the post-logout redirect URI the provider returns to after RP-initiated logout (SignOutAtProvider).' }),
  BackChannelLogout: Type.Boolean({ default: false, description: 'Extension. OpenID Connect Back-Channel Logout 1.0: the provider POSTs a signed logout token to <origin><BackChannelLogoutPath> (register it as the client\'s backchannel_logout_uri, with backchannel_logout_session_required true where offered) and the app ends every session of that sid, or of that sub when the token names no sid, on every instance.' }),
  BackChannelLogoutPath: Type.String({ default: '/backchannel-logout-oidc', description: 'Extension. Path of the back-channel logout endpoint (BackChannelLogout): anonymous, POST only, no anti-forgery token (a server-to-server call authenticated by the logout token\'s signature).' }),
  IdTokenSignedResponseAlg: Type.String({ default: 'RS256', description: 'Extension. The only JWS algorithm accepted for ID tokens (pinned; the provider\'s advertised list is not trusted).' }),
  TokenEndpointAuthMethod: choice(['', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'], '', 'Extension. How the client authenticates at the token endpoint (and the pushed authorization request endpoint): client_secret_basic (Authorization header; id and secret percent-encoded first, RFC 6749 section 2.3.1, leaving the RFC 3986 unreserved characters A-Z a-z 0-9 - . _ ~ as they are), client_secret_post (form body), or private_key_jwt (RFC 7523: a JWT signed with ClientAssertionKeys, valid 60 seconds with a unique jti; ClientSecret is then not used). Empty: client_secret_post when the discovery document\'s token_endpoint_auth_methods_supported lists only client_secret_post, or lists it and the client id or secret holds a character that encoding changes (such as + / = : % or a space: providers such as LemonLDAP::NG and Glewlwyd do not decode Basic credentials); otherwise client_secret_basic.'),
  ClientAssertionKeys: secretArray('Extension. With TokenEndpointAuthMethod private_key_jwt: one or two PEM private keys (RSA of 2048 bits or more, EC P-256/P-384/P-521, Ed25519; unencrypted), one per entry. Two keys are for rotation: the newest signs (the later NotBefore of their certificates, else the later listed), so register the new certificate or public key at the provider first, then add the new key beside the old one. Each assertion carries kid, the key\'s RFC 7638 thumbprint. Secret: supply it through user secrets, environment variables or a key-per-file directory.'),
  ClientAssertionCertificates: strings([], 'Extension. With TokenEndpointAuthMethod private_key_jwt: the PEM certificate of each key in ClientAssertionKeys (optional; Entra ID requires one). Each must match one of the keys; its thumbprints go in the assertion header as x5t#S256 and x5t.'),
  ClientAssertionAudience: choice(['Issuer', 'Endpoint'], 'Issuer', 'Extension. With TokenEndpointAuthMethod private_key_jwt: the aud of each client assertion, one string. Issuer (default): the provider\'s issuer identifier (the remedy of the OpenID Foundation\'s 2025 private_key_jwt advisory; Keycloak and RFC 9126 accept it). Endpoint: the URL of the one endpoint the assertion is sent to (the token endpoint, or the pushed authorization request endpoint), as Entra ID and Okta document it; only for a configured provider whose discovery document you trust (refused for a provider from the provider source). Either way a fresh assertion goes with every request.'),
  AllowedTenants: strings([], 'Extension. Multi-tenant authorities (Entra ID organizations or common, whose discovery issuer is a {tenantid} template): the tenant ids allowed to sign in, each "<tenant id>" or "<tenant id>=<application tenant>", the tenant id a lower-case GUID (Entra: Overview, Tenant ID; not a domain name) (that tenant\'s users then carry the application:tenant claim with that value, and no other; for a provider from the provider source only its definition\'s tenant, to which a mapping may not name another). The ID token\'s tid must be listed and its iss must equal the template with that tid; the user\'s identity keeps the tenant\'s own issuer. Required when the Authority is such an endpoint (common, organizations, consumers) or its discovery issuer is a template; set with any other Authority, the tid must still be listed.'),
  PushedAuthorization: choice(['Never', 'IfAvailable', 'Require'], 'Never', 'Extension. Pushed authorization requests (RFC 9126): Never (default; the discovery document alone never switches PAR on), IfAvailable (pushed when the discovery document names a pushed_authorization_request_endpoint) or Require (always pushed; a provider whose discovery names no PAR endpoint stays unavailable and the log names this key). With PAR the browser carries only client_id and request_uri.'),
  ClockSkewSeconds: Type.Integer({ default: 60, minimum: 0, maximum: 300, description: 'Extension. Clock skew allowed on the ID token\'s exp, iat and nbf and on logout tokens, 0-300 seconds.' }),
  ClaimMappings: claimMappings('Extension. Per-provider claim mapping overrides: an array of { From, To } (provider claim name, or a nested claim path such as realm_access.roles or /resource_access/my-app/roles -> application claim type) or a JSON object { "<claim>": "<type>" }.'),
  AcceptGroupOverage: acceptGroupOverage()
}, { additionalProperties: false, default: {} })

/** Authentication:Schemes:<Name> of Type OpenIdConnect: the keys of Providers:OpenIdConnect. @public */
export const OpenIdConnectSchemeSchema = Type.Object({
  Type: schemeTypeKey('OpenIdConnect', 'Extension. The scheme\'s protocol: OpenIdConnect, Saml2 or JwtBearer. Required. The other keys are those of Providers:OpenIdConnect.'),
  ...OpenIdConnectSchema.properties
}, { additionalProperties: false, default: {} })

/** @public */
export type OpenIdConnectConfiguration = Static<typeof OpenIdConnectSchema>
/** @public */
export type OpenIdConnectSchemeConfiguration = Static<typeof OpenIdConnectSchemeSchema>

/** An OpenID Connect provider: the contract section, a named scheme or a definition from the provider source. */
export type OpenIdConnectInstance = ProviderInstanceBase & { readonly protocol: 'OpenIdConnect', readonly settings: OpenIdConnectConfiguration }

/** The endpoint paths of a named OpenID Connect scheme unless its path keys say otherwise (lower-case name). */
export function openIdConnectSchemePaths (name: string): Record<string, string> {
  const lower = name.toLowerCase()
  return { CallbackPath: `/signin-${lower}`, SignedOutCallbackPath: `/signout-callback-${lower}`, BackChannelLogoutPath: `/backchannel-logout-${lower}` }
}
