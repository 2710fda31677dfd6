/**
 * Startup validation rules (src/configuration.ts RULES: config/rules.ts and the rules of the
 * provider types, key ring and state store): each rule's exact sentence naming the full colon
 * path, its negative case, and collect-all reporting.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { RULES } from '../../src/configuration.js'
import { VENDOR_NAMES } from '../../src/oauth/settings-schema.js'
import { loadTestConfiguration } from '../helpers/app.js'

type Settings = NonNullable<Parameters<typeof loadTestConfiguration>[0]>['settings']

const A = 'ProjectTemplate:Authentication'
const Z = 'ProjectTemplate:Authorization'
const P = `${A}:Providers`
/** An enabled named OpenID Connect scheme that passes every rule. */
const OIDC_SCHEME = { Type: 'OpenIdConnect', Authority: 'https://idp.example.test', ClientId: 'app', ClientSecret: 'oidc-client-secret' }
const OPEN_POSTURE = { Authentication: { Enabled: false, Cookie: { Enabled: false } }, Authorization: { RequireAuthenticatedUserByDefault: false } }
const OIDC_VALID = { Enabled: true, Authority: 'https://idp.example.test', ClientId: 'client', ClientSecret: 'secret-value' }
const VENDOR_VALID = {
  Enabled: true,
  ClientId: 'client',
  ClientSecret: 'secret-value',
  AuthorizationEndpoint: 'https://vendor.example.test/authorize',
  TokenEndpoint: 'https://vendor.example.test/token',
  UserInformationEndpoint: 'https://vendor.example.test/user'
}
const STRONG_KEY = Buffer.alloc(32, 7).toString('base64')

interface RuleCase {
  readonly name: string
  readonly settings: Settings
  readonly nodeEnv?: string
  readonly messages: readonly string[]
}

