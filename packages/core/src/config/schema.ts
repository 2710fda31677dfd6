/**
 * The configuration schema of the core's own sections, and the generic pieces the application
 * schema is composed of: the types, defaults, JSON Schema (`appsettings.schema.json`) and binding
 * all come from it. Key names are the contract's, verbatim (auth-contract.md, "Resources and
 * their fields"); keys the contract does not name are marked "Extension" and documented in
 * docs/configuration.md. The provider types' sections live in their own folders
 * (`<folder>/settings-schema.ts`) and are composed with these by providers/application-schema.ts;
 * config/ imports none of them.
 */
import { Type, type Static, type TObject, type TProperties, type TSchema, type TUnsafe } from '@sinclair/typebox'
import { APPLICATION_NAME, applicationNaming } from '../application-name.js'
import { CorsSchema } from './cors-schema.js'
import { choice, NAMED_SECTIONS_KEYWORD, SCHEMES_KEYWORD, secret, secretArray, strings } from './schema-parts.js'
import { TelemetrySchema } from './telemetry-schema.js'

export { CLAIM_MAPPINGS_KEYWORD, NAMED_SECTIONS_KEYWORD, SCHEMES_KEYWORD, SECRET_KEYWORD, type SchemaNode } from './schema-parts.js'

/**
 * The default configuration root key (`ProjectTemplate`). An app with another `applicationName`
 * has its configuration under that name instead (application-name.ts).
 *
 * @public
 */
export const ROOT_KEY = APPLICATION_NAME

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

/**
 * `Provisioning`: SCIM 2.0 provisioning per customer connection (issue 41; docs/provisioning.md)
 * and the directory store it writes: `Embedded` (SQLite beside the embedded state store's file
 * on Node.js 22.13+, memory on Node.js 20; one instance) or `PostgreSql` (every instance).
 */
/** `Provisioning:Connections:<Name>`: one customer's directory (issue 41, item 1; docs/provisioning.md). */
export const ProvisioningConnectionSchema = Type.Object({
  Tenant: Type.String({ default: '', description: 'Extension. The application tenant this connection provisions (the application:tenant value its users sign in with: a provider source definition\'s tenant, or the application tenant an OpenIdConnect AllowedTenants entry maps to). Required; one connection per tenant. Its endpoints are /scim/v2/<Name>/.' }),
  Schemes: strings([], 'Extension. Configured sign-in schemes whose users belong to this connection although they carry no application:tenant claim (a provider for this one customer). A scheme belongs to at most one connection.'),
  ExternalIdClaim: Type.String({ default: '', description: 'Extension. The claim of the sign-in (as the provider sends it) whose value is compared with a SCIM user\'s externalId to link that user to the person signing in, once: an immutable identifier (Entra ID: oid, with externalId mapped from objectId). Empty: the user\'s subject. Never an e-mail address.' }),
  RequireProvisionedUsers: Type.Boolean({ default: false, description: 'Extension. true: a person of this connection\'s tenant the directory does not know (no SCIM user linked or with their externalId) cannot sign in (failure not_provisioned). false: they sign in as without provisioning.' }),
  LinkByEmail: Type.Boolean({ default: false, description: 'Extension. Dangerous when the domains are not the customer\'s: true lets a person of this connection\'s tenant whose sign-in links no SCIM user by ExternalIdClaim be linked, once, to the one SCIM user of this connection with their e-mail address (emails.value), only when the provider says the address is verified (EmailVerifiedClaim) and its domain is one of VerifiedDomains. Once linked, the link is by scheme, issuer and subject and never looked at by e-mail again. false (the default): never by e-mail. docs/provisioning.md, "Linking by e-mail".' }),
  VerifiedDomains: strings([], 'Extension. The e-mail domains this customer proved it owns, in ASCII (an internationalized domain in its xn-- form), each matched exactly (a subdomain is another domain). Required when LinkByEmail is true; an address at any other domain is never linked by e-mail.'),
  EmailVerifiedClaim: Type.String({ default: '', description: 'Extension. With LinkByEmail: the claim of the sign-in (as the provider sends it) that must be true for its e-mail address to count as verified (Entra ID: xms_edov). Empty: email_verified for an OpenID Connect sign-in, and no e-mail link for any other protocol (SAML 2.0 has no standard attribute: name the one your IdP sends).' }),
  GroupRoles: strings([], 'Extension. Application roles granted by provisioned group membership, each "<group externalId or displayName>=<role>" (several entries per group for several roles): the roles appear as application:role claims at the next sign-in, and removing such a membership ends that person\'s sessions. Groups not listed grant nothing; so do SCIM roles and entitlements.')
}, { additionalProperties: false, default: {} })

