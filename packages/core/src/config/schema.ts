/**
 * The configuration schema: the single source of the configuration's types, defaults, JSON Schema
 * (`appsettings.schema.json`) and binding. Key names are the contract's, verbatim
 * (auth-contract.md, "Resources and their fields"); keys the contract does not name are marked
 * "Extension" and documented in docs/configuration.md.
 */
import { Type, type Static, type TLiteral, type TSchema, type TUnion, type TUnsafe } from '@sinclair/typebox'
import { APPLICATION_NAME, applicationNaming } from '../application-name.js'
import type { Secret } from './secret.js'
import { TelemetrySchema } from './telemetry-schema.js'

/**
 * The default configuration root key (`ProjectTemplate`). An app with another `applicationName`
 * has its configuration under that name instead (application-name.ts).
 */
export const ROOT_KEY = APPLICATION_NAME

/** Marks a string key whose value is a secret: bound as {@link Secret}, never printed. */
export const SECRET_KEYWORD = 'x-secret'

function secret (description: string): TUnsafe<Secret> {
  return Type.Unsafe<Secret>({ type: 'string', default: '', [SECRET_KEYWORD]: true, description })
}

/** One of a fixed set of strings (a union of literals in the JSON Schema). */
function choice<const T extends string> (values: readonly T[], defaultValue: NoInfer<T>, description: string): TUnion<Array<TLiteral<T>>> {
  return Type.Union(values.map((value) => Type.Literal(value)), { default: defaultValue, description })
}

function secretArray (description: string): TUnsafe<Secret[]> {
  return Type.Unsafe<Secret[]>({ type: 'array', items: { type: 'string', [SECRET_KEYWORD]: true }, default: [], description })
}

/** Marks a claim-mapping key: bound from either form into one provider claim -> application claim type map. */
export const CLAIM_MAPPINGS_KEYWORD = 'x-claim-mappings'

/** Marks Authentication:Schemes: a map of named schemes, each bound by the protocol its Type names (config/bind.ts). */
export const SCHEMES_KEYWORD = 'x-schemes'

/** Marks a map of named sections (`DownstreamApis:<Name>`), each bound by the schema in its `additionalProperties`. */
export const NAMED_SECTIONS_KEYWORD = 'x-named-sections'

/** The JSON Schema of one key or section, as the binder and the reference generator walk it. */
export interface SchemaNode {
  type?: string
  default?: unknown
  description?: string
  properties?: Record<string, SchemaNode>
  patternProperties?: Record<string, SchemaNode>
  items?: SchemaNode
  anyOf?: Array<{ const?: string }>
  minimum?: number
  maximum?: number
  [SECRET_KEYWORD]?: boolean
  [CLAIM_MAPPINGS_KEYWORD]?: boolean
  [SCHEMES_KEYWORD]?: boolean
  [NAMED_SECTIONS_KEYWORD]?: boolean
  additionalProperties?: SchemaNode | boolean
}

/**
 * A provider's ClaimMappings in either form: the JSON object `{ "<provider claim>": "<application
 * claim type>" }`, or an array of `{ From, To }` objects, which every configuration source can
 * express (environment variables and key-per-file names cannot contain the `:` and `/` of claim
 * URIs: `..._ClaimMappings__0__From=http://...`). Bound to the object form; an array entry wins
 * over an object entry with the same name. An empty To removes a mapping.
 */
function claimMappings (description: string): TUnsafe<Record<string, string>> {
  return Type.Unsafe<Record<string, string>>({
    [CLAIM_MAPPINGS_KEYWORD]: true,
    anyOf: [
      { type: 'object', additionalProperties: { type: 'string' } },
      {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            From: { type: 'string', description: 'Provider claim name, attribute URI or (OpenID Connect and vendors) nested claim path such as realm_access.roles or /data/id.' },
            To: { type: 'string', description: 'Application claim type (subject, name, email, role, group, permission or application:*); empty removes the mapping.' }
          },
          required: ['From'],
          additionalProperties: false
        }
      }
    ],
    default: {},
    description
  })
}

/**
 * Providers:<name>:AcceptGroupOverage (docs/providers.md, "Entra ID"): DANGEROUS for an app whose
 * authorization reads groups; an overage sign-in then has no group claims at all.
 */
function acceptGroupOverage () {
  return Type.Boolean({ default: false, description: 'Extension. DANGEROUS when the application authorizes by group: accepts a sign-in whose token or assertion says the groups were left out (Entra ID group overage: hasgroups, _claim_names.groups, or the SAML attribute http://schemas.microsoft.com/claims/groups.link); the user then has no group claims. Default false: such a sign-in is refused (failure group_overage) and logged as external.sign_in.group_overage. Set true only for an application that does not use groups.' })
}

const strings = (defaults: string[], description: string) =>
  Type.Array(Type.String(), { default: defaults, description })

function providerCommon (name: string, displayName: string) {
  return {
    Enabled: Type.Boolean({ default: false, description: `Registers the ${name} provider when true. Default false.` }),
    Scheme: Type.String({ default: name, description: `Authentication scheme name. Equals the provider name (${name}).` }),
    DisplayName: Type.String({ default: displayName, description: 'Label shown on the login page.' }),
    Domains: strings([], 'Extension. E-mail domains this provider serves (example.com): GET /External/Challenge?email=<address> starts the sign-in here when the address\'s domain is one of them (case-insensitive), and the login page offers an e-mail field when any provider lists one. Empty: not chosen by e-mail. A domain belongs to one provider.')
  }
}

/**
 * The OAuth 2.0 vendor slots. Adding a name here adds its configuration section (callback path
 * `/signin-<name in lower case>`), its startup rules (oauth/settings-rules.ts), its registration
 * (plugins/providers/open-provider.ts) and its handler slot (plugins/providers/oauth-vendors.ts, where
 * the compiler asks for its entry); test/config/provider-names.test.ts checks each of them.
 */
export const VENDOR_NAMES = ['VendorA', 'VendorB', 'VendorC'] as const
export type VendorName = (typeof VENDOR_NAMES)[number]

/** Scopes each vendor slot requests by default. */
const VENDOR_DEFAULT_SCOPES: Readonly<Record<VendorName, readonly string[]>> = {
  VendorA: [],
  VendorB: ['profile', 'email'],
  VendorC: ['profile', 'email']
}

/** Every external provider: the OpenID Connect and SAML2 handlers, then the vendor slots, in registration order. */
export const PROVIDER_NAMES = ['OpenIdConnect', 'Saml2', ...VENDOR_NAMES] as const
export type ProviderName = (typeof PROVIDER_NAMES)[number]

