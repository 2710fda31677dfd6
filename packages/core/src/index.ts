/// <reference types="@fastify/cookie" preserve="true" />
/**
 * `@project-template/core`: the security core of a ProjectTemplate app (README.md in this package
 * documents it with a worked example). This module is the package's whole public API; nothing else
 * is importable (`exports` names only it), and `etc/core.api.md` pins its declarations.
 *
 * Importing it also brings the Fastify type augmentations the core adds: `request.user`,
 * `reply.signIn` / `reply.signOut` / `reply.generateCsrf`, `app.session`, `app.authentication`,
 * `app.authorization`, `app.state`, `app.pages`, `app.csrfProtection`, `app.dataProtection`,
 * `request.bearer`, and the route `config` members `allowAnonymous`, `authorize`, `governance` and `bearer`.
 *
 * @packageDocumentation
 */

// The Fastify augmentations of modules whose types are not otherwise exported (app.state,
// app.pages, request.bearer and the route config's `bearer`, `rateLimitBucket`,
// app.externalSignIn, app.lifecycle): the published index.d.ts pulls in every module named here,
// so an app's code that uses them compiles (test/published-types.test.ts). The reference above
// brings @fastify/cookie's.
import './plugins/state.js'
import './plugins/branding.js'
import './plugins/bearer.js'
import './plugins/rate-limits.js'
import './plugins/external-sign-in.js'
import './routes/health.js'

// Composition: the core on Fastify, the process runner, the check-config command.
export { createApp, MAX_HEADER_BYTES, AUTHENTICATION_DISABLED_MESSAGE, authenticationDisabledMessage } from './create-app.js'
export type { ApplicationParts, CreateAppOptions } from './create-app.js'
export { runServer, DEFAULT_HOST, DEFAULT_PORT } from './run-server.js'
export type { RunServerOptions } from './run-server.js'
export { runCheckConfig } from './check-config.js'
export type { CheckConfigOptions } from './check-config.js'
export { runDevToken } from './dev-token.js'
export type { DevTokenOptions } from './dev-token.js'
export { mintDevelopmentToken } from './dev-tokens/mint.js'
export type { DevelopmentTokenRequest } from './dev-tokens/mint.js'

// Configuration: loading and validation, the schema's types, the derived reference files.
export { loadConfiguration } from './configuration.js'
export { environmentNameFrom } from './config/load.js'
export type { LoadOptions, ConfigurationWarning, SecretOrigin } from './config/load.js'
export type { LoadedConfiguration } from './providers/application-schema.js'
export type { ConfigurationProblem } from './config/bind.js'
// The schema: the core's sections (config/), each provider type's in its folder, composed in providers/.
export { ROOT_KEY, AuthorizationSchema } from './config/schema.js'
export type { AuthorizationConfiguration, StateConfiguration } from './config/schema.js'
export { toJsonSchema, ApplicationSchema, AuthenticationSchema } from './providers/application-schema.js'
export type { ApplicationConfiguration, AuthenticationConfiguration, SchemeConfiguration } from './providers/application-schema.js'
export { PROVIDER_NAMES, SCHEME_TYPES, RESERVED_SCHEME_NAMES } from './providers/provider-types.js'
export type { ProviderName, SchemeType } from './providers/provider-types.js'
export { OpenIdConnectSchema, OpenIdConnectSchemeSchema } from './oidc/settings-schema.js'
export type { OpenIdConnectConfiguration, OpenIdConnectSchemeConfiguration } from './oidc/settings-schema.js'
export { Saml2Schema, Saml2SchemeSchema } from './saml2/settings-schema.js'
export type { Saml2Configuration, Saml2SchemeConfiguration } from './saml2/settings-schema.js'
export { VENDOR_NAMES } from './oauth/settings-schema.js'
export type { VendorConfiguration, VendorName, VendorSchema } from './oauth/settings-schema.js'
export { JwtBearerSchemeSchema } from './bearer/settings-schema.js'
export type { JwtBearerSchemeConfiguration, JwtBearerSettingsOfInstance } from './bearer/settings-schema.js'
export { DownstreamApiSchema } from './config/schema.js'
export { Secret } from './config/secret.js'
export { writeConfigurationReference, renderJsonSchema, withKeyTable, JSON_SCHEMA_FILE, CONFIGURATION_DOC } from './providers/configuration-reference.js'
export { APPLICATION_NAME, COOKIE_NAMES, applicationNaming } from './application-name.js'
export type { ApplicationNaming, CookieNames, Purposes } from './application-name.js'

