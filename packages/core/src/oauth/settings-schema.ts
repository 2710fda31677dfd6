/**
 * The settings schema of the OAuth 2.0 vendor slots (auth-contract.md, "Providers:VendorA,
 * Providers:VendorB, Providers:VendorC"): one contract section per slot, no named schemes. Built
 * from the helpers of config/schema-parts.ts; composed into the application schema by
 * providers/application-schema.ts. Plain data.
 */
import { Type, type Static } from '@sinclair/typebox'
import { acceptGroupOverage, choice, claimMappings, providerCommon, secret, strings } from '../config/schema-parts.js'
import type { ProviderInstanceBase } from '../config/provider-type.js'

/**
 * The OAuth 2.0 vendor slots. Adding a name here adds its configuration section (callback path
 * `/signin-<name in lower case>`), its startup rules (oauth/settings-rules.ts), its registration
 * (plugins/providers/open-provider.ts) and its handler slot (plugins/providers/oauth-vendors.ts, where
 * the compiler asks for its entry); test/config/provider-names.test.ts checks each of them.
 *
 * @public
 */
export const VENDOR_NAMES = ['VendorA', 'VendorB', 'VendorC'] as const
/** @public */
export type VendorName = (typeof VENDOR_NAMES)[number]

/** Scopes each vendor slot requests by default. */
const VENDOR_DEFAULT_SCOPES: Readonly<Record<VendorName, readonly string[]>> = {
  VendorA: [],
  VendorB: ['profile', 'email'],
  VendorC: ['profile', 'email']
}

/** Extension keys shared by the OAuth 2.0 vendor slots (docs/providers/oauth.md). */
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

/** The TypeBox schema of one vendor slot (Providers:VendorA, VendorB, VendorC). @public */
export type VendorSchema = ReturnType<typeof vendor>

/** One configuration section per vendor slot, named after it. */
export function vendorSections (): Record<VendorName, VendorSchema> {
  return Object.fromEntries(VENDOR_NAMES.map((name) => [name, vendor(name, `/signin-${name.toLowerCase()}`, VENDOR_DEFAULT_SCOPES[name])])) as Record<VendorName, VendorSchema>
}

/** @public */
export type VendorConfiguration = Static<VendorSchema>

/** An OAuth 2.0 vendor slot's provider (contract sections only). */
export type VendorInstance = ProviderInstanceBase & { readonly protocol: 'OAuth', readonly vendor: VendorName, readonly settings: VendorConfiguration }

/** Whether `name` is a vendor slot. */
export const isVendorName = (name: string): name is VendorName => (VENDOR_NAMES as readonly string[]).includes(name)