/** Extension keys shared by the OAuth 2.0 vendor slots (docs/providers.md). */
function vendor (name: VendorName, callbackPath: string, scopes: readonly string[]) {
  return Type.Object({
    ...providerCommon(name, name),
    ClientId: Type.String({ default: '', description: 'OAuth client identifier. Required when enabled.' }),
    ClientSecret: secret('OAuth client secret. Required when enabled. Secret: supply it through user secrets, environment variables or a key-per-file directory.'),
    CallbackPath: Type.String({ default: callbackPath, description: 'Redirect URI path handled by this provider.' }),
    Scopes: strings([...scopes], 'Scopes requested at the authorization endpoint.'),
    AuthorizationEndpoint: Type.String({ default: '', description: 'Extension. Absolute https URL of the authorization endpoint. Required when enabled.' }),
    TokenEndpoint: Type.String({ default: '', description: 'Extension. Absolute https URL of the token endpoint. Required when enabled.' }),
    UserInformationEndpoint: Type.String({ default: '', description: 'Extension. Absolute https URL of the user-information endpoint. Required when enabled.' }),
    EmailsEndpoint: Type.String({ default: '', description: 'Extension. Optional absolute https URL of a second endpoint listing the user\'s e-mail addresses in GitHub\'s /user/emails shape; the primary, verified address becomes the email claim (and replaces the user-information email). Empty: not used.' }),
    TokenEndpointAuthMethod: choice(['client_secret_basic', 'client_secret_post'], 'client_secret_basic', 'Extension. How the client authenticates at the token endpoint (RFC 6749 section 2.3.1): client_secret_basic (Authorization header) or client_secret_post (form body).'),
    UsePkce: Type.Boolean({ default: true, description: 'Extension. Sends a PKCE S256 code challenge. Turn off only for a provider that rejects PKCE.' }),
    SaveTokens: Type.Boolean({ default: false, description: 'Extension. When true, the access token (and the refresh token and expiry, when the vendor issues them) are kept in the sealed server-side session record, for app.session.accessToken, which refreshes them shortly before expiry.' }),
    ClaimMappings: claimMappings('Extension. Maps user-information fields to application claim types: an array of { From, To } (From may be a nested field path such as data.id or /data/id) or a JSON object { "login": "name" }. Merged over the default table and the vendor defaults (id -> subject, login -> name).'),
    AcceptGroupOverage: acceptGroupOverage()
  }, { additionalProperties: false, default: {} })
}

/** The TypeBox schema of one vendor slot (Providers:VendorA, VendorB, VendorC). */
export type VendorSchema = ReturnType<typeof vendor>

/**
 * `State:Redis:Sentinel`: Redis behind Sentinel (docs/scale-out.md, "Sentinel and Cluster"). Set
 * MasterName and Nodes instead of ConnectionString; the store asks the sentinels for the primary
 * and follows it through a failover (node-redis `createSentinel`).
 */
const RedisSentinelSchema = Type.Object({
  MasterName: Type.String({ default: '', description: 'Extension. The name the sentinels monitor the primary under (sentinel monitor <name> ...). Set with Nodes to use Sentinel; then ConnectionString stays empty.' }),
  Nodes: strings([], 'Extension. The sentinels, as host:port ([::1]:26379 for IPv6); three or more, so that one lost sentinel does not stop discovery.'),
  Username: Type.String({ default: '', description: 'Extension. ACL user on the primary and replicas (empty: the default user).' }),
  Password: secret('Extension. Password of the primary and replicas (requirepass or the ACL user\'s). Secret: never logged.'),
  SentinelUsername: Type.String({ default: '', description: 'Extension. ACL user on the sentinels themselves (empty: the default user).' }),
  SentinelPassword: secret('Extension. Password of the sentinels themselves (their requirepass), which is separate from the primary\'s. Secret: never logged.'),
  Tls: Type.Boolean({ default: false, description: 'Extension. TLS to the sentinels and the data nodes (as rediss:// does for ConnectionString).' })
}, { additionalProperties: false, default: {} })

/**
 * `State:Redis:Cluster`: a Redis Cluster (cluster mode enabled; Redis 7.0 or later, or Valkey, for
 * sharded pub/sub). Set Nodes instead of ConnectionString (node-redis `createCluster`).
 */
const RedisClusterSchema = Type.Object({
  Nodes: strings([], 'Extension. Some of the cluster\'s nodes, as host:port, from which the client learns the whole cluster; list more than one, so that startup does not depend on a single node. Set to use a Redis Cluster; then ConnectionString stays empty.'),
  Username: Type.String({ default: '', description: 'Extension. ACL user on the cluster nodes (empty: the default user).' }),
  Password: secret('Extension. Password of the cluster nodes. Secret: never logged.'),
  Tls: Type.Boolean({ default: false, description: 'Extension. TLS to the cluster nodes (as rediss:// does for ConnectionString).' })
}, { additionalProperties: false, default: {} })