// Authorization: named policies, the route metadata, the governance seam.
export { ApplicationAuthorizationPolicyNames } from './authorization/policies.js'
export type { AuthorizationPolicy, PolicyAuthentication, PolicyOutcome } from './authorization/policies.js'
export type { AuthenticationProof, AuthenticationRequirement } from './session/authentication-proof.js'
export { requireTenant, tenantOf, tenantPolicy } from './authorization/tenants.js'
export { clientOf, clientPolicy, isMachine, machinePolicy, scopePolicy, scopesOf, userPolicy } from './authorization/scopes.js'
export { BearerPrincipal } from './bearer/bearer-principal.js'
export type { AccessFacts } from './bearer/bearer-principal.js'
export type { AuthorizationApi, GovernanceContext, GovernanceEvaluator, RouteAuthorization } from './plugins/authorization.js'

// The signed-in user, and what a sign-in flow hands over.
export { Principal, ApplicationClaimTypes } from './session/principal.js'
export type { Claim, AuthenticationTicket } from './session/principal.js'
export { userKeyOf } from './session/user-identity.js'
export type { UserIdentity } from './session/user-identity.js'
export type { IdentityKind } from './session/claims.js'
export type { AccessTokenOptions, ResolveCallback, SessionApi, SessionCookieSettings } from './plugins/session.js'
// Bearer tokens on API routes (JwtBearer schemes): `request.bearer` and the scheme a provider carries.
export type { BearerAuthentication, BearerSchemeStatus, JwtBearerScheme, JwtBearerSchemeOptions, JwtBearerSettings } from './bearer/jwt-bearer-scheme.js'
export type { IntrospectionAuthMethod, IntrospectionSettings } from './bearer/introspection.js'
// Request-credential types and deny checks (`app.requestCredentials`, issue 43): the seams API keys and SCIM tokens use.
export type { CredentialContext, CredentialType, RequestCredentialsApi } from './bearer/credential-types.js'
export type { BearerFailure, HeldLimit } from './bearer/failures.js'
export { CredentialHeldError } from './bearer/failures.js'
export type { Presentation } from './bearer/presentation.js'
export type { DenyCheck } from './session/deny-checks.js'
export type { TokenValidatedHook, TokenValidatedResult } from './bearer/token-validated-hook.js'
export type { ClaimsTransformation } from './sign-in/completion.js'
export type { SignInRequest } from './session/renewal.js'
export type { SessionList, SessionSummary } from './session/session-store.js'
export { SIGN_IN_HOOK_CLAIM_ISSUER, MAX_REFUSAL_REASON_LENGTH } from './sign-in/sign-in-hook.js'
export type { SignInHook, SignInHookContext, SignInHookResult, VerifiedSignIn, ClaimValues } from './sign-in/sign-in-hook.js'
export { TokenRefreshError } from './session/token-refresh.js'
export type { TokenRefresher, TokenRefreshFailure, TokenRefreshDiagnostics } from './session/token-refresh.js'
export type { ApiTokenRequest } from './session/token-refresh-api.js'
export type { AuthenticationApi } from './plugins/authentication.js'
export type { ConnectionReloadResult, ProviderReloadResult, RefusedConnection, RefusedDomain, RefusedProvider, ReloadProvidersOptions } from './providers/runtime-provider-set.js'
export type { ProviderSource } from './plugins/runtime-providers.js'
export { validateRuntimeProvider } from './providers/runtime-definitions.js'
export type { RuntimeConnectionDefinition, RuntimeProviderDefinition, RuntimeProviderDomain, RuntimeValidation, ValidatedRuntimeProvider } from './providers/runtime-definitions.js'
export { TENANT_CLAIM_TYPE } from './sign-in/completion.js'
export {
  DOMAIN_VERIFICATION_LABEL, DOMAIN_VERIFICATION_PREFIX, DOMAIN_VERIFICATION_TIMEOUT_MS,
  domainVerificationRecord, newDomainVerificationToken, normalizeDomain, verifyDomain
} from './providers/domain-verification.js'
export type { DomainVerificationOptions, DomainVerificationResult } from './providers/domain-verification.js'
// The provider interface every protocol instance implements, and the registry of instances.
export type { AuthenticationProvider, ChallengeHint, ProviderEndpoint, ProviderEndpointKind, ProviderStatus, RequestCredentialScheme, SignedOutPrincipal } from './providers/provider.js'
export type { RateLimitBucket } from './state/rate-limit-store.js'
export { ProviderRegistry, ProviderConflictError, emailDomainOf } from './providers/registry.js'
export type { RegisteredProvider } from './providers/registry.js'
export { providerInstancesOf, enabledProviderInstances } from './providers/provider-instances.js'
export type { ProviderInstance, ProviderInstanceBase, ProviderProtocol, Saml2InstanceSettings } from './providers/provider-instances.js'