const ProvisioningSchema = Type.Object({
  Enabled: Type.Boolean({ default: false, description: 'Extension. SCIM 2.0 provisioning of users and groups by the customers\' directories (Entra ID, Okta), one connection per customer. false (the default): no /scim/ route exists and no directory store is opened. Experimental. docs/provisioning.md.' }),
  Store: Type.Object({
    Provider: choice(['Embedded', 'PostgreSql'], 'Embedded', 'Extension. Where provisioned users, groups, memberships and connection-token digests live: Embedded (the file directory.sqlite in State:Embedded:DataDirectory through node:sqlite on Node.js 22.13 and later; in memory on Node.js 20, lost on restart; one instance only) or PostgreSql (PostgreSQL 13 or later, shared by every instance). docs/provisioning.md.'),
    PostgreSql: Type.Object({
      ConnectionString: secret('Extension. postgres://user:password@host:port/database (add ?sslmode=verify-full for TLS). Required when Provider is PostgreSql. The store creates and migrates its tables (directory_*) at startup, so the user needs CREATE on the database\'s schema. Secret: it may carry a password; never logged.'),
      MaxConnections: Type.Integer({ default: 10, minimum: 1, maximum: 1000, description: 'Extension. Most connections each instance keeps to PostgreSQL.' }),
      TimeoutMilliseconds: Type.Integer({ default: 5000, minimum: 100, maximum: 60_000, description: 'Extension. Connect and statement timeout; a provisioning request needing the store answers 503 after it.' })
    }, { additionalProperties: false, default: {} })
  }, { additionalProperties: false, default: {} }),
  Connections: namedSectionsSchema(ProvisioningConnectionSchema, 'Extension. The customers\' directories, by name: Provisioning:Connections:<Name> (letters, digits, - and _, starting with a letter), each served at /scim/v2/<Name>/ and authenticated by its own connection tokens (app.provisioning.createToken). docs/provisioning.md.')
}, { additionalProperties: false, default: {} })

/**
 * Authentication:Schemes: a map of named schemes, each bound by the schema of the provider type
 * its Type names (config/bind.ts, config/schemes.ts). `schemas` are the types' scheme sections.
 */
export function namedSchemesSchema<S extends TSchema> (schemas: readonly S[], description: string): TUnsafe<Record<string, Static<S>>> {
  return Type.Unsafe<Record<string, Static<S>>>({
    type: 'object',
    [SCHEMES_KEYWORD]: true,
    additionalProperties: { oneOf: schemas },
    default: {},
    description
  })
}

/** What the Authentication section takes from the provider types (providers/application-schema.ts). */
export interface ProviderSchemaParts<P extends TProperties, S extends TSchema, A extends TProperties> {
  /** Every contract section's name, in order (named in DefaultChallengeScheme's description). */
  readonly providerNames: readonly string[]
  /** The contract sections under Authentication:Providers, in order. */
  readonly providers: P
  /** Authentication:Schemes ({@link namedSchemesSchema}). */
  readonly schemes: S
  /** The provider types' own sections under Authentication, after Schemes (keys every scheme of a type shares), in order. */
  readonly sections: A
}

/**
 * `Authentication`: the core's keys with the provider types' contract sections (`Providers`),
 * named schemes (`Schemes`) and own sections (after them) in their places; composed by
 * providers/application-schema.ts.
 */
