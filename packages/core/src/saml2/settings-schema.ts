/**
 * The settings schema of the SAML2 provider type: the contract section
 * `Authentication:Providers:Saml2` (auth-contract.md, "Providers:Saml2") and a named scheme of
 * Type Saml2 (`Authentication:Schemes:<Name>`, with its own metadata and logout paths), with the
 * paths that default from the scheme's name. Built from the helpers of config/schema-parts.ts;
 * composed into the application schema by providers/application-schema.ts. Plain data.
 */
import { Type, type Static } from '@sinclair/typebox'
import { acceptGroupOverage, claimMappings, providerCommon, schemeTypeKey, secret, strings } from '../config/schema-parts.js'
import type { ProviderInstanceBase } from '../config/provider-type.js'

/** @public */
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

/** Authentication:Schemes:<Name> of Type Saml2: the keys of Providers:Saml2, and its own metadata and logout paths. @public */
export const Saml2SchemeSchema = Type.Object({
  Type: schemeTypeKey('Saml2', 'Extension. The scheme\'s protocol: OpenIdConnect, Saml2 or JwtBearer. Required. The other keys are those of Providers:Saml2.'),
  ...Saml2Schema.properties,
  MetadataPath: Type.String({ default: '', description: 'Extension (named SAML2 schemes). Anonymous path of this scheme\'s SP metadata. Default /Saml2/<Name>/Metadata.' }),
  LogoutPath: Type.String({ default: '', description: 'Extension (named SAML2 schemes). Single Logout endpoint of this scheme. Default /Saml2/<Name>/Logout.' })
}, { additionalProperties: false, default: {} })

/** @public */
export type Saml2Configuration = Static<typeof Saml2Schema>
/** @public */
export type Saml2SchemeConfiguration = Static<typeof Saml2SchemeSchema>

/** Anonymous path of the contract Saml2 provider's SP metadata (reserved in providers/configuration-rules.ts RESERVED_PATHS). */
export const SAML2_METADATA_PATH = '/Saml2/Metadata'

/** The contract Saml2 provider's Single Logout endpoint; reserved like the metadata path. */
export const SAML2_LOGOUT_PATH = '/Saml2/Logout'

/** The SAML2 settings with the endpoint paths every SAML2 instance has. @public @experimental */
export type Saml2InstanceSettings = Saml2Configuration & { readonly MetadataPath: string, readonly LogoutPath: string }

/** A SAML2 provider: the contract section, a named scheme or a definition from the provider source. */
export type Saml2Instance = ProviderInstanceBase & { readonly protocol: 'Saml2', readonly settings: Saml2InstanceSettings }

/** The endpoint paths of a named SAML2 scheme unless its path keys say otherwise. */
export function saml2SchemePaths (name: string): Record<string, string> {
  return { ModulePath: `/Saml2/${name}/Acs`, MetadataPath: `/Saml2/${name}/Metadata`, LogoutPath: `/Saml2/${name}/Logout` }
}