// Calling other APIs (DownstreamApis:<Name>) as the signed-in user or as the app; experimental.
export type { DownstreamApisApi } from './plugins/downstream-apis.js'
export type { DownstreamRequestInit } from './downstream/downstream-call.js'
export { DownstreamApiError } from './downstream/downstream-error.js'
export type { DownstreamFailure } from './downstream/downstream-error.js'
export type { DownstreamApiConfiguration } from './config/schema.js'

// Pages and responses: branding, escaped HTML, negotiated errors.
export { createPages, defaultLayout } from './views/pages.js'
export type {
  Branding, PageLayout, LayoutOptions, BrandedLayoutOptions, Pages, LoginPageModel, LoginProvider, ErrorPageModel,
  ProviderSignOutPageModel
} from './views/pages.js'
export { html, escapeHtml, SafeHtml } from './views/html.js'
export { sendError, sendProblem, wantsJson } from './http/responses.js'
export type { ProblemOptions } from './http/responses.js'
export { CSRF_FORM_FIELD, CSRF_HEADER } from './plugins/csrf.js'

// Errors and logging.
export { CoreError, AppError, ConfigurationError, SignInRefusal, ERRORS, createError, messageOf } from './errors.js'
export type { ErrorCode, KeyedProblem, MessageParameters, RefusalDiagnostics } from './errors.js'
export { createLogger, CENSOR } from './logger.js'

// Keys and state, for tests and tools that build an app by hand.
export { createKeyRing, generateKeyMaterial } from './data-protection/key-ring.js'
export type { KeyRing, SessionKey } from './data-protection/key-ring.js'
// Secrets the app keeps at rest (a runtime provider's client secret), sealed with the key ring.
export { protectSecret, unprotectSecret, MAX_PROTECTED_SECRET_LENGTH } from './data-protection/secrets.js'
export type { DataProtectionApi } from './plugins/data-protection.js'
export type { StateStore, StateStoreStatus, StateKind } from './state/state-store.js'
export { STATE_KINDS } from './state/keys.js'