export function authenticationSchemaWith<P extends TProperties, S extends TSchema, A extends TProperties> ({ providerNames, providers, schemes, sections }: ProviderSchemaParts<P, S, A>) {
  return Type.Object({
    Enabled: Type.Boolean({ default: true, description: 'Application authentication module switch. When false, a one-time startup warning is logged and RequireAuthenticatedUserByDefault must be false.' }),
    DefaultScheme: Type.String({ default: 'Cookies', description: 'Default authenticate scheme. Must be Cookies.' }),
    DefaultChallengeScheme: Type.String({ default: 'Cookies', description: `Default challenge scheme: Cookies, or the scheme of an enabled provider (${providerNames.join(', ')}).` }),
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
      AllowedInternalHosts: strings([], 'Extension. Host names (idp.corp.example) or networks (10.1.0.0/16, or one address) that providers from the app\'s provider source may reach although they are internal. Outside Development such a provider may otherwise reach only public addresses: a URL with user information, localhost, or a host that is or resolves to a loopback, private, link-local or unique-local address is refused when the definition is validated and at every connection. Configured providers are not restricted. docs/security/federation.md, "Outbound addresses of customers\' providers".')
    }, { additionalProperties: false, default: {} }),
    Providers: Type.Object(providers, { additionalProperties: false, default: {} }),
    Schemes: schemes,
    ...sections
  }, { additionalProperties: false, default: {} })
}

/** @public */
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

/** `DownstreamApis:<Name>`: one API the app calls with a token (docs/guides/call-another-api.md). @public @experimental */
export const DownstreamApiSchema = Type.Object({
  BaseUrl: Type.String({ default: '', description: 'Extension. The API\'s base URL (https://api.example.com/v1): calls take a path relative to it, and the token is sent only to its origin, never along a redirect. Absolute https URL without query, fragment or user information (http only on loopback in Development). Required.' }),
  Scopes: strings([], 'Extension. Scopes the API needs. With UserToken each must be among the signing-in scheme\'s Scopes (the saved token is the one issued at sign-in); with ClientCredentials they are requested unless ClientCredentials:Scopes is set.'),
  UserToken: Type.Object({
    Scheme: Type.String({ default: '', description: 'Extension. The OpenID Connect scheme (Providers:OpenIdConnect or Authentication:Schemes:<Name>) whose access token, saved at sign-in (SaveTokens true), is sent for a signed-in user. Empty: calls as the user are refused.' }),
    Resource: Type.String({ default: '', description: 'Extension. RFC 8707 resource indicator of the API (its identifier at the provider, an absolute URI): the user\'s token for this API is then asked for with the session\'s refresh token and this resource, kept in the session until a minute before it expires, instead of sending the token saved at sign-in. Must be among the scheme\'s Resources. Empty: not sent.' }),
    Scopes: strings([], 'Extension. Scopes sent with the refresh-token request for this API\'s own token (Entra ID: api://<api client id>/.default or api://<api client id>/<scope>); setting them, Resource or Audience asks for a per-API token. Empty: the scopes the sign-in granted.'),
    Audience: Type.String({ default: '', description: 'Extension. The audience parameter sent with the refresh-token request for this API\'s own token, on servers that take it instead of Resource (Auth0). Empty: not sent.' })
  }, { additionalProperties: false, default: {} }),
  ClientCredentials: DownstreamClientCredentialsSchema,
  TimeoutSeconds: Type.Integer({ default: 10, minimum: 1, maximum: 120, description: 'Extension. Deadline of one call to the API (connect, headers and the whole body), and of one token request.' }),
  MaxResponseBytes: Type.Integer({ default: 1_048_576, minimum: 1024, maximum: 67_108_864, description: 'Extension. Largest response body read from the API (bytes, after decompression); a larger one fails the call (APP_ERR_DOWNSTREAM_FAILED) and is not kept.' })
}, { additionalProperties: false, default: {} })