/** One configuration section per vendor slot, named after it. */
function vendorSections (): Record<VendorName, VendorSchema> {
  return Object.fromEntries(VENDOR_NAMES.map((name) => [name, vendor(name, `/signin-${name.toLowerCase()}`, VENDOR_DEFAULT_SCOPES[name])])) as Record<VendorName, VendorSchema>
}

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
  SignOutAtProvider: Type.Boolean({ default: false, description: 'Extension. RP-initiated logout: after the local sign-out, POST /Account/Logout sends the browser to the provider\'s end_session_endpoint with id_token_hint and the post-logout redirect URI (<origin><SignedOutCallbackPath>, which must be registered at the provider). Keeps the ID token in the session ticket even when SaveTokens is false.' }),
  SignedOutCallbackPath: Type.String({ default: '/signout-callback-oidc', description: 'Extension. Path of the post-logout redirect URI the provider returns to after RP-initiated logout (SignOutAtProvider).' }),
  BackChannelLogout: Type.Boolean({ default: false, description: 'Extension. OpenID Connect Back-Channel Logout 1.0: the provider POSTs a signed logout token to <origin><BackChannelLogoutPath> (register it as the client\'s backchannel_logout_uri, with backchannel_logout_session_required true where offered) and the app ends every session of that sid, or of that sub when the token names no sid, on every instance.' }),
  BackChannelLogoutPath: Type.String({ default: '/backchannel-logout-oidc', description: 'Extension. Path of the back-channel logout endpoint (BackChannelLogout): anonymous, POST only, no anti-forgery token (a server-to-server call authenticated by the logout token\'s signature).' }),
  IdTokenSignedResponseAlg: Type.String({ default: 'RS256', description: 'Extension. The only JWS algorithm accepted for ID tokens (pinned; the provider\'s advertised list is not trusted).' }),
  TokenEndpointAuthMethod: choice(['', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'], '', 'Extension. How the client authenticates at the token endpoint (and the pushed authorization request endpoint): client_secret_basic (Authorization header; id and secret percent-encoded first, RFC 6749 section 2.3.1, leaving the RFC 3986 unreserved characters A-Z a-z 0-9 - . _ ~ as they are), client_secret_post (form body), or private_key_jwt (RFC 7523: a JWT signed with ClientAssertionKeys, valid 60 seconds with a unique jti; ClientSecret is then not used). Empty: client_secret_post when the discovery document\'s token_endpoint_auth_methods_supported lists only client_secret_post, or lists it and the client id or secret holds a character that encoding changes (such as + / = : % or a space: providers such as LemonLDAP::NG and Glewlwyd do not decode Basic credentials); otherwise client_secret_basic.'),
  ClientAssertionKeys: secretArray('Extension. With TokenEndpointAuthMethod private_key_jwt: one or two PEM private keys (RSA of 2048 bits or more, EC P-256/P-384/P-521, Ed25519; unencrypted), one per entry. Two keys are for rotation: the newest signs (the later NotBefore of their certificates, else the later listed), so register the new certificate or public key at the provider first, then add the new key beside the old one. Each assertion carries kid, the key\'s RFC 7638 thumbprint. Secret: supply it through user secrets, environment variables or a key-per-file directory.'),
  ClientAssertionCertificates: strings([], 'Extension. With TokenEndpointAuthMethod private_key_jwt: the PEM certificate of each key in ClientAssertionKeys (optional; Entra ID requires one). Each must match one of the keys; its thumbprints go in the assertion header as x5t#S256 and x5t.'),
  AllowedTenants: strings([], 'Extension. Multi-tenant authorities (Entra ID organizations or common, whose discovery issuer is a {tenantid} template): the tenant ids allowed to sign in, each "<tenant id>" or "<tenant id>=<application tenant>" (that tenant\'s users then carry the application:tenant claim with that value, and no other). The ID token\'s tid must be listed and its iss must equal the template with that tid; the user\'s identity keeps the tenant\'s own issuer. Required when the Authority is such an endpoint (common, organizations, consumers) or its discovery issuer is a template; set with any other Authority, the tid must still be listed.'),
  PushedAuthorization: choice(['Never', 'IfAvailable', 'Require'], 'Never', 'Extension. Pushed authorization requests (RFC 9126): Never (default; the discovery document alone never switches PAR on), IfAvailable (pushed when the discovery document names a pushed_authorization_request_endpoint) or Require (always pushed; a provider whose discovery names no PAR endpoint stays unavailable and the log names this key). With PAR the browser carries only client_id and request_uri.'),
  ClockSkewSeconds: Type.Integer({ default: 60, minimum: 0, maximum: 300, description: 'Extension. Clock skew allowed on the ID token\'s exp, iat and nbf and on logout tokens, 0-300 seconds.' }),
  ClaimMappings: claimMappings('Extension. Per-provider claim mapping overrides: an array of { From, To } (provider claim name, or a nested claim path such as realm_access.roles or /resource_access/my-app/roles -> application claim type) or a JSON object { "<claim>": "<type>" }.'),
  AcceptGroupOverage: acceptGroupOverage()
}, { additionalProperties: false, default: {} })

export const Saml2Schema = Type.Object({
  ...providerCommon('Saml2', 'SAML2'),
  EntityId: Type.String({ default: '', description: 'Service-provider entity id (URL). Required when enabled.' }),
  MetadataUrl: Type.String({ default: '', description: 'Identity-provider metadata URL. Required when enabled.' }),
  ModulePath: Type.String({ default: '/Saml2/Acs', description: 'Assertion Consumer Service path (HTTP-POST binding).' }),
  LoadMetadata: Type.Boolean({ default: true, description: 'When true, the IdP SSO URL and signing certificates are read from MetadataUrl.' }),
  RequireSignedAssertions: Type.Boolean({ default: true, description: 'When true, an unsigned assertion is rejected even inside a signed response.' }),
  ValidateCertificates: Type.Boolean({ default: true, description: 'When true, an IdP signing certificate outside its validity period is rejected.' }),
  IdpEntityId: Type.String({ default: '', description: 'Extension. IdP entity id; required when LoadMetadata is false. With LoadMetadata it selects the IdP of an EntitiesDescriptor aggregate (required when the aggregate lists more than one IdP) and must equal the entityID of a single EntityDescriptor.' }),
  IdpSingleSignOnUrl: Type.String({ default: '', description: 'Extension. IdP HTTP-Redirect SSO URL; required when LoadMetadata is false.' }),
  IdpSigningCertificates: strings([], 'Extension. IdP signing certificates (PEM or base64 DER); required when LoadMetadata is false.'),
  AllowUnsolicitedResponses: Type.Boolean({ default: false, description: 'Extension. DANGEROUS: accepts IdP-initiated responses without a matching AuthnRequest. Default false.' }),
  RestartUnsolicitedSignIn: Type.Boolean({ default: false, description: 'Extension. Safe IdP-initiated sign-in (Okta tiles, Entra My Apps): an unsolicited response is not trusted but starts a fresh SP-initiated sign-in, returning to the RelayState when it is a local URL. Ignored when AllowUnsolicitedResponses is true.' }),
  SigningKey: secret('Extension. SP private key (PEM, RSA) that signs AuthnRequests and LogoutRequests (HTTP-Redirect binding, SigAlg rsa-sha256). Empty: requests are not signed. Requires SigningCertificate. Secret: supply it through user secrets, environment variables or a key-per-file directory.'),
  SigningCertificate: Type.String({ default: '', description: 'Extension. Certificate (PEM or base64 DER) of SigningKey; must match it. Published in /Saml2/Metadata as KeyDescriptor use="signing" with AuthnRequestsSigned="true".' }),
  SigningCertificateNext: Type.String({ default: '', description: 'Extension. A second signing certificate published beside SigningCertificate while the key rolls over (the next one before the switch, the previous one after it). Never used to sign.' }),
  EncryptionKey: secret('Extension. SP private key (PEM, RSA) that decrypts EncryptedAssertion (RSA-OAEP key transport; AES-GCM or AES-CBC content). Empty: encrypted assertions are refused. Requires EncryptionCertificate. Secret.'),
  EncryptionCertificate: Type.String({ default: '', description: 'Extension. Certificate (PEM or base64 DER) of EncryptionKey; must match it. Published in /Saml2/Metadata as KeyDescriptor use="encryption"; the IdP encrypts to it.' }),
  EncryptionKeyPrevious: secret('Extension. The previous encryption key, still accepted for decryption while the IdP moves to the new EncryptionCertificate (rollover). Never published. Secret.'),
  MetadataSigningCertificates: strings([], 'Extension. Certificates (PEM or base64 DER) trusted to sign the IdP metadata (federation aggregates, ADFS/Entra federation metadata). When any is set, metadata whose root does not carry a valid enveloped signature by one of them, or whose validUntil has passed, is refused (readiness reason metadata_signature). Two while the signer rolls over.'),
  SignOutAtProvider: Type.Boolean({ default: false, description: 'Extension. SAML Single Logout (SP-initiated): after the local sign-out, POST /Account/Logout sends the browser to the IdP\'s HTTP-Redirect SingleLogoutService with a LogoutRequest signed by SigningKey (required), naming the NameID and SessionIndex kept in the session; the IdP answers at /Saml2/Logout. Without an IdP SingleLogoutService the sign-out stays local.' }),
  IdpSingleLogoutUrl: Type.String({ default: '', description: 'Extension. IdP HTTP-Redirect SingleLogoutService URL when LoadMetadata is false (optional; with LoadMetadata it is read from the metadata).' }),
  ClockSkewSeconds: Type.Integer({ default: 60, minimum: 0, maximum: 300, description: 'Extension. Clock skew allowed on NotBefore/NotOnOrAfter, 0-300 seconds.' }),
  MetadataRefreshMinutes: Type.Integer({ default: 60, minimum: 1, description: 'Extension. How often IdP metadata is refreshed.' }),
  ClaimMappings: claimMappings('Extension. Per-provider claim mapping overrides: an array of { From, To } (attribute name or URI -> application claim type) or a JSON object { "<attribute>": "<type>" }.'),
  AcceptGroupOverage: acceptGroupOverage()
}, { additionalProperties: false, default: {} })