const cases: RuleCase[] = [
  // Posture (contract "States and transitions" rule 3).
  {
    name: 'authentication disabled while the authenticated fallback is on is rejected, naming both keys',
    settings: { Authentication: { Enabled: false, Cookie: { Enabled: false } } },
    messages: [`${A}:Enabled is false while ${Z}:RequireAuthenticatedUserByDefault is true; set ${Z}:RequireAuthenticatedUserByDefault to false to run without authentication, or enable authentication.`]
  },
  { name: 'the open posture with the fallback off is accepted', settings: OPEN_POSTURE, messages: [] },
  {
    name: 'the cookie session may be off only when authentication is off',
    settings: { Authentication: { Cookie: { Enabled: false } } },
    messages: [`${A}:Cookie:Enabled may be false only when ${A}:Enabled is false; the session is the cookie.`]
  },
  {
    name: 'an enabled provider needs application authentication',
    settings: { ...OPEN_POSTURE, Authentication: { Enabled: false, Cookie: { Enabled: false }, Providers: { OpenIdConnect: OIDC_VALID } } },
    messages: [`${P}:OpenIdConnect:Enabled is true while ${A}:Enabled is false; a provider needs application authentication.`]
  },
  // Schemes.
  { name: 'DefaultScheme must be Cookies', settings: { Authentication: { DefaultScheme: 'Bearer' } }, messages: [`${A}:DefaultScheme must be Cookies.`] },
  { name: 'DefaultSignInScheme must be Cookies', settings: { Authentication: { DefaultSignInScheme: 'OpenIdConnect' } }, messages: [`${A}:DefaultSignInScheme must be Cookies.`] },
  {
    name: 'DefaultChallengeScheme may not name a disabled provider',
    settings: { Authentication: { DefaultChallengeScheme: 'OpenIdConnect' } },
    messages: [`${A}:DefaultChallengeScheme must be Cookies or the scheme of an enabled provider (Cookies).`]
  },
  {
    name: 'DefaultChallengeScheme may name an enabled provider',
    settings: { Authentication: { DefaultChallengeScheme: 'OpenIdConnect', Providers: { OpenIdConnect: OIDC_VALID } } },
    messages: []
  },
  {
    name: 'DefaultChallengeScheme lists the enabled providers when it names another one',
    settings: { Authentication: { DefaultChallengeScheme: 'VendorA', Providers: { OpenIdConnect: OIDC_VALID } } },
    messages: [`${A}:DefaultChallengeScheme must be Cookies or the scheme of an enabled provider (Cookies, OpenIdConnect).`]
  },
  // Cookie override.
  {
    name: 'AllowInsecureHttp is rejected in Production',
    settings: { Authentication: { Cookie: { AllowInsecureHttp: true } } },
    messages: [`${A}:Cookie:AllowInsecureHttp may be true only in Development (current environment: Production).`]
  },
  {
    name: 'AllowInsecureHttp is rejected in Staging',
    settings: { Authentication: { Cookie: { AllowInsecureHttp: true } } },
    nodeEnv: 'staging',
    messages: [`${A}:Cookie:AllowInsecureHttp may be true only in Development (current environment: Staging).`]
  },
  { name: 'AllowInsecureHttp is accepted in Development', settings: { Authentication: { Cookie: { AllowInsecureHttp: true } } }, nodeEnv: 'development', messages: [] },
  // Claim types and values.
  { name: 'RoleClaimType must not be empty', settings: { Authorization: { RoleClaimType: '' } }, messages: [`${Z}:RoleClaimType must not be empty.`] },
  { name: 'PermissionClaimType must not be whitespace', settings: { Authorization: { PermissionClaimType: '  ' } }, messages: [`${Z}:PermissionClaimType must not be empty.`] },
  { name: 'AdministratorRoles needs a non-empty value', settings: { Authorization: { AdministratorRoles: ['', ' '] } }, messages: [`${Z}:AdministratorRoles must contain at least one non-empty value.`] },
  { name: 'ManageApplicationPermissions needs a non-empty value', settings: { Authorization: { ManageApplicationPermissions: [''] } }, messages: [`${Z}:ManageApplicationPermissions must contain at least one non-empty value.`] },
  { name: 'one non-empty value among empty ones is enough', settings: { Authorization: { AdministratorRoles: ['', 'Admin'] } }, messages: [] },
  // Schemes of the provider slots are fixed.
  { name: 'a provider Scheme must equal its provider name', settings: { Authentication: { Providers: { VendorB: { Scheme: 'Other' } } } }, messages: [`${P}:VendorB:Scheme must equal the provider name (VendorB).`] },
  // OpenID Connect.
  {
    name: 'an enabled OpenID Connect provider needs Authority, ClientId and ClientSecret (placeholders count as missing)',
    settings: { Authentication: { Providers: { OpenIdConnect: { Enabled: true } } } },
    messages: [
      `${P}:OpenIdConnect:Authority is required when the provider is enabled.`,
      `${P}:OpenIdConnect:ClientId is required when the provider is enabled.`,
      `${P}:OpenIdConnect:ClientSecret is required when the provider is enabled.`
    ]
  },
  { name: 'a complete OpenID Connect provider is accepted', settings: { Authentication: { Providers: { OpenIdConnect: OIDC_VALID } } }, messages: [] },
  {
    name: 'an http Authority is rejected outside Development even on loopback',
    settings: { Authentication: { Providers: { OpenIdConnect: { ...OIDC_VALID, Authority: 'http://localhost:8080' } } } },
    messages: [`${P}:OpenIdConnect:Authority must be an absolute https URL (http is allowed only for a loopback host in Development).`]
  },
  {
    name: 'an http loopback Authority is accepted in Development',
    settings: { Authentication: { Providers: { OpenIdConnect: { ...OIDC_VALID, Authority: 'http://127.0.0.1:8080' } } } },
    nodeEnv: 'development',
    messages: []
  },
  {
    name: 'an http non-loopback Authority is rejected in Development',
    settings: { Authentication: { Providers: { OpenIdConnect: { ...OIDC_VALID, Authority: 'http://idp.example.test' } } } },
    nodeEnv: 'development',
    messages: [`${P}:OpenIdConnect:Authority must be an absolute https URL (http is allowed only for a loopback host in Development).`]
  },
  {
    name: 'a relative Authority is rejected',
    settings: { Authentication: { Providers: { OpenIdConnect: { ...OIDC_VALID, Authority: 'idp.example.test' } } } },
    messages: [`${P}:OpenIdConnect:Authority must be an absolute https URL.`]
  },
  {
    name: 'ResponseType must be code',
    settings: { Authentication: { Providers: { OpenIdConnect: { ...OIDC_VALID, ResponseType: 'id_token' } } } },
    messages: [`${P}:OpenIdConnect:ResponseType must be code (the authorization code flow with PKCE is the only supported response type).`]
  },
  {
    name: 'Scopes must include openid',
    settings: { Authentication: { Providers: { OpenIdConnect: { ...OIDC_VALID, Scopes: ['profile'] } } } },
    messages: [`${P}:OpenIdConnect:Scopes must include openid.`]
  },
  {
    name: 'a symmetric ID token algorithm is rejected',
    settings: { Authentication: { Providers: { OpenIdConnect: { ...OIDC_VALID, IdTokenSignedResponseAlg: 'HS256' } } } },
    messages: [`${P}:OpenIdConnect:IdTokenSignedResponseAlg must be an asymmetric JWS algorithm (RS256, PS256, ES256, EdDSA, ...).`]
  },
  // SAML2.
  {
    name: 'an enabled SAML2 provider needs EntityId and MetadataUrl',
    settings: { Authentication: { Providers: { Saml2: { Enabled: true } } } },
    messages: [`${P}:Saml2:EntityId is required when the provider is enabled.`, `${P}:Saml2:MetadataUrl is required when the provider is enabled.`]
  },
  {
    name: 'an http MetadataUrl is rejected',
    settings: { Authentication: { Providers: { Saml2: { Enabled: true, EntityId: 'https://sp.example.test', MetadataUrl: 'http://idp.example.test/metadata' } } } },
    messages: [`${P}:Saml2:MetadataUrl must be an absolute https URL (http is allowed only for a loopback host in Development).`]
  },
  {
    name: 'SAML2 without metadata needs the IdP entity id, SSO URL and a certificate',
    settings: { Authentication: { Providers: { Saml2: { Enabled: true, EntityId: 'https://sp.example.test', LoadMetadata: false } } } },
    messages: [
      `${P}:Saml2:IdpEntityId is required when the provider is enabled.`,
      `${P}:Saml2:IdpSingleSignOnUrl is required when the provider is enabled.`,
      `${P}:Saml2:IdpSigningCertificates must contain at least one certificate when ${P}:Saml2:LoadMetadata is false.`
    ]
  },
  {
    name: 'a complete SAML2 provider is accepted',
    settings: { Authentication: { Providers: { Saml2: { Enabled: true, EntityId: 'https://sp.example.test', MetadataUrl: 'https://idp.example.test/metadata' } } } },
    messages: []
  },
  // Vendors.
  ...VENDOR_NAMES.map((vendor): RuleCase => ({
    name: `an enabled ${vendor} needs its client and endpoints`,
    settings: { Authentication: { Providers: { [vendor]: { Enabled: true } } } },
    messages: ['ClientId', 'ClientSecret', 'AuthorizationEndpoint', 'TokenEndpoint', 'UserInformationEndpoint']
      .map((key) => `${P}:${vendor}:${key} is required when the provider is enabled.`)
  })),
  { name: 'a complete vendor is accepted', settings: { Authentication: { Providers: { VendorC: VENDOR_VALID } } }, messages: [] },
  {
    name: 'a vendor endpoint must be https',
    settings: { Authentication: { Providers: { VendorA: { ...VENDOR_VALID, TokenEndpoint: 'http://vendor.example.test/token' } } } },
    messages: [`${P}:VendorA:TokenEndpoint must be an absolute https URL (http is allowed only for a loopback host in Development).`]
  },
  // Callback paths.
  {
    name: 'a CallbackPath must start with /',
    settings: { Authentication: { Providers: { VendorA: { ...VENDOR_VALID, CallbackPath: 'signin-vendora' } } } },
    messages: [`${P}:VendorA:CallbackPath must start with a single / and contain only unreserved URL characters.`]
  },
  {
    name: 'a protocol-relative CallbackPath is rejected',
    settings: { Authentication: { Providers: { VendorA: { ...VENDOR_VALID, CallbackPath: '//evil.example/cb' } } } },
    messages: [`${P}:VendorA:CallbackPath must start with a single / and contain only unreserved URL characters.`]
  },
  {
    name: 'a ModulePath must start with /',
    settings: { Authentication: { Providers: { Saml2: { Enabled: true, EntityId: 'https://sp.example.test', MetadataUrl: 'https://idp.example.test/m', ModulePath: 'Saml2/Acs' } } } },
    messages: [`${P}:Saml2:ModulePath must start with a single / and contain only unreserved URL characters.`]
  },
  {
    name: 'two providers may not share a callback path (case-insensitive)',
    settings: { Authentication: { Providers: { VendorA: { ...VENDOR_VALID, CallbackPath: '/signin' }, VendorB: { ...VENDOR_VALID, CallbackPath: '/SignIn' } } } },
    messages: [`${P}:VendorB:CallbackPath collides with ${P}:VendorA:CallbackPath.`]
  },
  {
    name: 'a callback path may not lie inside an application route area',
    settings: { Authentication: { Providers: { VendorA: { ...VENDOR_VALID, CallbackPath: '/Account/callback' } } } },
    messages: [`${P}:VendorA:CallbackPath collides with a route of the application.`]
  },
  {
    name: 'a callback path may not be the starter page',
    settings: { Authentication: { Providers: { OpenIdConnect: { ...OIDC_VALID, CallbackPath: '/' } } } },
    messages: [`${P}:OpenIdConnect:CallbackPath collides with a route of the application.`]
  },
  {
    name: 'a callback path may not be a health probe',
    settings: { Authentication: { Providers: { OpenIdConnect: { ...OIDC_VALID, CallbackPath: '/health/ready' } } } },
    messages: [`${P}:OpenIdConnect:CallbackPath collides with a route of the application.`]
  },
  {
    name: 'disabled providers may keep colliding or placeholder paths',
    settings: { Authentication: { Providers: { VendorA: { CallbackPath: '/Account/Login' }, VendorB: { CallbackPath: 'nonsense' } } } },
    messages: []
  },
  // Extensions.
  {
    name: 'forwarded headers need a known proxy',
    settings: { ForwardedHeaders: { Enabled: true } },
    messages: ['ProjectTemplate:ForwardedHeaders:KnownProxies must list at least one proxy address when ProjectTemplate:ForwardedHeaders:Enabled is true.']
  },
  {
    name: 'an enabled provider needs a public origin outside Development',
    settings: { Hosting: { PublicOrigin: '' }, Authentication: { Providers: { OpenIdConnect: OIDC_VALID } } },
    nodeEnv: 'staging',
    messages: ['ProjectTemplate:Hosting:PublicOrigin is required outside Development when an external provider is enabled; every redirect_uri and SAML endpoint URL is built from it.']
  },
  {
    name: 'in Development the request host may stand in for the public origin',
    settings: { Hosting: { PublicOrigin: '' }, Authentication: { Providers: { OpenIdConnect: { ...OIDC_VALID, Authority: 'http://127.0.0.1:9999' } } } },
    nodeEnv: 'development',
    messages: []
  },
  { name: 'without a provider no public origin is needed', settings: { Hosting: { PublicOrigin: '' } }, messages: [] },
  // Issue 40, item 4: a DPoP proof's htu and the resource metadata never come from a Host the client chose.
  {
    name: 'a JwtBearer scheme needs a public origin, or allowed hosts without *, outside Development',
    settings: { Hosting: { PublicOrigin: '', AllowedHosts: ['*'] }, Authentication: { Schemes: { Api: { Type: 'JwtBearer', Authority: 'https://idp.example.test', Audiences: ['api://orders'] } } } },
    nodeEnv: 'staging',
    messages: ['ProjectTemplate:Hosting:PublicOrigin (or ProjectTemplate:Hosting:AllowedHosts without *) is required outside Development when a JwtBearer scheme is enabled; DPoP proofs and the protected-resource metadata name the API\'s origin, which must not come from the request\'s Host header.']
  },
  {
    name: 'a JwtBearer scheme may rely on allowed hosts outside Development',
    settings: { Hosting: { PublicOrigin: '', AllowedHosts: ['api.example.test', '*.example.test'] }, Authentication: { Schemes: { Api: { Type: 'JwtBearer', Authority: 'https://idp.example.test', Audiences: ['api://orders'] } } } },
    nodeEnv: 'staging',
    messages: []
  },
  {
    name: 'in Development a JwtBearer scheme may use the request host',
    settings: { Hosting: { PublicOrigin: '' }, Authentication: { Schemes: { Api: { Type: 'JwtBearer', Authority: 'https://idp.example.test', Audiences: ['api://orders'] } } } },
    nodeEnv: 'development',
    messages: []
  },
  ...['https://app.example.test/path', 'https://user:pw@app.example.test', 'https://app.example.test?x=1', 'https://app.example.test/#f', 'app.example.test', 'ftp://app.example.test', 'http://app.example.test', 'javascript:alert(1)'].map((value) => ({
    name: `PublicOrigin ${value} is not an https origin`,
    settings: { Hosting: { PublicOrigin: value } },
    messages: ['ProjectTemplate:Hosting:PublicOrigin must be an absolute https origin such as https://app.example.com (scheme, host and optional port; no path, query or fragment; http only in Development).']
  })),
  { name: 'PublicOrigin may carry a port and a trailing slash', settings: { Hosting: { PublicOrigin: 'https://app.example.test:8443/' } }, messages: [] },
  { name: 'PublicOrigin may be http in Development', settings: { Hosting: { PublicOrigin: 'http://localhost:5000' } }, nodeEnv: 'development', messages: [] },
  {
    name: 'AllowedHosts entries are host names, *.suffix patterns or *',
    settings: { Hosting: { AllowedHosts: ['app.example.test', '*.example.test', '*', '10.0.0.1', '[::1]', 'https://app.example.test', 'app.example.test:443', 'a b'] } },
    messages: [5, 6, 7].map((index) => `ProjectTemplate:Hosting:AllowedHosts:${index} must be a host name without scheme or port (app.example.com), a *.example.com pattern, or *.`)
  },
  {
    name: 'the header timeout may not exceed the request timeout',
    settings: { Hosting: { RequestTimeoutSeconds: 5, HeadersTimeoutSeconds: 6 } },
    messages: ['ProjectTemplate:Hosting:HeadersTimeoutSeconds must not exceed ProjectTemplate:Hosting:RequestTimeoutSeconds.']
  },
  {
    name: 'a KnownProxies entry must be an address or range (the value is not repeated)',
    settings: { ForwardedHeaders: { Enabled: true, KnownProxies: ['10.0.0.1', '10.0.0.300'] } },
    messages: ['ProjectTemplate:ForwardedHeaders:KnownProxies:1 must be an IP address, an address with a prefix length or IPv4 netmask (10.0.0.0/8), or one of loopback, linklocal, uniquelocal.']
  },
  {
    name: 'an unreadable IdpSigningCertificates entry is refused, by index',
    settings: { Authentication: { Providers: { Saml2: { Enabled: true, EntityId: 'https://sp.example.test', LoadMetadata: false, IdpEntityId: 'https://idp.example.test', IdpSingleSignOnUrl: 'https://idp.example.test/sso', IdpSigningCertificates: ['', 'not a certificate'] } } } },
    messages: [`${P}:Saml2:IdpSigningCertificates:1 is not a PEM or base64 DER X.509 certificate.`]
  },
  {
    name: 'the application discriminator is at most 200 characters',
    settings: { DataProtection: { ApplicationDiscriminator: 'd'.repeat(201) } },
    messages: ['ProjectTemplate:DataProtection:ApplicationDiscriminator must be at most 200 characters.']
  },
  {
    name: 'a data-protection key must be base64 of at least 32 bytes',
    settings: { DataProtection: { Keys: [STRONG_KEY, Buffer.alloc(16, 1).toString('base64'), 'not base64!'] } },
    messages: ['ProjectTemplate:DataProtection:Keys:1 must be base64 of at least 32 random bytes.', 'ProjectTemplate:DataProtection:Keys:2 must be base64 of at least 32 random bytes.']
  },
  {
    name: 'a provisioning connection names its tenant, maps groups as group=role, and shares neither tenant nor scheme with another (issue 41)',
    settings: { Authentication: { Schemes: { Oidc: OIDC_SCHEME } }, Provisioning: { Connections: { Contoso: { GroupRoles: ['Admins'] }, Northwind: { Tenant: 'nw', Schemes: ['Oidc'] }, Other: { Tenant: 'nw', Schemes: ['Oidc'] } } } },
    messages: [
      'ProjectTemplate:Provisioning:Connections:Contoso:Tenant is required: the application tenant this connection provisions.',
      'ProjectTemplate:Provisioning:Connections:Contoso:GroupRoles:0 must be "<group externalId or displayName>=<role>".',
      'ProjectTemplate:Provisioning:Connections:Other:Tenant names the tenant of connection Northwind; a tenant has one connection.',
      'ProjectTemplate:Provisioning:Connections:Other:Schemes:0 names a scheme of connection Northwind; a scheme belongs to one connection.'
    ]
  },
  {
    name: 'a provisioning connection\'s Schemes name enabled schemes that sign users in: not a disabled one, a JwtBearer one or an unknown one (issue 41)',
    settings: {
      Authentication: { Schemes: { Oidc: OIDC_SCHEME, Off: { ...OIDC_SCHEME, Enabled: false, ClientId: 'other' }, Api: { Type: 'JwtBearer', Authority: 'https://idp.example.test', Audiences: ['api://orders'] } } },
      Provisioning: { Connections: { Northwind: { Tenant: 'nw', Schemes: ['Oidc', 'Off', 'Api', 'Nope'] } } }
    },
    messages: [1, 2, 3].map((index) => `ProjectTemplate:Provisioning:Connections:Northwind:Schemes:${index} names no enabled sign-in scheme; list the name of an enabled provider that signs users in.`)
  }
]