function namedSectionsSchema<T extends TSchema> (section: T, description: string): TUnsafe<Record<string, Static<T>>> {
  return Type.Unsafe<Record<string, Static<T>>>({ type: 'object', [NAMED_SECTIONS_KEYWORD]: true, additionalProperties: section, default: {}, description })
}

const DownstreamApisSchema = namedSectionsSchema(DownstreamApiSchema, 'Extension. APIs this app calls, by name: DownstreamApis:<Name> (letters, digits, - and _, starting with a letter). app.downstreamApis calls them as the signed-in user (UserToken) or as the app (ClientCredentials). docs/guides/call-another-api.md.')

/** `DownstreamApis:<Name>`, as bound. @public @experimental */
export type DownstreamApiConfiguration = Static<typeof DownstreamApiSchema>
// --------------------------------------------------------------------------- end DownstreamApis

/**
 * The application's root section (`ProjectTemplate:*`): `authentication`
 * ({@link authenticationSchemaWith}) and the core's other sections; composed by
 * providers/application-schema.ts.
 */
export function applicationSchemaWith<A extends TSchema> (authentication: A) {
  return Type.Object({
    Authentication: authentication,
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
    Provisioning: ProvisioningSchema,
    RateLimits: Type.Object({
      Enabled: Type.Boolean({ default: true, description: 'Extension. Per-client rate limits on the endpoints anyone can reach without a session (sign-in start, provider callbacks and the SAML2 ACS, sign-out, back-channel and SAML2 logout receivers), counted in the state store so every instance shares them. The client is the address Fastify resolves through ForwardedHeaders:KnownProxies (never a forwarded header from elsewhere); an IPv6 address counts by its /64. Over the limit: 429 with Retry-After. Other routes are not limited. docs/security.md, "Rate limits".' }),
      WindowSeconds: Type.Integer({ default: 60, minimum: 1, maximum: 3600, description: 'Extension. Length of the fixed window the limits count in; a client over a limit waits until its window ends.' }),
      ChallengePerWindow: Type.Integer({ default: 300, minimum: 1, description: 'Extension. Requests to /External/Challenge per client address and window. A browser makes one per sign-in; the default leaves room for a large office behind one NAT address.' }),
      CallbackPerWindow: Type.Integer({ default: 300, minimum: 1, description: 'Extension. Requests to the provider callbacks (each CallbackPath) and the SAML2 ACS (ModulePath) per client address and window. A browser makes one per sign-in.' }),
      SignOutPerWindow: Type.Integer({ default: 120, minimum: 1, description: 'Extension. Requests to /Account/Logout, /Account/LogoutEverywhere and the OpenID Connect SignedOutCallbackPath per client address and window.' }),
      BearerRefusalsPerWindow: Type.Integer({ default: 120, minimum: 1, description: 'Extension. Refused bearer tokens per client address and window on the API routes (Authentication:Bearer:PathPrefixes); over it, the client\'s bearer calls are answered 429 until the window ends, before any token is decoded (a token already verified still passes). A client with a valid token is refused only when its token expires.' }),
      DPoPProofsPerWindow: Type.Integer({ default: 1200, minimum: 1, description: 'Extension. DPoP proofs accepted per client address and window on the API routes (RFC 9449): each writes its jti to the state store\'s replay records for up to two minutes, so this bounds the records one client holds (State:Embedded:MaxReplayRecords is shared with sign-ins). Over it, the client\'s DPoP calls are answered 429 until the window ends, and nothing is written.' }),
      ApiKeyRequestsPerWindow: Type.Integer({ default: 6000, minimum: 1, description: 'Extension. Requests one API key (of an ApiKey scheme) may make per window, counted in the state store across every instance and address; over it the key\'s calls are answered 429 with Retry-After until the window ends. A leaked key cannot flood the app; the default (100 a second over the 60-second window) leaves a busy script room.' }),
      ApiKeyFailuresPerWindow: Type.Integer({ default: 30, minimum: 1, description: 'Extension. Well-formed API keys refused after a store look-up (unknown, revoked, expired, owner no longer valid) per client address and window; over it, that address\'s API key calls are answered 429 with Retry-After before any look-up until the window ends. It limits the address, never a key: a client guessing keys (or replaying another\'s key id) cannot lock out the key\'s owner elsewhere. Malformed keys are refused without a look-up and count in BearerRefusalsPerWindow only.' }),
      ProvisioningPerWindow: Type.Integer({ default: 3000, minimum: 1, description: 'Extension. SCIM requests per provisioning connection (not per client address) and window, counted before the connection token is checked; over it: 429 with Retry-After, which Entra ID and Okta honour. docs/provisioning.md.' }),
      LogoutReceiverPerWindow: Type.Integer({ default: 1200, minimum: 1, description: 'Extension. Requests to the OpenID Connect back-channel logout endpoint and the SAML2 logout endpoint per client address and window. The back-channel requests come from the identity provider\'s servers, a few addresses for every user, hence the higher default.' })
    }, { additionalProperties: false, default: {} }),
    Logging: Type.Object({
      Level: Type.Union([
        Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'), Type.Literal('debug'), Type.Literal('trace'), Type.Literal('silent')
      ], { default: 'info', description: 'Extension. pino log level.' })
    }, { additionalProperties: false, default: {} }),
    Telemetry: TelemetrySchema,
    DownstreamApis: DownstreamApisSchema,
    Cors: CorsSchema,
    Secrets: Type.Object({
      KeyPerFileDirectory: Type.String({ default: '', description: 'Extension. Directory holding one file per configuration key (file name: the key with __ separators), as orchestrators mount secrets. Empty: not used.' })
    }, { additionalProperties: false, default: {} })
  }, { additionalProperties: false, default: {} })
}