/** The protocols a named scheme (Authentication:Schemes:<Name>:Type) may be. */
export const SCHEME_TYPES = ['OpenIdConnect', 'Saml2', 'JwtBearer'] as const
export type SchemeType = (typeof SCHEME_TYPES)[number]

/** Names a named scheme may not take: the cookie scheme and the contract's provider sections. */
export const RESERVED_SCHEME_NAMES: readonly string[] = ['Cookies', ...PROVIDER_NAMES]

const schemeTypeKey = <const T extends SchemeType>(type: T) =>
  Type.Literal(type, {
    default: type,
    description: type === 'JwtBearer'
      ? 'Extension. The scheme\'s type: JwtBearer, a bearer scheme for API calls (no sign-in). Required.'
      : `Extension. The scheme's protocol: OpenIdConnect, Saml2 or JwtBearer. Required. The other keys are those of Providers:${type}.`
  })

/** Authentication:Schemes:<Name> of Type OpenIdConnect: the keys of Providers:OpenIdConnect. */
export const OpenIdConnectSchemeSchema = Type.Object({
  Type: schemeTypeKey('OpenIdConnect'),
  ...OpenIdConnectSchema.properties
}, { additionalProperties: false, default: {} })

/** Authentication:Schemes:<Name> of Type Saml2: the keys of Providers:Saml2, and its own metadata and logout paths. */
export const Saml2SchemeSchema = Type.Object({
  Type: schemeTypeKey('Saml2'),
  ...Saml2Schema.properties,
  MetadataPath: Type.String({ default: '', description: 'Extension (named SAML2 schemes). Anonymous path of this scheme\'s SP metadata. Default /Saml2/<Name>/Metadata.' }),
  LogoutPath: Type.String({ default: '', description: 'Extension (named SAML2 schemes). Single Logout endpoint of this scheme. Default /Saml2/<Name>/Logout.' })
}, { additionalProperties: false, default: {} })

/**
 * Authentication:Schemes:<Name>:Introspection of a JwtBearer scheme (issue 35, item 4): opaque
 * access tokens checked at the issuer's OAuth 2.0 Token Introspection endpoint (RFC 7662). One
 * block of its own, so that it can move with the JwtBearer schema. Rules: bearer/settings-rules.ts.
 */
export const JwtBearerIntrospectionSchema = Type.Object({
  ClientId: Type.String({ default: '', description: 'Extension. The client id the API authenticates with at the introspection endpoint (RFC 7662). Setting it turns introspection on: a token that is not a JWT is then sent to the endpoint; a JWT is still validated locally. Empty: opaque tokens are refused.' }),
  ClientSecret: secret('Extension. The introspection client\'s secret, with TokenEndpointAuthMethod client_secret_basic or client_secret_post. Secret: supply it through user secrets, environment variables or a key-per-file directory.'),
  Endpoint: Type.String({ default: '', description: 'Extension. The introspection endpoint URL. Empty: the introspection_endpoint of the Authority\'s discovery document (required when the scheme has no Authority). Absolute https URL (http only on loopback in Development).' }),
  TokenEndpointAuthMethod: choice(['client_secret_basic', 'client_secret_post', 'private_key_jwt'], 'client_secret_basic', 'Extension. How the API authenticates at the introspection endpoint: client_secret_basic (Authorization header, id and secret percent-encoded as for OpenID Connect), client_secret_post (form body) or private_key_jwt (RFC 7523, a JWT signed with ClientAssertionKeys for the issuer as audience).'),
  ClientAssertionKeys: secretArray('Extension. With TokenEndpointAuthMethod private_key_jwt: one or two PEM private keys, as the OpenID Connect section\'s ClientAssertionKeys (the newest signs). Secret.'),
  ClientAssertionCertificates: strings([], 'Extension. With TokenEndpointAuthMethod private_key_jwt: the PEM certificate of each key (optional), as the OpenID Connect section\'s.'),
  CacheSeconds: Type.Integer({ default: 60, minimum: 0, maximum: 300, description: 'Extension. How long an active introspection answer is reused, 0-300 seconds, never past the token\'s exp: a token revoked at the issuer is refused within this time. Answers are cached in memory by a hash of the token (never the token), at most 10,000 per app; an inactive answer is remembered for at most 10 seconds, at most 1,000 of them.' })
}, { additionalProperties: false, default: {} })

/**
 * Authentication:Schemes:<Name> of Type JwtBearer (issue 35): bearer tokens on API routes, no
 * sign-in. Its rules are bearer/settings-rules.ts; docs/providers.md, "Protect an API".
 */