describe('startup validation rules', () => {
  for (const { name, settings, nodeEnv, messages } of cases) {
    test(name, () => {
      // Every case names the public origin, which an enabled provider needs outside Development (tested below on its own).
      const hosting = (settings as { Hosting?: Record<string, string | number | string[]> } | undefined)?.Hosting ?? {}
      const withOrigin = { ...settings, Hosting: { PublicOrigin: 'https://app.example.test', ...hosting } }
      const loaded = loadTestConfiguration({ settings: withOrigin, ...(nodeEnv === undefined ? {} : { nodeEnv }) })
      assert.deepEqual(loaded.errors.map((problem) => problem.message), messages)
      for (const problem of loaded.errors) assert.ok(problem.message.startsWith(problem.key), `${problem.message} starts with its key ${problem.key}`)
    })
  }

  test('the default configuration passes every rule', () => {
    assert.deepEqual(loadTestConfiguration().errors, [])
    assert.equal(RULES.length, 34)
  })

  test('every failure is collected and reported together, in rule order', () => {
    const loaded = loadTestConfiguration({
      settings: {
        Authentication: {
          Enabled: false,
          Cookie: { Enabled: false, AllowInsecureHttp: true, ExpireMinutes: 'often' },
          Providers: { OpenIdConnect: { Enabled: true, ClientSecret: 'PLANTED-SECRET-7f3a9c' } }
        },
        Authorization: { RoleClaimType: '' }
      }
    })
    assert.deepEqual(loaded.errors.map((problem) => problem.message), [
      `${A}:Cookie:ExpireMinutes must be an integer from 1 to 43200.`,
      `${A}:Enabled is false while ${Z}:RequireAuthenticatedUserByDefault is true; set ${Z}:RequireAuthenticatedUserByDefault to false to run without authentication, or enable authentication.`,
      `${P}:OpenIdConnect:Enabled is true while ${A}:Enabled is false; a provider needs application authentication.`,
      `${A}:Cookie:AllowInsecureHttp may be true only in Development (current environment: Production).`,
      `${Z}:RoleClaimType must not be empty.`,
      `${P}:OpenIdConnect:Authority is required when the provider is enabled.`,
      `${P}:OpenIdConnect:ClientId is required when the provider is enabled.`
    ])
    assert.ok(!JSON.stringify(loaded.errors).includes('PLANTED-SECRET-7f3a9c'))
  })
})
