/**
 * samlify (an independent SAML implementation) as the IdP side of the tests: it verifies signed
 * AuthnRequests and LogoutRequests and produces LogoutResponses. Loaded through require with the
 * small typed surface used here, because samlify's bundled @xmldom type declarations pull the DOM
 * library into the whole TypeScript program.
 */
import { createRequire } from 'node:module'

export interface SamlifyEntity {
  readonly entityMeta: { getEntityID: () => string }
}

export interface SamlifyParseResult {
  readonly samlContent: string
  readonly sigAlg: string | null
  readonly extract: {
    readonly issuer?: string
    readonly request?: { readonly id?: string }
    readonly nameID?: string
    readonly sessionIndex?: unknown
    readonly [key: string]: unknown
  }
}

export interface SamlifyRedirectRequest {
  readonly query: Record<string, string>
  readonly octetString: string
}

export interface SamlifyIdentityProvider extends SamlifyEntity {
  parseLoginRequest: (sp: SamlifyEntity, binding: 'redirect', request: SamlifyRedirectRequest) => Promise<SamlifyParseResult>
  parseLogoutRequest: (sp: SamlifyEntity, binding: 'redirect', request: SamlifyRedirectRequest) => Promise<SamlifyParseResult>
  parseLogoutResponse: (sp: SamlifyEntity, binding: 'redirect' | 'post', request: SamlifyRedirectRequest | { readonly body: Record<string, string> }) => Promise<SamlifyParseResult>
  createLogoutResponse: (sp: SamlifyEntity, requestInfo: { extract: { request: { id: string } } }, binding: 'redirect' | 'post', relayState: string) => { context: string, id: string }
}

export interface Samlify {
  setSchemaValidator: (validator: { validate: (xml: string) => Promise<string> }) => void
  IdentityProvider: (settings: Record<string, unknown>) => SamlifyIdentityProvider
  ServiceProvider: (settings: Record<string, unknown>) => SamlifyEntity
}

export const samlify = createRequire(import.meta.url)('samlify') as Samlify

// samlify asks its caller for an XML-schema validator; schema validation is not what these tests
// examine (signatures and message content are), so every document is accepted as schema-valid.
samlify.setSchemaValidator({ validate: async () => 'accepted without schema validation in tests' })

/** The octet string the HTTP-Redirect binding signs: the raw query parameters as sent (SAML Bindings 3.4.4.1). */
export function octetStringOf (location: string, message: 'SAMLRequest' | 'SAMLResponse' = 'SAMLRequest'): string {
  const raw = new URL(location).search.slice(1).split('&')
  const part = (name: string): string | undefined => raw.find((entry) => entry.startsWith(`${name}=`))
  return [message, 'RelayState', 'SigAlg'].map(part).filter((entry): entry is string => entry !== undefined).join('&')
}

export function queryOf (location: string): Record<string, string> {
  return Object.fromEntries(new URL(location).searchParams.entries())
}

export const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect'
export const POST_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST'

/** The IdP's signing identity as samlify sees it, used by the tests to sign and verify. */
export interface IdpIdentity {
  readonly entityId: string
  readonly origin: string
  readonly signingKey: { readonly certificatePem: string, readonly privateKeyPem: string }
}

/** Which of the SP's messages samlify, playing the IdP, wants signed (samlify's own setting names). */
export interface SamlifyWants {
  readonly wantAuthnRequestsSigned?: true
  readonly wantLogoutRequestSigned?: true
  readonly wantLogoutResponseSigned?: true
}

/**
 * samlify playing the test IdP: its entity ID, its signing key and its HTTP-Redirect
 * SingleSignOnService, wanting signed what `wants` names; `extra` adds samlify settings (a
 * SingleLogoutService).
 */
export function samlifyTestIdp (idp: IdpIdentity, wants: SamlifyWants, extra: Record<string, unknown> = {}): SamlifyIdentityProvider {
  return samlify.IdentityProvider({
    entityID: idp.entityId,
    ...wants,
    signingCert: idp.signingKey.certificatePem,
    privateKey: idp.signingKey.privateKeyPem,
    singleSignOnService: [{ Binding: REDIRECT_BINDING, Location: `${idp.origin}/sso` }],
    ...extra
  })
}

/**
 * samlify playing the test IdP for Single Logout: it wants signed LogoutRequests and answers at
 * `sloLocation` (HTTP-Redirect). {@link withSingleLogoutService} turns the IdP's metadata into the
 * one advertising that endpoint, as served at a metadata path of the test IdP.
 */
export function samlifyLogoutIdp (idp: IdpIdentity, sloLocation: string): SamlifyIdentityProvider {
  return samlifyTestIdp(idp, { wantLogoutRequestSigned: true }, { singleLogoutService: [{ Binding: REDIRECT_BINDING, Location: sloLocation }] })
}

/** IdP metadata with a SingleLogoutService (HTTP-Redirect unless `binding` says otherwise) at `sloLocation`. */
export function withSingleLogoutService (metadata: string, sloLocation: string, binding = REDIRECT_BINDING): string {
  return metadata.replace('<md:SingleSignOnService', `<md:SingleLogoutService Binding="${binding}" Location="${sloLocation}"/><md:SingleSignOnService`)
}