export const JwtBearerSchemeSchema = Type.Object({
  Type: schemeTypeKey('JwtBearer'),
  Enabled: Type.Boolean({ default: true, description: 'Extension. Accepts bearer tokens of this scheme when true. Default true (declaring a scheme means using it).' }),
  Scheme: Type.String({ default: '', description: 'The scheme name; equals <Name>. The principal of a bearer call carries it, as a session carries its provider\'s.' }),
  DisplayName: Type.String({ default: '', description: 'Extension. Name shown in /health/ready details; bearer schemes are never listed on the login page.' }),
  Authority: Type.String({ default: '', description: 'Extension. Issuer URL of the authorization server; discovery at <Authority>/.well-known/openid-configuration gives the issuer (which must equal it) and jwks_uri. Absolute https URL (http only on loopback in Development). Required unless Issuer and JwksUri are set.' }),
  Issuer: Type.String({ default: '', description: 'Extension. The iss value tokens must carry, when Authority is empty (no discovery). Set together with JwksUri.' }),
  JwksUri: Type.String({ default: '', description: 'Extension. The issuer\'s key set URL, when Authority is empty. Absolute https URL (http only on loopback in Development).' }),
  Audiences: strings([], 'Extension. The aud values this API accepts; a token must carry one of them. Required: startup refuses a JwtBearer scheme without it. Entra ID: the App ID URI (api://<client id>) or the client id; Okta: the authorization server\'s audience (api://default); Keycloak: the client id an audience mapper adds.'),
  ValidAlgorithms: strings(['RS256', 'PS256', 'ES256', 'EdDSA'], 'Extension. The JWS algorithms accepted for access tokens: asymmetric only (RS, PS, ES 256/384/512, EdDSA); none and the HMAC algorithms are refused at startup.'),
  ClockSkewSeconds: Type.Integer({ default: 60, minimum: 0, maximum: 300, description: 'Extension. Clock skew allowed on the token\'s exp and nbf, 0-300 seconds.' }),
  ClaimMappings: claimMappings('Extension. Per-scheme claim mapping overrides, as the OpenID Connect section\'s: an array of { From, To } (token claim name, or a nested claim path such as realm_access.roles or /resource_access/my-api/roles -> application claim type) or a JSON object { "<claim>": "<type>" }. scope and scp map to application:permission by default.'),
  Introspection: JwtBearerIntrospectionSchema,
  // Sender-constrained tokens (issue 35, item 5): DPoP, RFC 9449.
  RequireDPoP: Type.Boolean({ default: false, description: 'Extension. Accept only DPoP-bound tokens (cnf.jkt) sent as Authorization: DPoP with a valid DPoP proof (RFC 9449): a plain bearer token of this scheme is refused. Every JwtBearer scheme accepts DPoP requests; a DPoP-bound token sent as Bearer is always refused. Proofs: typ dpop+jwt, an alg of ValidAlgorithms, a public jwk, htm and htu of the request (htu from Hosting:PublicOrigin, else the request\'s origin), iat within 60 seconds, ath, and a jti used once (the state store\'s replay cache; shared across instances with Redis).' })
}, { additionalProperties: false, default: {} })

function schemesSchema (): TUnsafe<Record<string, SchemeConfiguration>> {
  return Type.Unsafe<Record<string, SchemeConfiguration>>({
    type: 'object',
    [SCHEMES_KEYWORD]: true,
    additionalProperties: { oneOf: [OpenIdConnectSchemeSchema, Saml2SchemeSchema, JwtBearerSchemeSchema] },
    default: {},
    description: 'Extension. Named providers beside the contract sections: Schemes:<Name> with Type (OpenIdConnect, Saml2 or JwtBearer) and that type\'s keys; <Name> is the scheme (/External/Challenge?provider=<Name> for the sign-in types; JwtBearer schemes authenticate API calls only). Paths default from the name. docs/providers.md, "Several identity providers".'
  })
}

export const AuthenticationSchema = Type.Object({
  Enabled: Type.Boolean({ default: true, description: 'Application authentication module switch. When false, a one-time startup warning is logged and RequireAuthenticatedUserByDefault must be false.' }),
  DefaultScheme: Type.String({ default: 'Cookies', description: 'Default authenticate scheme. Must be Cookies.' }),
  DefaultChallengeScheme: Type.String({ default: 'Cookies', description: `Default challenge scheme: Cookies, or the scheme of an enabled provider (${PROVIDER_NAMES.join(', ')}).` }),
  DefaultSignInScheme: Type.String({ default: 'Cookies', description: 'Default sign-in scheme. Must be Cookies.' }),
  Cookie: Type.Object({
    Enabled: Type.Boolean({ default: true, description: 'Extension. Cookie session authentication. false only together with Authentication:Enabled false (the --authProvider none posture).' }),
    AllowInsecureHttp: Type.Boolean({ default: false, description: 'DANGEROUS, Development only: the session cookie drops the __Host- prefix and Secure. Rejected outside Development.' }),
    ExpireMinutes: Type.Integer({ default: 60, minimum: 1, maximum: 43200, description: 'Extension. Idle session lifetime in minutes: the session ends after this long without renewal. Enforced from the server-side session record.' }),
    SlidingExpiration: Type.Boolean({ default: true, description: 'Extension. Renews the session once more than half of ExpireMinutes has passed, never beyond AbsoluteExpireMinutes.' }),
    AbsoluteExpireMinutes: Type.Integer({ default: 720, minimum: 1, maximum: 43200, description: 'Extension. Absolute session lifetime in minutes from sign-in (OWASP ASVS V3.3.2): sliding renewal never extends it; the user signs in again. At least ExpireMinutes.' })
  }, { additionalProperties: false, default: {} }),
  ClaimsTransformation: Type.Object({
    Enabled: Type.Boolean({ default: true, description: 'Extension. Maps provider claims into the application claim types at sign-in.' }),
    RemoveOriginalClaims: Type.Boolean({ default: false, description: 'When true, original provider claims are removed after normalization.' })
  }, { additionalProperties: false, default: {} }),
  SignInHook: Type.Object({
    TimeoutSeconds: Type.Integer({ default: 5, minimum: 1, maximum: 60, description: 'Extension. Time limit of the application\'s sign-in hook (createApp signInHook): a hook that has not answered by then refuses the sign-in (fail closed). docs/providers.md, "Sign-in hook".' })
  }, { additionalProperties: false, default: {} }),
  ProviderSource: Type.Object({
    AllowedInternalHosts: strings([], 'Extension. Host names (idp.corp.example) or networks (10.1.0.0/16, or one address) that providers from the app\'s provider source may reach although they are internal. Outside Development such a provider may otherwise reach only public addresses: a URL with user information, localhost, or a host that is or resolves to a loopback, private, link-local or unique-local address is refused when the definition is validated and at every connection. Configured providers are not restricted. docs/security.md, "Outbound addresses of customers\' providers".')
  }, { additionalProperties: false, default: {} }),
  Providers: Type.Object({
    OpenIdConnect: OpenIdConnectSchema,
    Saml2: Saml2Schema,
    ...vendorSections()
  }, { additionalProperties: false, default: {} }),
  Schemes: schemesSchema(),
  Bearer: Type.Object({
    ScopesSupported: strings([], 'Extension. The scopes listed as scopes_supported in the protected-resource metadata (RFC 9728) at /.well-known/oauth-protected-resource, published while a JwtBearer scheme is configured. Empty: the member is left out.'),
    PathPrefixes: strings(['/api/'], 'Extension. Routes whose path starts with one of these accept Authorization: Bearer tokens of the JwtBearer schemes (a route may also opt in or out with config: { bearer: true | false }). Pages never should. A request carrying a bearer token there is decided by the token alone: a refused token is 401, even with a session cookie. docs/providers.md, "Protect an API".')
  }, { additionalProperties: false, default: {} })
}, { additionalProperties: false, default: {} })

