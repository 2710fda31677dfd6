/**
 * The SP settings as plain values and the node-saml options every step builds from them: every
 * security-relevant node-saml default set explicitly, InResponseTo answered from the flow's
 * correlation cookie only.
 */
import { type CacheProvider, type SamlConfig } from '@node-saml/node-saml'
import type { IdentityProviderDescription } from './metadata.js'
import type { ServiceProviderDecryption, ServiceProviderSigning } from './keys.js'

/** The Providers:Saml2 settings this module needs, as plain values. */
export interface Saml2ServiceProviderSettings {
  readonly entityId: string
  readonly requireSignedAssertions: boolean
  readonly validateCertificates: boolean
  readonly allowUnsolicitedResponses: boolean
  readonly clockSkewSeconds: number
  /** Colon path of the provider's section under the root (a named scheme's own), for log lines that name a setting. */
  readonly sectionKey: string
  /** SP signing key: AuthnRequests and LogoutRequests are signed (HTTP-Redirect SigAlg/Signature). */
  readonly signing?: ServiceProviderSigning | undefined
  /** SP decryption keys: EncryptedAssertion is accepted; without them it is refused. */
  readonly decryption?: ServiceProviderDecryption | undefined
}

/** Answers node-saml's InResponseTo lookups from the correlation cookie's request id only. */
export class CorrelationCacheProvider implements CacheProvider {
  readonly #requestId: string | undefined
  readonly #issuedAt = new Date().toISOString()

  constructor (requestId: string | undefined) {
    this.#requestId = requestId
  }

  async saveAsync (): Promise<null> {
    return null
  }

  async getAsync (key: string): Promise<string | null> {
    return this.#requestId !== undefined && key === this.#requestId ? this.#issuedAt : null
  }

  async removeAsync (key: string | null): Promise<string | null> {
    return key
  }
}

export function baseOptions (settings: Saml2ServiceProviderSettings, idp: IdentityProviderDescription, acsUrl: string, idpCert: string[]): SamlConfig {
  // Every security-relevant node-saml default is set explicitly.
  return {
    issuer: settings.entityId,
    callbackUrl: acsUrl,
    entryPoint: idp.singleSignOnUrl,
    idpIssuer: idp.entityId,
    idpCert,
    audience: settings.entityId,
    wantAssertionsSigned: settings.requireSignedAssertions,
    // At least one signature is always required: node-saml insists on a signed assertion
    // whenever the response itself is not signed.
    wantAuthnResponseSigned: false,
    signatureAlgorithm: 'sha256',
    digestAlgorithm: 'sha256',
    acceptedClockSkewMs: settings.clockSkewSeconds * 1000,
    maxAssertionAgeMs: 0,
    authnRequestBinding: 'HTTP-Redirect',
    identifierFormat: null,
    disableRequestedAuthnContext: true,
    forceAuthn: false,
    passive: false,
    signMetadata: false,
    ...(settings.signing === undefined ? {} : { privateKey: settings.signing.privateKeyPem, publicCert: settings.signing.certificatesPem[0] })
  }
}