// The directory of provisioned users and groups (SCIM, issue 41): the store port, the core's
// stores, the SCIM filter parser and evaluation; experimental.
export { MAX_ACTIVE_CONNECTION_TOKENS } from './directory/directory-store.js'
export type {
  DirectoryStore, DirectoryUser, DirectoryUserInput, DirectoryGroup, DirectoryGroupInput, DirectoryGroupChange, DirectoryUpdate, DirectoryGroupUpdate,
  DirectoryUserDeletion, DirectoryQuery, DirectoryPage, ConnectionToken, ConnectionTokenInput, LinkedIdentity, ScimAttributes
} from './directory/directory-store.js'
export { ScimFilterError, DirectoryConflictError, DirectoryInvalidValueError, DirectoryStoreUnavailableError } from './directory/directory-errors.js'
export { SCIM_FILTER_LIMITS, filterAttributes } from './directory/filter.js'
export type { ScimFilter, ScimFilterValue, ScimCompareOperator, ScimPath } from './directory/filter.js'
export { parseScimFilter, parseScimPath } from './directory/filter-parser.js'
export { userMatches, groupMatches } from './directory/filter-evaluation.js'
export { scimAttribute, scimAttributes, foldCase, SCIM_USER_SCHEMA, SCIM_GROUP_SCHEMA, SCIM_ENTERPRISE_USER_SCHEMA } from './directory/attributes.js'
export type { ScimAttributeDefinition, ScimAttributeType, DirectoryResourceType } from './directory/attributes.js'
export type { DirectoryReader, ProvisioningApi, ConnectionTokenInfo } from './plugins/directory.js'
export type { ApiKeysApi } from './plugins/api-keys.js'
export type { ApiKeyService, ApiKeyCreateRequest, ApiKeyView, CreatedApiKey, ApiKeyAuthentication, ApiKeyRefusal, ApiKeyOwnerStatus, ApiKeyManagementError } from './api-keys/api-key-service.js'
export type { IssuedConnectionToken } from './scim/connection-tokens.js'
export { CONNECTION_TOKEN_PREFIX } from './scim/connection-tokens.js'
export type { DeprovisionedIdentity } from './scim/deprovisioned-identities.js'
export { SCIM_BODY_LIMITS } from './scim/request-body.js'
export { PROVISIONING_HOOK_TIMEOUT_MS, MAX_PROVISIONING_REFUSAL_DETAIL_LENGTH } from './scim/provisioning-hook.js'
export type { ProvisioningHook, ProvisioningHookContext, ProvisioningHookResult, ProvisioningGrant, ProvisioningGrantBase, ProvisioningGrantGroup, ProvisioningRefusalStatus } from './scim/provisioning-hook.js'
export type { ProvisioningConnectionConfiguration } from './config/schema.js'
export { MemoryDirectoryStore } from './directory/memory-directory-store.js'
export type { MemoryDirectoryStoreOptions } from './directory/memory-directory-store.js'
export { openDirectoryStore, openEmbeddedDirectoryStore, openPostgresDirectoryStore } from './directory/open-directory-store.js'
export type { DirectoryStoreLog, EmbeddedDirectoryStoreOptions } from './directory/open-directory-store.js'
export type { PostgresDirectoryOptions } from './directory/postgres-directory-database.js'
// API keys (issue 42; experimental, the request path comes next): the key store port beside the
// directory store, the principal of a key, and the key parser (prefix, length, checksum; no I/O).
export { ApiKeyPrincipal } from './api-keys/api-key-principal.js'
export type { ApiKeyFacts } from './api-keys/api-key-principal.js'
export { ApiKeyLimitError } from './api-keys/api-key-store.js'
export type { ApiKeyStore, ApiKeyRecord, ApiKeyInput, ApiKeyOwner, ApiKeyRevocationReason } from './api-keys/api-key-store.js'
export { MemoryApiKeyStore } from './api-keys/memory-api-key-store.js'
export type { MemoryApiKeyStoreOptions } from './api-keys/memory-api-key-store.js'
export { parseApiKey } from './api-keys/api-key-format.js'
export type { ParsedApiKey, MalformedApiKey } from './api-keys/api-key-format.js'
export type { ProvisioningConfiguration } from './config/schema.js'