export const AuthorizationSchema = Type.Object({
  RequireAuthenticatedUserByDefault: Type.Boolean({ default: true, description: 'When true, a fallback policy requires an authenticated user for routes with no authorization metadata.' }),
  RoleClaimType: Type.String({ default: 'application:role', description: 'Claim type read by role policies.' }),
  PermissionClaimType: Type.String({ default: 'application:permission', description: 'Claim type read by permission policies.' }),
  AdministratorRoles: strings(['Administrator'], 'Role values that satisfy the administrator role policy.'),
  ManageApplicationPermissions: strings(['application.manage'], 'Permission values that satisfy the manage-application permission policy.')
}, { additionalProperties: false, default: {} })

// ---------------------------------------------------------------------------------------------
// DownstreamApis (issue 35 item 7, issue 36 item 2): the APIs this app calls, by name. One block,
// so that it can move to its own folder with its rules (downstream/settings-rules.ts).
// ---------------------------------------------------------------------------------------------

/** `DownstreamApis:<Name>:ClientCredentials`: the app's own token (RFC 6749 section 4.4). */
const DownstreamClientCredentialsSchema = Type.Object({
  Authority: Type.String({ default: '', description: 'Extension. Issuer URL of the authorization server; discovery at <Authority>/.well-known/openid-configuration gives the token endpoint. Absolute https URL (http only on loopback in Development). Set this or TokenEndpoint.' }),
  TokenEndpoint: Type.String({ default: '', description: 'Extension. The token endpoint itself, when the server has no discovery document. Absolute https URL (http only on loopback in Development). Set this or Authority.' }),
  ClientId: Type.String({ default: '', description: 'Extension. The app\'s client id at the authorization server. Setting it turns client-credentials tokens on for this API.' }),
  ClientSecret: secret('Extension. The client secret (client_secret_basic or client_secret_post). Required unless TokenEndpointAuthMethod is private_key_jwt. Secret: supply it through user secrets, environment variables or a key-per-file directory.'),
  TokenEndpointAuthMethod: choice(['client_secret_basic', 'client_secret_post', 'private_key_jwt'], 'client_secret_basic', 'Extension. How the app authenticates at the token endpoint: client_secret_basic (Authorization header), client_secret_post (form body) or private_key_jwt (RFC 7523: a JWT signed with ClientAssertionKeys, valid 60 seconds with a unique jti; ClientSecret is then not used).'),
  ClientAssertionKeys: secretArray('Extension. With private_key_jwt: one or two PEM private keys, as Providers:OpenIdConnect:ClientAssertionKeys (the newest signs). Secret.'),
  ClientAssertionCertificates: strings([], 'Extension. With private_key_jwt: the PEM certificate of each key (optional; Entra ID requires one), as Providers:OpenIdConnect:ClientAssertionCertificates.'),
  Scopes: strings([], 'Extension. Scopes requested with the token (Entra ID: api://<api client id>/.default). Empty: the API\'s Scopes.'),
  Resource: Type.String({ default: '', description: 'Extension. RFC 8707 resource indicator sent with the token request (the API\'s identifier at the server). Empty: not sent.' }),
  Audience: Type.String({ default: '', description: 'Extension. The audience parameter some servers (Auth0) take instead of Resource. Empty: not sent.' })
}, { additionalProperties: false, default: {} })

/** `DownstreamApis:<Name>`: one API the app calls with a token (docs/guides/call-another-api.md). */
export const DownstreamApiSchema = Type.Object({
  BaseUrl: Type.String({ default: '', description: 'Extension. The API\'s base URL (https://api.example.com/v1): calls take a path relative to it, and the token is sent only to its origin, never along a redirect. Absolute https URL without query, fragment or user information (http only on loopback in Development). Required.' }),
  Scopes: strings([], 'Extension. Scopes the API needs. With UserToken each must be among the signing-in scheme\'s Scopes (the saved token is the one issued at sign-in); with ClientCredentials they are requested unless ClientCredentials:Scopes is set.'),
  UserToken: Type.Object({
    Scheme: Type.String({ default: '', description: 'Extension. The OpenID Connect scheme (Providers:OpenIdConnect or Authentication:Schemes:<Name>) whose access token, saved at sign-in (SaveTokens true), is sent for a signed-in user. Empty: calls as the user are refused.' })
  }, { additionalProperties: false, default: {} }),
  ClientCredentials: DownstreamClientCredentialsSchema,
  TimeoutSeconds: Type.Integer({ default: 10, minimum: 1, maximum: 120, description: 'Extension. Deadline of one call to the API (connect, headers and the whole body), and of one token request.' }),
  MaxResponseBytes: Type.Integer({ default: 1_048_576, minimum: 1024, maximum: 67_108_864, description: 'Extension. Largest response body read from the API (bytes, after decompression); a larger one fails the call (APP_ERR_DOWNSTREAM_FAILED) and is not kept.' })
}, { additionalProperties: false, default: {} })

function namedSectionsSchema<T extends TSchema> (section: T, description: string): TUnsafe<Record<string, Static<T>>> {
  return Type.Unsafe<Record<string, Static<T>>>({ type: 'object', [NAMED_SECTIONS_KEYWORD]: true, additionalProperties: section, default: {}, description })
}

const DownstreamApisSchema = namedSectionsSchema(DownstreamApiSchema, 'Extension. APIs this app calls, by name: DownstreamApis:<Name> (letters, digits, - and _, starting with a letter). app.downstreamApis calls them as the signed-in user (UserToken) or as the app (ClientCredentials). docs/guides/call-another-api.md.')

/** `DownstreamApis:<Name>`, as bound. */
export type DownstreamApiConfiguration = Static<typeof DownstreamApiSchema>
// --------------------------------------------------------------------------- end DownstreamApis