type CoreAuthenticationSchema = ReturnType<typeof authenticationSchemaWith<TProperties, TUnsafe<Record<string, unknown>>, Record<never, never>>>

/**
 * The configuration as config/ knows it: every section of the core, the provider sections
 * (Authentication:Providers, Authentication:Schemes) untyped. The full type, with each provider
 * type's sections, is providers/application-schema.ts `ApplicationConfiguration`.
 */
export type CoreConfiguration = Static<ReturnType<typeof applicationSchemaWith<CoreAuthenticationSchema>>>
/** @public */
export type AuthorizationConfiguration = Static<typeof AuthorizationSchema>
/** @public */
export type StateConfiguration = CoreConfiguration['State']
/** `Provisioning`, as bound. @public @experimental */
export type ProvisioningConfiguration = CoreConfiguration['Provisioning']
/** `Provisioning:Connections:<Name>`, as bound. @public @experimental */
export type ProvisioningConnectionConfiguration = Static<typeof ProvisioningConnectionSchema>

/**
 * An application schema for the application `rootKey`: the same keys and types; the one default
 * derived from the name, `State:Redis:KeyPrefix` (`<Name>:`), follows it. `schema` itself for the
 * default root key.
 */
export function applicationSchemaUnder<T extends TObject> (schema: T, rootKey: string): T {
  if (rootKey === ROOT_KEY) return schema
  applicationNaming(rootKey)
  const copy = JSON.parse(JSON.stringify(schema)) as { properties: { State: { properties: { Redis: { properties: { KeyPrefix: { default: string } } } } } } }
  // JSON.parse returns plain objects: the Redis section's KeyPrefix default is set on the copy only.
  copy.properties.State.properties.Redis.properties.KeyPrefix.default = `${rootKey}:`
  return copy as unknown as T
}

/**
 * JSON Schema for editors (`appsettings.schema.json`): `applicationSchema` (the schema of the
 * application `applicationName`), root made strict, under that root key.
 */
export function jsonSchemaOf (applicationSchema: TSchema, applicationName: string): Record<string, unknown> {
  const schema = Type.Object({ [applicationName]: applicationSchema }, { additionalProperties: true, default: {} })
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