export const ApplicationSchema = Type.Object({
  Authentication: AuthenticationSchema,
  Authorization: AuthorizationSchema,
  DataProtection: Type.Object({
    Keys: secretArray('Extension. Session-ticket keys, base64 of at least 32 random bytes each. The first seals, every key opens (rotation). Secret. When empty, a key is generated in KeyDirectory.'),
    KeyDirectory: Type.String({ default: '.keys', description: 'Extension. Directory (relative to the app root) for the generated key when Keys is empty. Created with 0700, key file 0600; an existing directory or key file open to group or others is refused at startup.' }),
    ApplicationDiscriminator: Type.String({
      default: '',
      maxLength: 200,
      description: 'Extension. Bound into every key derived from the ring (session tickets, correlation cookies, anti-forgery tokens): a value sealed under one discriminator never opens under another, even with the same keys. Empty: the environment name (Development, Production, ...). Set the same value on every instance of one application, and different values for applications that share keys.'
    })
  }, { additionalProperties: false, default: {} }),
  Hosting: Type.Object({
    PublicOrigin: Type.String({ default: '', description: 'Extension. The origin users reach the application at (https://app.example.com: scheme, host, optional port). Every absolute URL the app builds (redirect_uri, SAML AssertionConsumerServiceURL, metadata Location, the expected SAML Destination and Recipient) is built from it, and requests for another host are refused with 400. Required outside Development when a provider is enabled; https outside Development. Empty (Development only): the request\'s own host.' }),
    AllowedHosts: strings([], 'Extension. Further host names accepted besides the PublicOrigin host (no scheme or port): app.example.com, *.example.com (subdomains), or * (any). Empty with PublicOrigin empty: any host. Health probes are answered whatever the host.'),
    RequestTimeoutSeconds: Type.Integer({ default: 30, minimum: 1, maximum: 3600, description: 'Extension. Time allowed to receive a whole request (headers and body); a slower request is answered 408 and its connection closed.' }),
    HeadersTimeoutSeconds: Type.Integer({ default: 10, minimum: 1, maximum: 3600, description: 'Extension. Time allowed to receive the request headers; at most RequestTimeoutSeconds.' }),
    KeepAliveTimeoutSeconds: Type.Integer({ default: 72, minimum: 1, maximum: 3600, description: 'Extension. How long an idle keep-alive connection stays open between requests. Keep it above the idle timeout of the reverse proxy in front.' }),
    IdleTimeoutSeconds: Type.Integer({ default: 60, minimum: 1, maximum: 3600, description: 'Extension. A connection with no traffic for this long while a request is in progress is closed.' }),
    ShutdownDelaySeconds: Type.Integer({ default: 5, minimum: 0, maximum: 300, description: 'Extension. On SIGTERM, /health/ready answers 503 (Retry-After) at once while the app keeps serving for this long, so that the proxy or orchestrator stops sending it traffic before it stops accepting connections. 0: no delay. SIGINT (Ctrl-C) never waits.' }),
    DrainTimeoutSeconds: Type.Integer({ default: 20, minimum: 1, maximum: 3600, description: 'Extension. After the shutdown delay the app stops accepting connections and gives in-flight requests this long to finish; then it closes the remaining connections and exits with code 1. ShutdownDelaySeconds + DrainTimeoutSeconds must fit in the orchestrator\'s stop grace period (compose stop_grace_period, Kubernetes terminationGracePeriodSeconds).' }),
    StartupStateWaitSeconds: Type.Integer({ default: 30, minimum: 0, maximum: 3600, description: 'Extension. At startup the app waits up to this long for the state store (Redis) to be ready before it listens, so that no request reaches it before it can answer; after that it listens anyway with /health/ready answering 503 until the store is back. 0: listen at once.' })
  }, { additionalProperties: false, default: {} }),
  ForwardedHeaders: Type.Object({
    Enabled: Type.Boolean({ default: false, description: 'Extension. Trusts X-Forwarded-Proto/Host/For from KnownProxies (TLS-terminating proxy). Default false.' }),
    KnownProxies: strings([], 'Extension. Proxy addresses or CIDR ranges whose forwarded headers are trusted. Required when Enabled.')
  }, { additionalProperties: false, default: {} }),
  State: Type.Object({
    Provider: choice(['Embedded', 'Redis'], 'Embedded', 'Extension. Where server-side state lives (session records, pending sign-ins, replay records): Embedded (in-process memory kept in a local SQLite file, see Embedded:Persist; one instance, nothing to run) or Redis (Redis or Valkey, shared by every instance). docs/scale-out.md.'),
    Redis: Type.Object({
      ConnectionString: secret('Extension. redis://[[user]:password@]host[:port][/db], rediss://... (TLS) or unix:/path/to/socket. Required when Provider is Redis, unless Sentinel or Cluster is set instead. Secret: it may carry a password; never logged.'),
      KeyPrefix: Type.String({ default: `${ROOT_KEY}:`, description: 'Extension. Prefix of every key and of the invalidation channel, so several applications can share one Redis. In a Redis Cluster, a prefix with a hash tag ({...}) would put every key in one slot, on one shard.' }),
      TimeoutMilliseconds: Type.Integer({ default: 1000, minimum: 50, maximum: 30000, description: 'Extension. Connect and command timeout; a request needing Redis answers 503 after it.' }),
      Sentinel: RedisSentinelSchema,
      Cluster: RedisClusterSchema
    }, { additionalProperties: false, default: {} }),
    Embedded: Type.Object({
      MaxSessions: Type.Integer({ default: 50_000, minimum: 1, description: 'Extension. Most session records (and three times as many index entries, as many token-refresh locks); when full, the least recently written session ends at once, with its index entries.' }),
      MaxPendingSignIns: Type.Integer({ default: 20_000, minimum: 1, description: 'Extension. Most SAML2 single sign-outs waiting for the IdP (10 minutes each); when full, such a sign-out is refused with a try-again page. Sign-ins in progress are kept in the browser (the correlation cookie), not in the store.' }),
      MaxReplayRecords: Type.Integer({ default: 100_000, minimum: 1, description: 'Extension. Most replay records (completed sign-in flows, used SAML2 assertion ids, back-channel logout token ids); when full, sign-ins are refused rather than a record forgotten.' }),
      MaxMegabytes: Type.Integer({ default: 256, minimum: 1, description: 'Extension. Most memory for stored values, in megabytes (characters / 1,048,576).' }),
      Persist: Type.Boolean({ default: true, description: 'Extension. Keeps the embedded store in a SQLite file in DataDirectory (node:sqlite, Node.js 22.13 and later), so sessions, revocations and replay records survive a restart; reads are served from memory, writes are on disk before the request that made them is answered. On a Node.js without node:sqlite the store stays in memory and startup logs state.embedded.not_persisted. false: memory only, every restart signs every user out (tests, ephemeral deployments). docs/scale-out.md.' }),
      DataDirectory: Type.String({ default: '.state', description: 'Extension. Directory (relative to the app root, beside the default KeyDirectory) of the embedded store\'s file (state.sqlite) when Persist is true. Created with 0700, files 0600; an existing directory or file open to group or others is refused at startup. The file holds sealed values only, but guard it like the key directory; one process per directory.' })
    }, { additionalProperties: false, default: {} })
  }, { additionalProperties: false, default: {} }),
  RateLimits: Type.Object({
    Enabled: Type.Boolean({ default: true, description: 'Extension. Per-client rate limits on the endpoints anyone can reach without a session (sign-in start, provider callbacks and the SAML2 ACS, sign-out, back-channel and SAML2 logout receivers), counted in the state store so every instance shares them. The client is the address Fastify resolves through ForwardedHeaders:KnownProxies (never a forwarded header from elsewhere); an IPv6 address counts by its /64. Over the limit: 429 with Retry-After. Other routes are not limited. docs/security.md, "Rate limits".' }),
    WindowSeconds: Type.Integer({ default: 60, minimum: 1, maximum: 3600, description: 'Extension. Length of the fixed window the limits count in; a client over a limit waits until its window ends.' }),
    ChallengePerWindow: Type.Integer({ default: 300, minimum: 1, description: 'Extension. Requests to /External/Challenge per client address and window. A browser makes one per sign-in; the default leaves room for a large office behind one NAT address.' }),
    CallbackPerWindow: Type.Integer({ default: 300, minimum: 1, description: 'Extension. Requests to the provider callbacks (each CallbackPath) and the SAML2 ACS (ModulePath) per client address and window. A browser makes one per sign-in.' }),
    SignOutPerWindow: Type.Integer({ default: 120, minimum: 1, description: 'Extension. Requests to /Account/Logout, /Account/LogoutEverywhere and the OpenID Connect SignedOutCallbackPath per client address and window.' }),
    BearerRefusalsPerWindow: Type.Integer({ default: 120, minimum: 1, description: 'Extension. Refused bearer tokens per client address and window on the API routes (Authentication:Bearer:PathPrefixes); over it, the client\'s bearer calls are answered 429 until the window ends, before any token is decoded (a token already verified still passes). A client with a valid token is refused only when its token expires.' }),
    LogoutReceiverPerWindow: Type.Integer({ default: 1200, minimum: 1, description: 'Extension. Requests to the OpenID Connect back-channel logout endpoint and the SAML2 logout endpoint per client address and window. The back-channel requests come from the identity provider\'s servers, a few addresses for every user, hence the higher default.' })
  }, { additionalProperties: false, default: {} }),
  Logging: Type.Object({
    Level: Type.Union([
      Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'), Type.Literal('debug'), Type.Literal('trace'), Type.Literal('silent')
    ], { default: 'info', description: 'Extension. pino log level.' })
  }, { additionalProperties: false, default: {} }),
  Telemetry: TelemetrySchema,
  DownstreamApis: DownstreamApisSchema,
  Secrets: Type.Object({
    KeyPerFileDirectory: Type.String({ default: '', description: 'Extension. Directory holding one file per configuration key (file name: the key with __ separators), as orchestrators mount secrets. Empty: not used.' })
  }, { additionalProperties: false, default: {} })
}, { additionalProperties: false, default: {} })

export const ConfigurationSchema = Type.Object({
  [ROOT_KEY]: ApplicationSchema
}, { additionalProperties: true, default: {} })

const applicationSchemas = new Map<string, typeof ApplicationSchema>([[ROOT_KEY, ApplicationSchema]])

/**
 * {@link ApplicationSchema} for the application `rootKey`: the same keys and types; the one
 * default derived from the name, `State:Redis:KeyPrefix` (`<Name>:`), follows it.
 */
export function applicationSchemaFor (rootKey: string = ROOT_KEY): typeof ApplicationSchema {
  const known = applicationSchemas.get(rootKey)
  if (known !== undefined) return known
  applicationNaming(rootKey)
  const schema = JSON.parse(JSON.stringify(ApplicationSchema)) as typeof ApplicationSchema
  // JSON.parse returns plain objects: the Redis section's KeyPrefix default is set on the copy only.
  ;(schema.properties.State.properties.Redis.properties.KeyPrefix as { default: string }).default = `${rootKey}:`
  applicationSchemas.set(rootKey, schema)
  return schema
}

/** The validated application configuration (`ProjectTemplate:*`). */
export type ApplicationConfiguration = Static<typeof ApplicationSchema>
export type AuthenticationConfiguration = Static<typeof AuthenticationSchema>
export type AuthorizationConfiguration = Static<typeof AuthorizationSchema>
export type OpenIdConnectConfiguration = Static<typeof OpenIdConnectSchema>
export type Saml2Configuration = Static<typeof Saml2Schema>
export type StateConfiguration = Static<typeof ApplicationSchema>['State']
export type VendorConfiguration = Static<VendorSchema>
export type OpenIdConnectSchemeConfiguration = Static<typeof OpenIdConnectSchemeSchema>
export type Saml2SchemeConfiguration = Static<typeof Saml2SchemeSchema>
/** Authentication:Schemes:<Name> of Type JwtBearer. */
export type JwtBearerSchemeConfiguration = Static<typeof JwtBearerSchemeSchema>
/** One Authentication:Schemes:<Name> section, as bound (its path defaults filled in from the name). */
export type SchemeConfiguration = OpenIdConnectSchemeConfiguration | Saml2SchemeConfiguration | JwtBearerSchemeConfiguration

/**
 * JSON Schema for editors (`appsettings.schema.json`): the same schema, root made strict, under
 * the application's root key (default `ProjectTemplate`).
 */
export function toJsonSchema (applicationName: string = ROOT_KEY): Record<string, unknown> {
  const schema = applicationName === ROOT_KEY
    ? ConfigurationSchema
    : Type.Object({ [applicationName]: applicationSchemaFor(applicationName) }, { additionalProperties: true, default: {} })
  // Every key has a default, so none is required in a settings file.
  const plain = JSON.parse(JSON.stringify(schema), (key, value: unknown) => key === 'required' ? undefined : value) as Record<string, unknown>
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: `${applicationName} application settings`,
    ...plain,
    properties: { $schema: { type: 'string' }, ...(plain.properties as object) }
  }
}

export type { TSchema }
